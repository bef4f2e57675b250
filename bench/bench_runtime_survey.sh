#!/usr/bin/env bash
# Rounds of bench/bench_runtime_survey.py: in each round every runtime runs once on each model
# it loads, one process at a time under nice, xllamacpp first, so that each runtime meets about
# the same load of a shared machine as xllamacpp did in that round. Needs a scratch venv per
# runtime, $SURVEY_VENVS/survey-<venv> (see the Python script's docstring); installs nothing.
#   bash bench/bench_runtime_survey.sh > rounds.log
set -u
cd "$(dirname "$0")/.."
VENVS=${SURVEY_VENVS:-/tmp}
ROUNDS=${ROUNDS:-3}
mapfile -t PATHS < <(.venv/bin/python bench/bench_runtime_survey.py --paths)
S=${PATHS[0]}
G=${PATHS[1]}
# venv, runtime, model: mineru only on Gemma (it aborts loading SmolLM2); gpt4all and
# llama-cpp-cffi load neither model here, so they are not timed.
RUNS=("xllamacpp xllamacpp $S" "ik ik-llama $S" "cyllama cyllama $S"
      "xllamacpp xllamacpp $G" "ik ik-llama $G" "cyllama cyllama $G" "mineru mineru $G")
for round in $(seq "$ROUNDS"); do
  for run in "${RUNS[@]}"; do
    read -r venv runtime model <<< "$run"
    echo "### round $round $runtime $(basename "$model") $(date -u +%T) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
    timeout 400 nice -n 10 "$VENVS/survey-$venv/bin/python" bench/bench_runtime_survey.py "$runtime" \
      --model "$model" --reps 1 2>>"$VENVS/survey-$venv.err"
    echo "exit=$?"
  done
done
