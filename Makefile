# kuberay-platform: every target sets up (or refreshes) .venv itself.
#   make preview STACK=dev                    offline preview -> out/<stack>/
#   make test                                 static checks + every test
#   make lint ENV=prod FILES="a.yaml dir/"    policy rules over any Ray YAML [FORMAT=json]
#   make schemas [FROM=../shared/crds]        refresh schemas/ from schemas/pins.yaml
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STACK ?= dev
ENV ?= prod
FORMAT ?= text
FILES ?=
POLICY_CONFIG ?=
POLICY_CONFIG_ARG = $(if $(POLICY_CONFIG),--policy-config $(POLICY_CONFIG))

.PHONY: venv preview lint check test policy-config schemas bench clean

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

venv: $(STAMP)

preview: $(STAMP)
	$(BIN)/python -m tools preview --stack $(STACK) $(POLICY_CONFIG_ARG)

lint: $(STAMP)
	@if [ -z "$(FILES)" ]; then echo 'usage: make lint ENV=<dev|staging|prod> FILES="<files or folders>" [FORMAT=json]' >&2; exit 2; fi
	$(BIN)/python -m tools lint --env $(ENV) --format $(FORMAT) $(POLICY_CONFIG_ARG) $(FILES)

# Refresh schemas/ from schemas/pins.yaml: FROM=<local mirror of the upstream files>, else download.
schemas: $(STAMP)
	$(BIN)/python -m tools schemas $(if $(FROM),--from $(FROM))

policy-config: $(STAMP)
	$(BIN)/python -m tools policy-config

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: check
	$(BIN)/python -m pytest

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache

bench: $(STAMP)
	$(BIN)/python -m tools.bench
