#!/bin/bash
# Baseline timings of the committed bundle on the lent GPU (no parity: the full run follows later).
set -u
tar xzf bundle/glint-gpu.tar.gz -C /tmp
B=/tmp/glint-gpu R=/tmp/base
mkdir -p $R/home $R/cache $R/vendors
export LD_LIBRARY_PATH=$B HOME=$R/home GLINT_CACHE_DIR=$R/cache CUDA_CACHE_PATH=$R/cuda PATH=/usr/local/nvidia/bin:$PATH
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/lib64; do
  [ -f $d/libnvidia-opencl.so.1 ] && { echo $d/libnvidia-opencl.so.1 > $R/vendors/nvidia.icd; break; }
done
export OCL_ICD_VENDORS=$R/vendors
G=$B/glint
t() { local n=$1; shift; local lim=${LIM:-120}; local s=${EPOCHREALTIME/./}; timeout $lim "$@" > $R/$n.txt 2>&1; local rc=$?; local e=${EPOCHREALTIME/./}; echo "$n rc=$rc ms=$(( (e - s) / 1000 )) : $(tail -n 1 $R/$n.txt)" | tee -a $R/times.txt; }
{ nvidia-smi; nproc; lscpu | head -20; command -v ffmpeg; } > $R/env.txt 2>&1
t devices $G devices --verbose
t cover1 $G rtow --scene cover --size 1200x800 --spp 500 --depth 50 --device gpu -o $R/cover.png
t cover2 $G rtow --scene cover --size 1200x800 --spp 500 --depth 50 --device gpu -o $R/cover.png
Z="fractal mandelbrot --center -0.743643887037151,0.131825904205330 --ramp zoom=1:1e5 --precision double --iterations 2000 --smooth --bailout 256 --palette fire --device gpu --frames 60"
t zoom4k-1 $G $Z --size 3840x2160 -o $R/z4k
t zoom4k-2 $G $Z --size 3840x2160 -o $R/z4k
t zoom1080 $G $Z --size 1920x1080 -o $R/z1080
rm -rf $R/z4k $R/z1080
t deep $G fractal --location $B/data/misiurewicz-4-1-1e10000.kfr --size 480x320 --smooth --palette ocean --device gpu -o $R/deep.png
t deep-cpu $G fractal --location $B/data/misiurewicz-4-1-1e10000.kfr --size 480x320 --smooth --palette ocean --device cpu -o $R/deep-cpu.png

LIM=200 t bench $G bench fractal blur iso --full --seconds 0.3 --json $R/bench.json --markdown $R/bench.md
rm -rf $R/home $R/cache $R/cuda
tar czf $OUT/base.tar.gz -C /tmp base
