"""Errors split by who fixes them: a ConfigError is the user's to fix, anything else is a bug."""

from __future__ import annotations


class ConfigError(Exception):
    """A mistake in a stack file or in lint input: one line per problem, no traceback.

    Each line names the file, the key path and what is expected, e.g.
    ``stacks/Pulumi.dev.yaml: platform.operator.scale: unknown key (expected one of: ...)``.
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))
