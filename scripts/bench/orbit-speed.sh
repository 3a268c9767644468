#!/usr/bin/env bash
# The deep zoom's reference orbit at 1e10000 (M(4,1), 33,283 bits, 81,260 points), whole process:
# `glint fractal --location docs/locations/misiurewicz-4-1-1e10000.kfr --size 48x32 --device cpu`,
# whose time is the orbit's (a 2x2 render takes as long), µs a point against the goal of 20, with
# GMP's 521-limb multiplication measured alone in the same run as the peer (this machine's speed
# moves from minute to minute). With a second binary, the two alternate.
#
# Usage: scripts/bench/orbit-speed.sh [glint binary] [other glint binary] [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/../.."
glint="${1:-.build/release/glint}"
other="${2:-}"
runs="${3:-3}"
[[ -x $glint ]] || { echo "orbit-speed: no glint binary at $glint (swift build -c release)" >&2; exit 2; }
[[ -z $other || -x $other ]] || { echo "orbit-speed: no glint binary at $other" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "orbit-speed: runs must be 1 to 99" >&2; exit 2; }
points=81260
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 scripts/bench/peers/gmp-multiply.c -Iscripts/bench/peers -o "$work/gmp-multiply" -lmpfr -lgmp

time_one() {
    local start end
    start=$(date +%s%N)
    "$1" fractal --location docs/locations/misiurewicz-4-1-1e10000.kfr --size 48x32 --device cpu -q -o "$work/o.png"
    end=$(date +%s%N)
    echo $(( (end - start) / 1000 ))
}

declare -a mine theirs
for ((r = 1; r <= runs; r++)); do
    us=$(time_one "$glint")
    mine+=("$us")
    line="run $r: $(awk -v u="$us" -v n=$points 'BEGIN { printf "%.2f s, %.1f µs a point", u / 1e6, u / n }')"
    if [[ -n $other ]]; then
        them=$(time_one "$other")
        theirs+=("$them")
        line+="; other $(awk -v u="$them" -v n=$points 'BEGIN { printf "%.2f s, %.1f µs a point", u / 1e6, u / n }')"
    fi
    peer=$("$work/gmp-multiply" | awk '/^mpn_mul_n/ { print $2 }')
    echo "$line; mpn_mul_n alone $peer µs"
done

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m=$(median "${mine[@]}")
awk -v u="$m" -v n=$points 'BEGIN { p = u / n; printf "median: %.1f µs a point (goal 20: %s)\n", p, p <= 20 ? "met" : "not met" }'
if [[ -n $other ]]; then
    t=$(median "${theirs[@]}")
    awk -v a="$m" -v b="$t" 'BEGIN { printf "ratio of medians, first / other: %.2f\n", a / b }'
fi
