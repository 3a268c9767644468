#!/bin/bash
# Median samples/s of `glint rtow` over several runs, after a warm-up (which also fills the
# OpenCL program cache). Usage: scripts/bench/rtow-bench.sh DEVICE SIZE SPP [RUNS] [extra glint options]
# e.g. scripts/bench/rtow-bench.sh cpu 400x225 50 5; scripts/bench/rtow-bench.sh opencl 1200x800 10 3
set -euo pipefail
device=${1:?device}; size=${2:?size}; spp=${3:?spp}; runs=${4:-5}; shift $(( $# < 4 ? $# : 4 ))
glint=${GLINT:-.build/release/glint}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$glint" rtow --scene cover --size "$size" --spp 1 --device "$device" -q -o "$out/w.png" "$@"
rates=()
for _ in $(seq "$runs"); do
    line=$("$glint" rtow --scene cover --size "$size" --spp "$spp" --depth 50 --device "$device" -o "$out/b.png" "$@")
    rates+=("$(sed -E 's/.*, ([0-9.]+) M samples\/s\)$/\1/' <<<"$line")")
    echo "$line"
done
printf '%s\n' "${rates[@]}" | sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "median %.2f M samples/s over %d runs\n", m, NR }'
