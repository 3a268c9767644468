#!/bin/bash
# A long fuzz run of every file format glint reads (PNG, PFM, scene JSON, wipes JSON, rtow
# checkpoints): the harness of Tests/CLITests/FuzzTests.swift with more cases.
#
#   scripts/ci/fuzz.sh [--cases N] [--seed S] [--keep DIR]
#
#   --cases N   cases per format (default 1000: 5000 runs of glint, about 8 minutes on 2 cores)
#   --seed S    the first seed (default: the current time); the run is repeatable with the same seed
#   --keep DIR  keep every case that broke a promise there, with its command and output
#               (default ./fuzz-failures)
#
# Each case mutates a valid file and runs the command that reads it; the run fails if any case
# crashed or hung, refused its file with anything but one "error: ..." line, or touched a file
# (a leftover temporary, a changed output) while refusing. The last lines are the counts per
# format. Needs the packages of README's test command.
set -euo pipefail
cd "$(dirname "$0")/../.."

cases=1000
seed=$(date +%s)
keep=./fuzz-failures
while [ $# -gt 0 ]; do
    case "$1" in
        --cases) cases="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --keep) keep="$2"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$cases" =~ ^[0-9]+$ ]] && [ "$cases" -ge 1 ] && [ "$cases" -le 1000000 ] \
    || { echo "fuzz.sh: --cases must be a whole number from 1 to 1000000, got $cases" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seed must be a whole number, got $seed" >&2; exit 2; }
mkdir -p "$keep"
keep=$(cd "$keep" && pwd)

echo "fuzz: $cases cases per format, seed $seed, failures kept in $keep"
start=$(date +%s)
swift build --build-tests >/dev/null
status=0
GLINT_FUZZ_CASES="$cases" GLINT_FUZZ_SEED="$seed" GLINT_FUZZ_KEEP="$keep" \
    swift test --skip-build --filter FuzzTests 2>&1 | tee "$keep/last-run.log" | grep -E '^fuzz |✘' || true
grep -q 'Test run with .* passed' "$keep/last-run.log" || status=1
echo "fuzz: $(( $(date +%s) - start )) s, $( [ $status = 0 ] && echo passed || echo "FAILED: see $keep" )"
exit $status
