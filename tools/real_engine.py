"""The real Pulumi engine: ``make pulumi-preview STACK=<stack>`` (``python -m tools pulumi-preview``).

The pinned CLI and Kubernetes provider (``tools/toolchain.py``) run the project's ``__main__.py``
with the policy pack, against a local file backend with a passphrase secrets provider:

- ``pulumi preview --policy-pack policies --policy-pack-config policies/config/<env>.json``;
- in render mode (the default: no kubeconfig given) then ``pulumi up --yes`` with the provider's
  ``renderYamlToDirectory`` set to ``out/<stack>/rendered/``, and a second preview that must show
  no changes;
- with ``--kubeconfig``, the preview runs against that cluster (``--up`` applies it, ``--destroy``
  runs ``pulumi destroy --exclude-protected``).

The Python language host cannot be built from the modules the Go proxy serves (README, "Real
engine"), so the program runs through Pulumi's Automation API: the CLI is started with
``--client`` pointing at the ``pulumi`` SDK's own language server (``pulumi.automation``), which
runs ``__main__.py`` in this process, and the policy pack is started as an executable analyzer
plugin that runs ``python -u -m pulumi.policy <engine> policies`` in the pack's virtualenv, the
command the language host would run for it. Engine, state, secrets, provider and analyzer
protocol are the real ones.

The committed ``stacks/Pulumi.<stack>.yaml`` is never written: each run merges its config into a
run copy under ``.pulumi/`` that keeps what ``pulumi stack init`` and ``pulumi config set`` added
there (the encryption salt, extra secrets).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import runpy
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from components.errors import ConfigError
from tools.stackfile import read_stack_document

if TYPE_CHECKING:
    from pulumi import automation as auto

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "kuberay-platform"
LOCAL_PASSPHRASE = "kuberay-platform-local-render"  # only for the local render-mode backend (not a secret)


@dataclass(frozen=True)
class RunPaths:
    """Everything one stack's runs keep, under ``<engine dir>/<mode>/`` (default ``.pulumi/``, git-ignored)."""

    stack: str
    mode: str  # "render" or "cluster"
    source: Path  # the stack file read: stacks/Pulumi.<stack>.yaml unless --stack-file names another
    engine_dir: Path = ROOT / ".pulumi"
    out: Path = ROOT / "out"

    @property
    def base(self) -> Path:
        return self.engine_dir / self.mode

    @property
    def state(self) -> Path:
        return self.base / "state"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def work(self) -> Path:
        return self.base / "work" / self.stack

    @property
    def stack_file(self) -> Path:
        return self.work / f"Pulumi.{self.stack}.yaml"

    @property
    def rendered(self) -> Path:
        return self.out / self.stack / "rendered"


def committed_stack_file(stack: str) -> Path:
    return ROOT / "stacks" / f"Pulumi.{stack}.yaml"


