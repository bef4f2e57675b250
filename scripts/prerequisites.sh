#!/usr/bin/env bash
# What `make demo` and `make test` need before their long build starts, one line for each thing
# that is missing (and how to get it); exit 1 if anything is. Called by the Makefile with:
#   PYTHON       the Python that creates the venv (or is installed into, when the user gave one)
#   VENV         the venv to create (empty: none is created)
set -uo pipefail

PYTHON="${PYTHON:-python3}"
missing=0
say() { echo "✗ $*" >&2; missing=1; }

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    say "$PYTHON not found: install Python 3.11 or later, or name one with BASE_PYTHON=/path/to/python3 (PYTHON=... to install into it without a venv)"
elif ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    say "$PYTHON is Python $("$PYTHON" -c 'import platform; print(platform.python_version())' 2>/dev/null || echo '?'); this project needs 3.11 or later: name one with BASE_PYTHON=/path/to/python3.11"
elif [[ -n "${VENV:-}" && ! -x "$VENV/bin/python" ]] && ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
    say "$PYTHON cannot create a virtual environment (no ensurepip): on Debian or Ubuntu, apt install python3-venv"
fi

# A cargo that is on the PATH may still be unable to run: rustup with no default toolchain answers
# "rustup could not choose a version of cargo to run" only when maturin calls it, a minute in.
if ! command -v cargo >/dev/null 2>&1; then
    say "cargo not found: the Rust ranking module is built with it; install Rust from https://rustup.rs (or apt install cargo)"
elif ! cargo_error=$(cargo --version 2>&1 >/dev/null); then
    say "cargo is installed but cannot run ($(printf '%s' "$cargo_error" | head -n 1)): with rustup, run \`rustup default stable\`"
fi

# Rust links the module with the system's C compiler (llama.cpp itself comes as a prebuilt wheel).
have_one() { for name in "$@"; do [[ -n "$name" ]] && command -v "$name" >/dev/null 2>&1 && return 0; done; return 1; }
have_one "${CC:-}" cc gcc clang ||
    say "no C compiler (cc, gcc or clang): Rust links the ranking module with it; on Debian or Ubuntu: apt install build-essential"

exit "$missing"
