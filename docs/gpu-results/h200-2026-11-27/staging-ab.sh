#!/bin/bash
# Staging on and off, alternating, on the lent GPU: the 4K fractal cases and the float blur.
set -u
tar xzf bundle/glint-gpu.tar.gz -C /tmp
B=/tmp/glint-gpu R=/tmp/ab
mkdir -p $R/home $R/cache $R/vendors
export LD_LIBRARY_PATH=$B HOME=$R/home GLINT_CACHE_DIR=$R/cache CUDA_CACHE_PATH=$R/cuda
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
  [ -f $d/libnvidia-opencl.so.1 ] && { echo $d/libnvidia-opencl.so.1 > $R/vendors/nvidia.icd; break; }
done
export OCL_ICD_VENDORS=$R/vendors
G=$B/glint
for s in 1 0 1 0; do
  echo "== GLINT_STAGING=$s"
  GLINT_STAGING=$s timeout 60 $G bench fractal --full --case mandelbrot-double --case mandelbrot-smooth --case mandelbrot-float --device gpu --seconds 0.4 --markdown - 2>&1 | grep -E "3840|error"
  GLINT_STAGING=$s timeout 60 $G bench blur iso --full --case f32 --case iso-square --device gpu --seconds 0.4 --markdown - 2>&1 | grep -E "3840|error"
done 2>&1 | tee $R/ab.txt
cp $R/ab.txt $OUT/
