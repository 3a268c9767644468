#!/usr/bin/env bash
# Process wall time of a small OpenCL render, cold (empty kernel cache: the program is compiled)
# and warm (the program comes from the disk cache). Usage: scripts/bench/startup-times.sh [glint binary]
set -euo pipefail
glint="${1:-.build/release/glint}"
cache="$(mktemp -d)"
# PoCL keeps a cache of its own: empty it too, or "cold" is only half cold.
export POCL_CACHE_DIR="$cache/pocl"
out="$(mktemp -d)"
trap 'rm -rf "$cache" "$out"' EXIT

run() {
    local start end
    start=$(date +%s%N)
    GLINT_CACHE_DIR="$cache" "$glint" fractal mandelbrot --size 256x256 --device opencl -o "$out/m.png" --verbose >"$out/log"
    end=$(date +%s%N)
    echo "$1: $(( (end - start) / 1000000 )) ms  ($(grep programs: "$out/log" | sed 's/^programs: //'))"
}
run "cold (empty cache)"
run "warm (disk cache) "
run "warm (disk cache) "
start=$(date +%s%N)
"$glint" fractal mandelbrot --size 256x256 --device cpu -o "$out/c.png" >/dev/null
end=$(date +%s%N)
echo "Swift CPU path    : $(( (end - start) / 1000000 )) ms"
