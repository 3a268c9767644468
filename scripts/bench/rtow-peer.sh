#!/bin/bash
# Glint's cover scene against the C++ of "Ray Tracing in One Weekend" (its final InOneWeekend
# program, single thread, as published), timed in the same run: prints each median of samples/s
# and their ratio. The book's sources are not part of Glint: pass the folder that holds them
# (main.cc and its headers, v3.2 or v4); the script copies them to a temporary folder, sets the
# image width and samples per pixel in main.cc, builds with g++ -O3 -march=native (MARCH=haswell
# for AVX2 code on a machine with AVX-512) and runs them
# alternately with `glint rtow --scene cover` at the same size and depth 50.
# Usage: scripts/bench/rtow-peer.sh BOOK_DIR [WIDTH] [BOOK_SPP] [GLINT_SPP] [RUNS] [extra glint options]
# e.g. scripts/bench/rtow-peer.sh ~/rtweekend/src/InOneWeekend 400 20 300 3
# The book's scene is random per run (std::rand, unseeded: the same on every run of one build);
# both are the cover scene of the book, 16:9, depth 50. Besides samples per wall-clock second
# (Glint on all its threads, the book on one), each run's samples per CPU second (user + system
# time) are shown: on a shared machine they depend less on what else is running.
set -euo pipefail
book=${1:?folder with the book\'s InOneWeekend main.cc and headers}
width=${2:-400}; bookSpp=${3:-20}; glintSpp=${4:-300}; runs=${5:-3}
shift $(( $# < 5 ? $# : 5 ))
glint=${GLINT:-.build/release/glint}
device=${DEVICE:-cpu}
march=${MARCH:-native}
[[ $march =~ ^[a-z0-9][a-z0-9.+_-]{0,40}$ ]] || { echo "MARCH=$march: not a processor name g++ takes" >&2; exit 1; }
[ -f "$book/main.cc" ] || { echo "no main.cc in $book" >&2; exit 1; }
height=$(( width * 9 / 16 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$book"/*.h "$book"/main.cc "$work/"
# v4 sets cam.image_width = N; v3.2 declares const int image_width = N.
sed -E -i -e "s/(image_width[[:space:]]*=[[:space:]]*)[0-9]+/\1$width/" \
          -e "s/(samples_per_pixel[[:space:]]*=[[:space:]]*)[0-9]+/\1$bookSpp/" \
          -e "s/(max_depth[[:space:]]*=[[:space:]]*)[0-9]+/\150/" "$work/main.cc"
g++ -O3 "-march=$march" -o "$work/book" "$work/main.cc"

median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.4f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Warm-up (and OpenCL program cache).
"$glint" rtow --scene cover --size "${width}x$height" --spp 1 --device "$device" -q -o "$work/w.png" "$@"
bookRates=(); glintRates=(); bookCPU=(); glintCPU=()
rate() { awk -v s="$1" -v t="$2" 'BEGIN { printf "%.4f", s / t / 1e6 }'; }
for i in $(seq "$runs"); do
    /usr/bin/time -f '%e %U %S' -o "$work/t" "$work/book" > "$work/book.ppm" 2> /dev/null
    read -r wall user sys < "$work/t"
    bookRates+=("$(rate $(( width * height * bookSpp )) "$wall")")
    bookCPU+=("$(rate $(( width * height * bookSpp )) "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')")")
    line=$(/usr/bin/time -f '%e %U %S' -o "$work/t" "$glint" rtow --scene cover --size "${width}x$height" --spp "$glintSpp" --depth 50 --device "$device" -o "$work/g.png" "$@")
    read -r wall user sys < "$work/t"
    glintRates+=("$(sed -E 's/.*, ([0-9.]+) M samples\/s\)$/\1/' <<<"$line")")
    glintCPU+=("$(rate $(( width * height * glintSpp )) "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')")")
    echo "run $i: book ${bookRates[-1]} M samples/s (${bookCPU[-1]} per CPU s), glint ${glintRates[-1]} M samples/s (${glintCPU[-1]} per CPU s)"
done
b=$(printf '%s\n' "${bookRates[@]}" | median); bc=$(printf '%s\n' "${bookCPU[@]}" | median)
g=$(printf '%s\n' "${glintRates[@]}" | median); gc=$(printf '%s\n' "${glintCPU[@]}" | median)
awk -v m="$march" -v b="$b" -v g="$g" -v bc="$bc" -v gc="$gc" -v n="$runs" -v d="$device" -v w="$width" -v h="$height" -v bs="$bookSpp" -v gs="$glintSpp" 'BEGIN {
    printf "book C++ (1 thread, -march=%s, %dx%d, %d spp): median %.3f M samples/s, %.3f M per CPU s over %d runs\n", m, w, h, bs, b, bc, n
    printf "glint --device %s (%dx%d, %d spp): median %.3f M samples/s, %.3f M per CPU s over %d runs\n", d, w, h, gs, g, gc, n
    printf "ratio glint / book: %.1fx (wall clock), %.1fx (per CPU second)\n", g / b, gc / bc }'