def display(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def stack_environment(committed: dict[str, Any]) -> str:
    platform = (committed.get("config") or {}).get(f"{PROJECT}:platform") or {}
    env = platform.get("environment") if isinstance(platform, dict) else None
    return env if isinstance(env, str) else "dev"


def write_run_copy(paths: RunPaths, committed: dict[str, Any], overrides: dict[str, Any]) -> None:
    """The run's Pulumi.yaml and stack file: the committed config wins for every key it sets."""
    paths.work.mkdir(parents=True, exist_ok=True)
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    project.pop("stackConfigDir", None)
    if paths.mode == "render":
        # `options.refresh: always` reads every resource back from the cluster; render mode has none.
        (project.get("options") or {}).pop("refresh", None)
        if project.get("options") == {}:
            project.pop("options")
    (paths.work / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    current = yaml.safe_load(paths.stack_file.read_text()) if paths.stack_file.is_file() else {}
    current = current or {}
    config = {**(current.get("config") or {}), **(committed.get("config") or {}), **overrides}
    merged = {k: v for k, v in current.items() if k != "config"}
    merged["config"] = config
    paths.stack_file.write_text(yaml.safe_dump(merged, sort_keys=False))


def policy_launcher(paths: RunPaths) -> Path:
    """The policy pack as an executable analyzer plugin: the command the language host runs for it."""
    python = ROOT / "policies" / "venv" / "bin" / "python"
    if not python.is_file():
        raise ConfigError(["policies/venv: the policy pack's virtualenv is missing (run `make policy-venv`)"])
    launcher = paths.base / "bin" / "policies"
    launcher.parent.mkdir(parents=True, exist_ok=True)
    partial = launcher.with_name(f".policies-{os.getpid()}")
    partial.write_text(
        "#!/bin/sh\n"
        "# The kuberay-platform policy pack, started by the Pulumi CLI as an analyzer plugin.\n"
        f'cd "{ROOT / "policies"}" && exec "{python}" -u -m pulumi.policy "$@" "{ROOT / "policies"}"\n'
    )
    partial.chmod(0o755)
    partial.replace(launcher)  # atomic: concurrent runs never see a half-written launcher
    return launcher


def engine_env(paths: RunPaths, kubeconfig: Path | None) -> dict[str, str]:
    env = {
        "PULUMI_HOME": str(paths.home),
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
    }
    if paths.mode == "render":
        # No kubeconfig in reach: a path that does not exist, so neither $KUBECONFIG nor ~/.kube/config
        # is read and the provider only renders.
        env["KUBECONFIG"] = str(paths.work / "no-kubeconfig")
        env["PULUMI_BACKEND_URL"] = paths.state.as_uri()
        env["PULUMI_CONFIG_PASSPHRASE"] = os.environ.get("PULUMI_CONFIG_PASSPHRASE", LOCAL_PASSPHRASE)
    else:
        env["PULUMI_BACKEND_URL"] = os.environ.get("PULUMI_BACKEND_URL", paths.state.as_uri())
        assert kubeconfig is not None
        env["KUBECONFIG"] = str(kubeconfig)
    return env


def install_provider(paths: RunPaths, env: dict[str, str], cli: Path, provider: Path) -> None:
    """``pulumi plugin install resource kubernetes <version> --file <built binary>`` into the run's
    PULUMI_HOME, once per built binary (its cache directory names the key of its pins)."""
    from tools.toolchain import KUBERNETES

    marker = paths.home / "kuberay-platform-provider"
    with (paths.home / ".kuberay-platform.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # runs in parallel share the home
        if marker.is_file() and marker.read_text() == str(provider):
            return
        version = KUBERNETES.version
        command = [str(cli), "plugin", "install", "resource", "kubernetes", version, "--file", str(provider)]
        proc = subprocess.run([*command, "--reinstall"], env={**os.environ, **env}, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ConfigError([f"pulumi plugin install resource kubernetes {version} failed: {proc.stderr.strip()}"])
        marker.write_text(str(provider))


def _program() -> None:
    runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")


def chart_overrides(
    document: dict[str, Any], operator_chart: str | None, kueue_chart: str | None
) -> dict[str, Any] | None:
    """The platform config with local chart archives standing in for the charts' sources (offline runs):
    the operator's always, Kueue's where the stack installs Kueue."""
    if not operator_chart and not kueue_chart:
        return None
    platform: dict[str, Any] = json.loads(json.dumps((document.get("config") or {}).get(f"{PROJECT}:platform") or {}))
    if operator_chart:
        platform.setdefault("operator", {})["chart"] = {"archive": str(Path(operator_chart).resolve())}
    install = (platform.get("kueue") or {}).get("install")
    if kueue_chart and isinstance(install, dict):
        install["chart"] = {"archive": str(Path(kueue_chart).resolve())}
    return platform


def open_stack(
    paths: RunPaths,
    binaries: dict[str, Path],
    committed: dict[str, Any],
    overrides: dict[str, Any],
    kubeconfig: Path | None,
    program: Callable[[], None],
) -> auto.Stack:
    """The run's stack: its run copy written, the provider installed into its PULUMI_HOME, and the
    pinned CLI through the Automation API running ``program``."""
    from pulumi import automation as auto

    write_run_copy(paths, committed, overrides)
    for folder in (paths.state, paths.home):
        folder.mkdir(parents=True, exist_ok=True)
    env = engine_env(paths, kubeconfig)
    install_provider(paths, env, binaries["pulumi"], binaries["pulumi-resource-kubernetes"])
    return auto.create_or_select_stack(
        stack_name=paths.stack,
        project_name=PROJECT,
        program=program,
        opts=auto.LocalWorkspaceOptions(
            work_dir=str(paths.work),
            pulumi_home=str(paths.home),
            env_vars=env,
            # Render mode: passphrase. A cluster: $PULUMI_SECRETS_PROVIDER (e.g. awskms://...), else the
            # backend's default (Pulumi Cloud's, or a passphrase from $PULUMI_CONFIG_PASSPHRASE).
            secrets_provider="passphrase" if kubeconfig is None else os.environ.get("PULUMI_SECRETS_PROVIDER"),
            pulumi_command=auto.PulumiCommand(root=str(binaries["pulumi"].parent.parent)),
        ),
    )


def run(args: argparse.Namespace) -> int:
    from pulumi import automation as auto

    from tools import toolchain

    kubeconfig = Path(args.kubeconfig).resolve() if args.kubeconfig else None
    if args.destroy and kubeconfig is None:
        raise ConfigError(["--destroy needs --kubeconfig (render mode has nothing to destroy)"])
    source = Path(args.stack_file).resolve() if args.stack_file else committed_stack_file(args.stack)
    paths = RunPaths(
        args.stack,
        "cluster" if kubeconfig else "render",
        source,
        engine_dir=Path(args.engine_dir).resolve(),
        out=Path(args.out).resolve(),
    )
    committed = read_stack_document(source, display(source))
    binaries = toolchain.ensure(log=lambda line: print(line, file=sys.stderr))
    overrides: dict[str, Any] = {}
    if kubeconfig is None:
        overrides["kubernetes:renderYamlToDirectory"] = str(paths.rendered)
    if chart_archives := chart_overrides(committed, args.operator_chart, args.kueue_chart):
        overrides[f"{PROJECT}:platform"] = chart_archives
    stack = open_stack(paths, binaries, committed, overrides, kubeconfig, _program)
    policy_config = Path(args.policy_config or ROOT / "policies" / "config" / f"{stack_environment(committed)}.json")
    launcher = policy_launcher(paths)
    for key, variable in args.secret_from_env:
        if variable not in os.environ:
            raise ConfigError([f"--secret-from-env {key}={variable}: ${variable} is not set"])
        stack.set_config(key, auto.ConfigValue(os.environ[variable], secret=True))
    packs, pack_configs = [str(launcher)], [str(policy_config.resolve())]

    usual, shown = f"stacks/Pulumi.{args.stack}.yaml", display(source)

    def out(line: str) -> None:  # the program names the stack's usual file; name the one read
        print(line.replace(usual, shown) if shown != usual else line, flush=True)

    step = "preview"
    try:
        if args.destroy:
            # Protected resources (prod's durable GCS state) and what they depend on stay; the CRDs are
            # retained on delete by the program itself.
            step = "destroy --exclude-protected"
            stack.destroy(on_output=out, exclude_protected=True)
            return 0
        stack.preview(on_output=out, policy_packs=packs, policy_pack_configs=pack_configs)
        if args.up:
            step = "up"
            stack.up(on_output=out, policy_packs=packs, policy_pack_configs=pack_configs)
            if kubeconfig is None:
                print(f"{args.stack}: rendered into {display(paths.rendered)}/", flush=True)
            # Right after up, nothing may differ: a perpetual diff fails here (the policies ran above).
            step = "preview --expect-no-changes"
            stack.preview(on_output=out, expect_no_changes=True, diff=True)  # a failure shows what differs
    except auto.CommandError as exc:
        print(f"error: pulumi {step} failed{_stderr(exc)}", file=sys.stderr)
        return 1
    return 0


def _stderr(exc: Exception) -> str:
    """The CLI's own stderr from a CommandError (its stdout was already streamed)."""
    _, found, stderr = str(exc).partition("\n stderr: ")
    stderr = stderr.strip() if found else ""
    return f": {stderr}" if stderr else ""
