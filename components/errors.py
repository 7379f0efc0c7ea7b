"""Errors split by who fixes them: a ConfigError is the user's to fix, anything else is a bug."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def one_line(text: str) -> str:
    """``text`` with control characters (a newline in a key the user wrote) escaped: one line stays one."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class ConfigError(Exception):
    """A mistake in a stack file or in lint input: one line per problem, no traceback.

    Each line names the file, the key path and what is expected, e.g.
    ``stacks/Pulumi.dev.yaml: platform.operator.scale: unknown key (expected one of: ...)``.
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = [one_line(line) for line in lines]
        super().__init__("\n".join(self.lines))
