# The two commands the README gives: `make demo` (a real council on the embedded defaults)
# and `make test` (every test). Everything installs itself into the current Python.
PYTHON ?= python3
WHEEL_CACHE ?= $(HOME)/.cache/llm-council/wheels
PIP_INSTALL = $(PYTHON) -m pip install --find-links $(WHEEL_CACHE)

.PHONY: demo test check lint types rust-lint install install-dev llama-wheel rust-test py-test bench fuzz

demo: llama-wheel
	$(PIP_INSTALL) -e '.[local]'
	bash scripts/demo.sh

test: install-dev check rust-test py-test

# Lint, formatting and types (configured in pyproject.toml and rust/rustfmt.toml); `make test` and
# CI (.ci/run) run it first. --workspace: rust/Cargo.toml's default member is the pure crate only.
# `make -k check` reports every part.
check: lint types rust-lint

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

types:
	$(PYTHON) -m mypy core bot

rust-lint:
	cargo fmt --manifest-path rust/Cargo.toml --all --check
	cargo clippy --manifest-path rust/Cargo.toml --workspace --all-targets -- -D warnings

install-dev: llama-wheel
	$(PIP_INSTALL) -e '.[dev,local,server,charts,api,postgres,otel]'

# llama-cpp-python ships only source on PyPI; building it takes ~5 minutes on 2 cores, so the
# wheel is built once and kept in a cache that later installs find.
llama-wheel:
	@mkdir -p $(WHEEL_CACHE)
	@ls $(WHEEL_CACHE)/llama_cpp_python-*.whl >/dev/null 2>&1 || \
		CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PYTHON) -m pip wheel --no-deps -w $(WHEEL_CACHE) 'llama-cpp-python>=0.3.2'

rust-test:
	cargo test --manifest-path rust/Cargo.toml --release

# In parallel (pytest-xdist): every test binds port 0 and uses its own temporary directory and
# database; `loadgroup` keeps the tests marked `xdist_group` (llama.cpp) in one worker.
# Many tests wait on sockets and subprocesses, so more workers than cores pays (see README).
TEST_WORKERS ?= 3
py-test:
	$(PYTHON) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

bench:
	$(PYTHON) bench/bench_ranking.py
	$(PYTHON) bench/bench_engine.py
	$(PYTHON) bench/bench_leaderboard.py
	$(PYTHON) bench/bench_attachments.py
	$(PYTHON) bench/bench_markers.py

fuzz:
	$(PYTHON) -m pip install atheris
	$(PYTHON) tests/fuzz/fuzz_parse.py -max_total_time=60
	$(PYTHON) tests/fuzz/fuzz_ranking.py -max_total_time=60
