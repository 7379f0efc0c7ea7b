"""The offline engine's command line: ``python -m tools {preview,lint,policy-config}``.

Results on stdout, diagnostics on stderr. Exit codes: 0 clean, 1 schema errors or mandatory
violations, 2 config/usage/IO errors, 101 internal error (traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from pathlib import Path

from components.errors import ConfigError, one_line
from components.upstream import DEFAULT_KUBERNETES_VERSION
from policies.rules.base import ENVIRONMENTS

EXIT_OK, EXIT_FINDINGS, EXIT_CONFIG, EXIT_INTERNAL = 0, 1, 2, 101
CRDS_HELP = (
    "a folder of upstream CRDs that take precedence over the project's schemas (default: $KUBERAY_PLATFORM_CRDS)"
)
POLICY_CONFIG_HELP = "policy levels and tunables (default: policies/config/<env>.json, as for pulumi preview)"


def _preview(args: argparse.Namespace) -> int:
    from tools.preview import run_preview, write_outputs

    result = run_preview(
        args.stack,
        crd_dir=Path(args.crds) if args.crds else None,
        stack_path=Path(args.stack_file) if args.stack_file else None,
        policy_config=args.policy_config,
        baseline=Path(args.baseline) if args.baseline else None,
    )
    out_dir = Path(args.out) / args.stack
    write_outputs(result, out_dir)
    for err in result.schema_errors:
        print(f"schema: {err}", file=sys.stderr)
    for v in result.violations:
        print(f"policy: {v.kind}/{v.namespace or '-'}/{v.name}: {v.policy}: {v.message} [{v.enforcement}]")
    print(
        f"{args.stack}: {len(result.manifests)} objects, {len(result.schema_errors)} schema errors, "
        f"{len(result.mandatory)} mandatory / {len(result.violations) - len(result.mandatory)} advisory "
        f"findings; wrote {out_dir}/manifests, plan.json, summary.md"
    )
    return result.exit_code


def _lint(args: argparse.Namespace) -> int:
    from tools.lint import lint_files, render

    findings, problems = lint_files(
        args.files,
        args.env,
        args.policy_config,
        kubernetes_version=args.kubernetes_version,
        crd_dir=Path(args.crds) if args.crds else None,
    )
    text = render(findings, args.format)
    if text:
        print(text)
    for line in problems:
        print(one_line(line), file=sys.stderr)
    if problems:
        return EXIT_CONFIG
    return EXIT_FINDINGS if any(v.enforcement == "mandatory" for _, v in findings) else EXIT_OK


def _policy_config(args: argparse.Namespace) -> int:
    from policies.pack import write_policy_configs

    for path in write_policy_configs():
        print(path)
    return EXIT_OK


def _schemas(args: argparse.Namespace) -> int:
    from tools.schema_sync import sync

    problems = sync(mirror=Path(args.mirror) if args.mirror else None, check=args.check)
    for line in problems:
        print(line, file=sys.stderr)
    if args.check:
        print(
            "schemas/: up to date with schemas/pins.yaml"
            if not problems
            else f"schemas/: {len(problems)} difference(s)"
        )
    else:
        print("schemas/: written from schemas/pins.yaml")
    return EXIT_FINDINGS if problems else EXIT_OK


def _pulumi_preview(args: argparse.Namespace) -> int:
    from tools.real_engine import run

    return run(args)


def _new_stack(args: argparse.Namespace) -> int:
    from tools.new_stack import run

    return run(args.name, args.source, args.environment)


def _stack_schema(args: argparse.Namespace) -> int:
    from tools.stack_schema import run

    return run(check=args.check)


def _toolchain(args: argparse.Namespace) -> int:
    from tools.toolchain import ToolchainError, ensure

    try:
        ensure(log=lambda line: print(line, file=sys.stderr), groups=tuple(args.group or ("engine", "checks")))
    except ToolchainError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_CONFIG
    return EXIT_OK


def _key_and_variable(text: str) -> tuple[str, str]:
    key, sep, variable = text.partition("=")
    if not sep or not key or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
        raise argparse.ArgumentTypeError(f"expected KEY=ENV_VARIABLE (got {text!r})")
    return key, variable


def _minor_version(text: str) -> str:
    if not re.fullmatch(r"\d+\.\d+", text):
        raise argparse.ArgumentTypeError(f"expected a minor version such as 1.33 (got {text!r})")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks for internal errors")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("preview", help="offline preview of a stack")
    p.add_argument("--stack", required=True)
    p.add_argument("--out", default="out")
    p.add_argument("--stack-file", help="read this file instead of stacks/Pulumi.<stack>.yaml")
    p.add_argument("--policy-config", help=POLICY_CONFIG_HELP)
    p.add_argument("--crds", help=CRDS_HELP)
    p.add_argument(
        "--baseline",
        help="the previous version's plan.json (or its out/<stack> folder): list and judge the stateful "
        "resources this version deletes, replaces or renames",
    )
    p.set_defaults(func=_preview)
    p = sub.add_parser("lint", help="run the policy rules over YAML files or folders")
    p.add_argument("--env", choices=ENVIRONMENTS, default="prod")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--policy-config", help=POLICY_CONFIG_HELP)
    p.add_argument(
        "--kubernetes-version",
        type=_minor_version,
        default=DEFAULT_KUBERNETES_VERSION,
        help=f"validate core kinds for this minor version (default {DEFAULT_KUBERNETES_VERSION})",
    )
    p.add_argument("--crds", help=CRDS_HELP)
    p.add_argument("files", nargs="+")
    p.set_defaults(func=_lint)
    p = sub.add_parser("policy-config", help="regenerate policies/config/<env>.json")
    p.set_defaults(func=_policy_config)
    p = sub.add_parser("schemas", help="extract the pinned upstream schemas into schemas/ (make schemas)")
    p.add_argument("--from", dest="mirror", help="a local mirror of the upstream files (else download the pinned URLs)")
    p.add_argument("--check", action="store_true", help="compare with schemas/ instead of writing (exit 1 if stale)")
    p.set_defaults(func=_schemas)
    p = sub.add_parser("new-stack", help="a new stack file from an existing one (make new-stack)")
    p.add_argument("--name", required=True, help="the new stack: stacks/Pulumi.<name>.yaml")
    p.add_argument("--from", dest="source", required=True, help="the stack whose file is the template")
    p.add_argument("--environment", choices=("dev", "staging", "prod"), help="set platform.environment")
    p.set_defaults(func=_new_stack)
    p = sub.add_parser("stack-schema", help="generate stacks/stack.schema.json and docs/reference.md from the spec")
    p.add_argument("--check", action="store_true", help="compare instead of writing (exit 1 on drift)")
    p.set_defaults(func=_stack_schema)
    p = sub.add_parser("toolchain", help="build or reuse the pinned Go programs (Pulumi CLI, provider, control plane)")
    p.add_argument(
        "--group",
        action="append",
        choices=["engine", "checks", "controlplane"],
        help="engine: the Pulumi CLI and provider; checks: tools the tests run; controlplane: etcd, the Kubernetes "
        "control plane, kwok and Kueue (default: engine and checks)",
    )
    p.set_defaults(func=_toolchain, group=None)
    p = sub.add_parser("pulumi-preview", help="the real engine: pulumi preview (+ up in render mode) of a stack")
    p.add_argument("--stack", required=True)
    p.add_argument("--stack-file", help="read this file instead of stacks/Pulumi.<stack>.yaml")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--up", action="store_true", help="then pulumi up --yes and a preview that must show no changes")
    mode.add_argument(
        "--destroy",
        action="store_true",
        help="pulumi destroy --exclude-protected instead (needs --kubeconfig): protected resources stay",
    )
    p.add_argument("--policy-config", help=POLICY_CONFIG_HELP)
    p.add_argument("--kubeconfig", help="run against this cluster instead of rendering to out/<stack>/rendered/")
    p.add_argument("--operator-chart", help="a local kuberay-operator chart archive (air-gapped/offline runs)")
    p.add_argument("--kueue-chart", help="a local kueue chart archive, for stacks that install Kueue (offline runs)")
    p.add_argument("--out", default="out", help="render into <out>/<stack>/rendered/ (default: out)")
    p.add_argument("--engine-dir", default=".pulumi", help="state, PULUMI_HOME and run copies (default: .pulumi)")
    p.add_argument(
        "--secret-from-env",
        type=_key_and_variable,
        action="append",
        default=[],
        metavar="KEY=VAR",
        help="pulumi config set --secret KEY to the value of $VAR before running (CI secrets)",
    )
    p.set_defaults(func=_pulumi_preview)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors are exit 2 already
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return EXIT_CONFIG
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as exc:  # everything else is a bug: report it, exit 101
        if args.debug:
            traceback.print_exc()
        print(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
