#!/usr/bin/env bash
# The README's first command as a new user meets it: `make demo` in a fresh clone, with an empty
# HOME and an empty pip cache (the Rust toolchain stays where it is installed: RUSTUP_HOME and
# CARGO_HOME), then a second `make demo` in the same clone. Prints how long each phase took (the
# phases are the Makefile's "»" lines and the council's first line) and the two totals.
#
#   bash bench/bench_first_run.sh            # clones this checkout's HEAD into a temporary folder
#   KEEP=1 bash bench/bench_first_run.sh     # keeps the folder (its path is printed)
#
# Downloads every package again (that is the point): PyPI must be reachable. On a shared machine
# the figures grow with everyone else's load, so the load average is printed beside them.
set -euo pipefail

repo=$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)
work=$(mktemp -d /tmp/first-run.XXXXXX)
[[ -n "${KEEP:-}" ]] || trap 'rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/clone"
mkdir -p "$work/home"

export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
run_demo() {
    # Each output line with the seconds since the start; "»" lines open a phase. The CPU time of
    # the whole tree (user, system) goes to $work/cpu: on a shared machine it is the figure that
    # does not grow with the others' load.
    (cd "$work/clone" && TIMEFORMAT='%U %S' && { time env -u VIRTUAL_ENV HOME="$work/home" \
        PIP_CACHE_DIR="$work/home/.cache/pip" PATH="$CARGO_HOME/bin:$PATH" make demo 2>&1; } 2>"$work/cpu") |
        while IFS= read -r line; do
            printf '%7.1f  %s\n' "$(($(date +%s%N) - start))e-9" "$line"
        done
}

phases() {
    # The log's phase lines with how long each lasted (until the next one, or the end).
    awk -v total="$2" '
        /^ *[0-9.]+  (» (Creating|Installing|council ask)|Council [0-9a-f]+ \()/ { t = $1; sub(/^ *[0-9.]+  /, ""); if (n) d[n] = t - s[n]; n++; s[n] = t; l[n] = substr($0, 1, 90) }
        END { if (n) d[n] = total - s[n]; for (i = 1; i <= n; i++) printf "  %6.1f s  %s\n", d[i], l[i] }
    ' "$1"
}

for round in first second; do
    start=$(date +%s%N)
    status=0
    run_demo >"$work/$round.log" || status=$?
    total=$(awk "BEGIN { printf \"%.1f\", ($(date +%s%N) - $start) / 1e9 }")
    read -r user system <"$work/cpu" || true
    echo "== $round make demo: $total s (CPU: ${user:-?} s user, ${system:-?} s system; exit $status;" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores)"
    phases "$work/$round.log" "$total"
    [[ $status -eq 0 ]] || { tail -n 20 "$work/$round.log"; exit "$status"; }
done
[[ -z "${KEEP:-}" ]] || echo "logs in $work"
