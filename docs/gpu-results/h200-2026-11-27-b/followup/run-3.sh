#!/bin/bash
# Third H200 run: BLOCK with its per-step start, the calibration with mist, auto in the bench.
# fractal escape loop's BLOCK (1 against 8, alternating).
set -u
tar xzf bundle/glint-gpu.tar.gz -C /tmp
B=/tmp/glint-gpu R=/tmp/r3
mkdir -p $R/home $R/cache $R/vendors $R/w
export LD_LIBRARY_PATH=$B HOME=$R/home GLINT_CACHE_DIR=$R/cache CUDA_CACHE_PATH=$R/cuda
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
  [ -f $d/libnvidia-opencl.so.1 ] && { echo $d/libnvidia-opencl.so.1 > $R/vendors/nvidia.icd; break; }
done
export OCL_ICD_VENDORS=$R/vendors
G=$B/glint
t0=$(date +%s)
{
echo "== parity, default BLOCK"
for args in "mandelbrot --size 1920x1080" "mandelbrot --size 1920x1080 --smooth --bailout 64 --iterations 400" "burning-ship --center -1.755,-0.03 --zoom 25 --size 1920x1080 --smooth" "mandelbrot --size 1920x1080 --precision double --iterations 1000 --smooth" "mandelbrot --no-skip --size 1920x1080 --iterations 2000 --precision double"; do
  echo "-- $args: $($G compare --a cpu --b gpu fractal $args 2>&1 | grep -E 'escape counts|within|outside|rror' | tr '\n' ' ')"
done
echo "== BLOCK A/B, bench --full fractal float/double cases on the GPU"
for b in 1 8 1 8; do
  echo "-- GLINT_FRACTAL_BLOCK=$b"
  GLINT_FRACTAL_BLOCK=$b timeout 90 $G bench fractal --full --case mandelbrot-float --case mandelbrot-float-noskip --case mandelbrot-smooth --case julia-ss3 --case burning-ship-float --case mandelbrot-double --case mandelbrot-deep-double --device gpu --peak --seconds 0.3 --markdown - 2>&1 | grep -E "^\||rror"
done
for b in 1 8; do
  echo "-- device-sized, GLINT_FRACTAL_BLOCK=$b"
  GLINT_FRACTAL_BLOCK=$b timeout 90 $G bench fractal --device-sized --device gpu --markdown - 2>&1 | grep -E "^\||rror"
done
echo "== calibrate"
$G devices --calibrate 2>&1
echo "== bench standard cpu"
timeout 120 $G bench --standard --seconds 0.3 --device cpu --csv $R/auto-cpu.csv 2>&1 | tail -25
echo "== bench standard gpu"
timeout 120 $G bench --standard --seconds 0.3 --device gpu --csv $R/auto-gpu.csv 2>&1 | tail -25
echo "== done after $(( $(date +%s) - t0 )) s"
} > $R/log.txt 2>&1
cp $R/log.txt $R/auto-*.csv $R/cache/auto-calibration-gpu $OUT/ 2>/dev/null
tail -5 $R/log.txt
