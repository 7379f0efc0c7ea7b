# kuberay-platform: every target sets up (or refreshes) .venv itself, from the locked requirements.
#   make preview STACK=dev                    offline preview -> out/<stack>/          (checks group + nca)
#        [STACK_FILE=examples/Pulumi.multikueue.yaml: preview that file as stack STACK]
#   make lint ENV=prod FILES="a.yaml dir/"    policy rules over any Ray YAML [FORMAT=json] (checks group)
#   make test                                 static checks + every test                (dev group)
#   make schemas [FROM=../shared/crds]        refresh schemas/ from schemas/pins.yaml   (dev group)
#   make stack-schema                         stacks/stack.schema.json + docs/reference.md from the spec
#   make toolchain                            build/reuse the pinned Pulumi CLI + Kubernetes provider (Go)
#   make controlplane-toolchain               build/reuse etcd, the Kubernetes control plane, kwok, Kueue (Go)
#   make pulumi-preview STACK=dev             the real engine: preview + up in render mode -> out/<stack>/rendered
#        [OPERATOR_CHART=<chart .tgz>] [KUEUE_CHART=<chart .tgz>: stacks that install Kueue]
#        [CLUSTER_KUBECONFIG=<file>: preview against that cluster instead]
#        [ENGINE_SECRETS="kuberay-platform:redisGcsPassword=REDIS_PASSWORD ..."  config secrets from env vars]
#   make pulumi-up STACK=prod CLUSTER_KUBECONFIG=<file>   the real engine: pulumi up against a cluster
#   make test-engine                          the real-engine tests (every stack; needs Go and the chart)
#   make e2e                                  every stack into a local control plane (etcd, kube-apiserver, kwok, Kueue; Go, root)
#   make lock                                 recompile every lock from its .in file (needs PyPI)
# Dependency groups (each a hand-written .in, locked with hashes by pip-compile):
#   requirements.txt           the Pulumi program (`pulumi up` installs it into .venv itself)
#   policies/requirements.txt  the policy pack (its own policies/venv)
#   requirements/checks.txt    program + policy pack + Kubernetes schemas: preview, lint, policy-config
#   requirements/dev.txt       checks + test tools + Ray's models: test, check, bench
#   requirements/nca.txt       network-config-analyzer in .venv-nca (preview's connectivity table)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CHECKS_LOCK := requirements/checks.txt
DEV_LOCK := requirements/dev.txt
CHECKS_STAMP := $(VENV)/.installed-checks
DEV_STAMP := $(VENV)/.installed-dev
PIP_INSTALL = $(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps
PIP_COMPILE = $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-find-links
POLICY_VENV := policies/venv
LOCK_ARGS ?=
STACK ?= dev
ENV ?= prod
FORMAT ?= text
FILES ?=
POLICY_CONFIG ?=
POLICY_CONFIG_ARG = $(if $(POLICY_CONFIG),--policy-config $(POLICY_CONFIG))
OPERATOR_CHART ?=
KUEUE_CHART ?=
CLUSTER_KUBECONFIG ?=
ENGINE_SECRETS ?=
ENGINE_ARGS = --stack $(STACK) $(POLICY_CONFIG_ARG) $(if $(OPERATOR_CHART),--operator-chart $(OPERATOR_CHART)) \
	$(if $(KUEUE_CHART),--kueue-chart $(KUEUE_CHART)) \
	$(foreach pair,$(ENGINE_SECRETS),--secret-from-env $(pair))

.PHONY: venv venv-checks policy-venv nca-venv stack-schema preview lint check test policy-config schemas bench lock clean \
	toolchain controlplane-toolchain e2e pulumi-preview pulumi-up test-engine system-packages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Exactly the locked packages (hashes checked, no resolver); `pip check` proves the set is complete.
$(CHECKS_STAMP): $(CHECKS_LOCK) | $(BIN)/python
	$(PIP_INSTALL) -r $(CHECKS_LOCK)
	$(BIN)/python -m pip check
	@touch $@

# dev.txt is a superset of checks.txt with the same versions: installing it satisfies both stamps.
$(DEV_STAMP): $(DEV_LOCK) $(CHECKS_LOCK) | $(BIN)/python
	$(PIP_INSTALL) -r $(DEV_LOCK)
	$(BIN)/python -m pip check
	@touch $@ $(CHECKS_STAMP)

venv-checks: $(CHECKS_STAMP)

venv: $(DEV_STAMP)

# The policy pack's own virtualenv (PulumiPolicy.yaml: virtualenv: venv), which `pulumi preview
# --policy-pack policies` uses but does not create; `cd policies && pulumi install` does the same.
policy-venv: $(POLICY_VENV)/.installed

$(POLICY_VENV)/.installed: policies/requirements.txt
	@test -x $(POLICY_VENV)/bin/python || $(PYTHON) -m venv $(POLICY_VENV)
	$(POLICY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r policies/requirements.txt
	$(POLICY_VENV)/bin/python -m pip check
	@touch $@

# The connectivity analyzer's own virtualenv (network-config-analyzer pins its dependencies exactly).
NCA_VENV := .venv-nca
NCA_LOCK := requirements/nca.txt
NCA_STAMP := $(NCA_VENV)/.installed
$(NCA_STAMP): $(NCA_LOCK)
	@test -x $(NCA_VENV)/bin/python || $(PYTHON) -m venv $(NCA_VENV)
	$(NCA_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(NCA_LOCK)
	$(NCA_VENV)/bin/python -m pip check
	@touch $@

nca-venv: $(NCA_STAMP)

preview: $(CHECKS_STAMP) $(NCA_STAMP)
	$(BIN)/python -m tools preview --stack $(STACK) $(POLICY_CONFIG_ARG) $(if $(STACK_FILE),--stack-file $(STACK_FILE))

lint: $(CHECKS_STAMP)
	@if [ -z "$(FILES)" ]; then echo 'usage: make lint ENV=<dev|staging|prod> FILES="<files or folders>" [FORMAT=json]' >&2; exit 2; fi
	$(BIN)/python -m tools lint --env $(ENV) --format $(FORMAT) $(POLICY_CONFIG_ARG) $(FILES)

# Refresh schemas/ from schemas/pins.yaml: FROM=<local mirror of the upstream files>, else download.
# Needs the dev group: the serve-config schemas are generated from Ray's own models.
schemas: $(DEV_STAMP)
	$(BIN)/python -m tools schemas $(if $(FROM),--from $(FROM))

# The pinned Go toolchain (toolchain/*/go.mod), built into ~/.cache/kuberay-platform/toolchain/ keyed
# by its pins; a second run with nothing changed only checks the keys.
toolchain: $(CHECKS_STAMP)
	$(BIN)/python -m tools toolchain

# The local control plane's programs (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kwok, Kueue), built from their pinned modules into the same cache (issue 14's end-to-end runs).
controlplane-toolchain: $(CHECKS_STAMP)
	$(BIN)/python -m tools toolchain --group controlplane

# Render mode (no CLUSTER_KUBECONFIG): preview, up --yes into out/<stack>/rendered/, preview with no changes.
pulumi-preview: $(CHECKS_STAMP) $(POLICY_VENV)/.installed
	$(BIN)/python -m tools pulumi-preview $(ENGINE_ARGS) \
		$(if $(CLUSTER_KUBECONFIG),--kubeconfig $(CLUSTER_KUBECONFIG),--up)

pulumi-up: $(CHECKS_STAMP) $(POLICY_VENV)/.installed
	@if [ -z "$(CLUSTER_KUBECONFIG)" ]; then echo 'usage: make pulumi-up STACK=<stack> CLUSTER_KUBECONFIG=<kubeconfig>' >&2; exit 2; fi
	$(BIN)/python -m tools pulumi-preview $(ENGINE_ARGS) --kubeconfig $(CLUSTER_KUBECONFIG) --up

# stacks/stack.schema.json (editors validate stack files with it) and docs/reference.md, from the spec.
stack-schema: $(CHECKS_STAMP)
	$(BIN)/python -m tools stack-schema

policy-config: $(CHECKS_STAMP)
	$(BIN)/python -m tools policy-config

check: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Tools the tests run for real, as command:Debian package: redis-server (the GCS Redis durability
# test), promtool from prometheus (alert rules checked and unit-tested). Installed as root when
# missing; elsewhere the tests that need them skip (and fail under CI=true).
DEB_TOOLS := redis-server:redis-server promtool:prometheus
system-packages:
	@missing=""; for t in $(DEB_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t#*:}"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get install -y -q --no-install-recommends $$missing >/dev/null || \
			{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null; }; \
		else echo "note: missing$$missing (install them; tests that need them skip)" >&2; fi; \
	fi

test: check system-packages $(NCA_STAMP)
	$(BIN)/python -m pytest

# The real engine (tests/test_real_engine.py): builds/reuses the toolchain, then every stack for real.
# OPERATOR_CHART defaults to the offline chart beside the repository (../shared/charts/).
test-engine: $(DEV_STAMP) $(POLICY_VENV)/.installed
	$(BIN)/python -m pytest -m engine tests/test_real_engine.py

# The local control plane (tests/test_controlplane.py) and every stack deployed into one
# (tests/test_e2e.py): builds/reuses the control plane's programs and the real engine, then runs them.
e2e: $(DEV_STAMP) $(POLICY_VENV)/.installed
	$(BIN)/python -m tools toolchain --group controlplane
	$(BIN)/python -m tools toolchain
	$(BIN)/python -m pytest -m e2e tests/test_controlplane.py tests/test_e2e.py

bench: $(DEV_STAMP)
	$(BIN)/python -m tools.bench

# dev.txt first (the largest set); every other lock is constrained by it, so all locks agree on
# every shared version. Existing pins are kept unless LOCK_ARGS says otherwise, e.g.
# `make lock LOCK_ARGS=--upgrade` or `LOCK_ARGS="--upgrade-package ray"`.
lock: $(DEV_STAMP)
	$(PIP_COMPILE) $(LOCK_ARGS) --output-file=$(DEV_LOCK) requirements/dev.in
	$(PIP_COMPILE) --constraint=$(DEV_LOCK) --output-file=$(CHECKS_LOCK) requirements/checks.in
	$(PIP_COMPILE) --constraint=$(DEV_LOCK) --output-file=policies/requirements.txt policies/requirements.in
	$(PIP_COMPILE) --constraint=$(DEV_LOCK) --output-file=requirements.txt requirements.in
	$(PIP_COMPILE) $(LOCK_ARGS) --output-file=$(NCA_LOCK) requirements/nca.in

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache
