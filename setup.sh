#!/usr/bin/env bash
# Installs the Debian packages Glint needs and builds the release binary (.build/release/glint).
# PoCL is the OpenCL driver for CPUs; it links kernels with `ld` (binutils) at run time. Oclgrind
# (a simulated GPU that checks every memory access) is for the tests; it registers no driver.
set -euo pipefail
cd "$(dirname "$0")"

packages="ocl-icd-opencl-dev opencl-headers libpng-dev libmpfr-dev libfftw3-dev pocl-opencl-icd binutils oclgrind"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

if ! dpkg -s $packages >/dev/null 2>&1; then
    echo "setup: installing $packages"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $packages
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "setup: no Swift toolchain on PATH; install Swift 6 (swift.org) and run ./setup.sh again" >&2
    exit 1
fi

swift build -c release --product glint
echo "setup: built .build/release/glint"
