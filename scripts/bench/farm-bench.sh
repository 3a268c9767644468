#!/usr/bin/env bash
# The same job as one process and as N shards, then the merge: wall times and a byte-for-byte
# check of the merged file against the single render.
#
#   scripts/bench/farm-bench.sh [GLINT] [N]
#
# GLINT: the binary (default .build/release/glint); N shards (default 4). The shards run one after
# another here, each timed alone: the slowest is what N machines would take for the array (each
# shard uses every core of its machine), their sum is the total work. Jobs: an 8K Mandelbrot (2000
# iterations) and the book's cover scene (800x450, 64 samples per pixel), on the Swift path
# (--device cpu) so that every process sees the same device.
set -euo pipefail
glint="$(realpath "${1:-.build/release/glint}")"
n="${2:-4}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

run_job() {
    local name="$1"; shift
    local t0 t1 sum=0 slowest=0 s
    t0=$(now); "$glint" "$@" -o single.png -q; t1=$(now)
    local single; single=$(elapsed "$t0" "$t1")
    mkdir -p "tiles-$name"
    for i in $(seq 1 "$n"); do
        t0=$(now); "$glint" "$@" --shard "$i/$n" -o "tiles-$name/part-$i.png" -q; t1=$(now)
        s=$(elapsed "$t0" "$t1")
        sum=$(awk -v a="$sum" -v b="$s" 'BEGIN { printf "%.2f", a + b }')
        slowest=$(awk -v a="$slowest" -v b="$s" 'BEGIN { printf "%.2f", (b > a ? b : a) }')
    done
    t0=$(now); "$glint" merge "tiles-$name" -o merged.png -q; t1=$(now)
    local same="no"
    cmp -s single.png merged.png && same="yes"
    printf '%-8s single %6s s | %s shards: slowest %6s s, sum %6s s | merge %5s s | identical bytes: %s\n' \
        "$name" "$single" "$n" "$slowest" "$sum" "$(elapsed "$t0" "$t1")" "$same"
    [ "$same" = yes ]
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $("$glint" --version)"
run_job fractal fractal mandelbrot --size 7680x4320 --iterations 2000 --device cpu
run_job rtow rtow --scene cover --size 800x450 --spp 64 --device cpu
