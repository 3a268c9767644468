#!/bin/bash
# Build a self-contained Glint bundle for a GPU machine that has no Swift toolchain.
#
#   scripts/gpu/gpu-bundle.sh [--no-build]
#
# Builds glint as a static binary (the Swift runtime linked in: --static-swift-stdlib, scratch
# path .build-static), strips it, and assembles bundle/glint-gpu/ with the binary, the shared
# libraries it needs beyond glibc (ocl-icd's libOpenCL.so.1, libpng16, libz, libmpfr, libgmp, libfftw3; libstdc++ and
# libgcc_s go to fallback/, used only where the target lacks them), scripts/gpu/gpu-run.sh as run.sh,
# a texture for image-julia and a README.txt. Then packs bundle/glint-gpu.tar.gz.
# --no-build reuses the binary already in .build-static (after checking that it exists).
# docs/GPU.md describes the whole procedure.
set -euo pipefail

die() { echo "gpu-bundle: error: $*" >&2; exit 1; }
say() { echo "gpu-bundle: $*"; }

build=1
for arg in "$@"; do
    case $arg in
        --no-build) build=0 ;;
        -h|--help) sed -n '2,/^$/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
        *) die "unknown argument '$arg' (usage: scripts/gpu/gpu-bundle.sh [--no-build])" ;;
    esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
[[ -f Package.swift ]] || die "run from the Glint repository (no Package.swift in $root)"
[[ -f scripts/gpu/gpu-run.sh ]] || die "scripts/gpu/gpu-run.sh is missing"

for tool in ldd strip tar gzip readlink; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found on PATH"
done
have_objdump=0
command -v objdump >/dev/null 2>&1 && have_objdump=1

scratch=.build-static
if (( build )); then
    command -v swift >/dev/null 2>&1 || die "swift not found on PATH (install a Swift 6 toolchain)"
    say "building the static binary (swift build -c release --static-swift-stdlib --product glint --scratch-path $scratch)"
    swift build -c release --static-swift-stdlib --product glint --scratch-path "$scratch" \
        || die "swift build failed (see the messages above)"
fi
bin="$scratch/release/glint"
[[ -x $bin ]] || die "no binary at $bin (run without --no-build)"

# A static Swift binary loads no Swift runtime library.
lddout=$(ldd "$bin") || die "ldd $bin failed"
if [[ $lddout == *libswift* || $lddout == *libFoundation* || $lddout == *libdispatch* ]]; then
    die "$bin links the Swift runtime dynamically (was it built with --static-swift-stdlib?)"
fi
if [[ $lddout == *"not found"* ]]; then
    die "$bin has unresolved libraries: $(echo "$lddout" | tr -s ' \t' ' ' | grep 'not found' | tr '\n' ';')"
fi

out=bundle/glint-gpu
rm -rf "$out" bundle/glint-gpu.tar.gz
mkdir -p "$out/fallback" "$out/data"
cp "$bin" "$out/glint"
strip "$out/glint" || die "strip failed"
say "binary: $(du -h "$out/glint" | cut -f1) stripped"

# glibc's own libraries: the target's must be used, never copies.
is_glibc() {
    case $1 in
        linux-vdso.so.*|linux-gate.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|\
        librt.so.*|libresolv.so.*|libutil.so.*|libanl.so.*|libnsl.so.*|libmvec.so.*|libBrokenLocale.so.*|\
        libc_malloc_debug.so.*|libthread_db.so.*|libcrypt.so.1) return 0 ;;
    esac
    return 1
}
# The C++ runtime: copied, but used on the target only where it has none (an older copy placed
# first could break a vendor driver that needs a newer one).
is_fallback() {
    case $1 in libstdc++.so.*|libgcc_s.so.*) return 0 ;; esac
    return 1
}

copied=()
while read -r name arrow path _; do
    [[ $arrow == "=>" && $path == /* ]] || continue
    is_glibc "$name" && continue
    real=$(readlink -f "$path") || die "cannot resolve $path"
    [[ -f $real ]] || die "library $name resolves to $real, which is missing"
    if [[ $name == libOpenCL.so.1 ]]; then
        # ocl-icd's loader: it honours OCL_ICD_VENDORS, which run.sh relies on.
        real=$(readlink -f /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 2>/dev/null || true)
        [[ -n $real && -f $real ]] || die "ocl-icd's /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 is missing (apt-get install ocl-icd-libopencl1)"
    fi
    if (( have_objdump )); then
        soname=$(objdump -p "$real" | sed -n 's/^ *SONAME *//p')
        [[ -z $soname || $soname == "$name" ]] || die "$real has SONAME $soname, but glint needs $name"
    fi
    if is_fallback "$name"; then dest="$out/fallback/$name"; else dest="$out/$name"; fi
    cp -L "$real" "$dest"
    chmod 0644 "$dest"
    copied+=("$name")
    say "library: $name <- $real"
done <<<"$lddout"

for need in libOpenCL.so.1 libpng16.so.16 libmpfr.so.6 libgmp.so.10 libfftw3.so.3; do
    [[ -f $out/$need ]] || die "$need was not found among glint's libraries (is it installed? ldd: $bin)"
done
# libpng needs libz; make sure it came along whenever libpng names it.
if (( have_objdump )) && objdump -p "$out/libpng16.so.16" | grep 'NEEDED *libz.so.1' >/dev/null; then
    [[ -f $out/libz.so.1 ]] || die "libpng16 needs libz.so.1, which was not copied"
fi

# Every bundled library must resolve inside the bundle (or to glibc).
check=$(LD_LIBRARY_PATH="$root/$out:$root/$out/fallback" ldd "$out/glint") || die "ldd of the bundled binary failed"
while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    is_glibc "$name" && continue
    [[ $path == "$root/$out/"* ]] || die "bundled glint resolves $name to $path, outside the bundle"
done <<<"$check"

# The newest glibc symbol version anything in the bundle needs: the target's glibc must have it.
glibc_of() { # the newest GLIBC_x.y symbol version the given files need
    local v
    v=$(for f in "$@"; do objdump -T "$f"; done | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -n 1)
    echo "${v#GLIBC_}"
}
glibc_needed=unknown glibc_fallback=unknown
if (( have_objdump )); then
    glibc_needed=$(glibc_of "$out/glint" "$out"/*.so.*)
    glibc_fallback=$(glibc_of "$out"/fallback/*.so.*)
fi

install -m 0755 scripts/gpu/gpu-run.sh "$out/run.sh"
cp docs/images/ring-texture.png "$out/data/ring-texture.png"
cp docs/locations/misiurewicz-4-1-1e10000.kfr "$out/data/misiurewicz-4-1-1e10000.kfr"

version=$(env -i LD_LIBRARY_PATH="$root/$out" "$out/glint" --version 2>&1) \
    || die "the bundled binary does not start in an emptied environment: $version"
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=""
if [[ -n $(git status --porcelain -- Sources Kernels Package.swift 2>/dev/null) ]]; then
    dirty=" (working tree with uncommitted changes in Sources/, Kernels/ or Package.swift)"
fi

cat >"$out/README.txt" <<EOF
Glint GPU bundle
================

$version, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m) from commit $commit$dirty.
Needs: x86-64 Linux with glibc >= $glibc_needed, an AVX2 + FMA CPU (Haswell or later),
bash, coreutils, tar and gzip. No Swift toolchain and no network.

Run on the GPU machine (the vendor's OpenCL driver installed):

    tar xzf glint-gpu.tar.gz && cd glint-gpu
    ./run.sh                       # full run on --device gpu: results in ./glint-gpu-results
    ./run.sh --quick               # every step at tiny sizes (a minute or two)
    ./run.sh --help                # all options (--out, --device, --vendors, --dry-run, ...)

It finds the driver (NVIDIA: libnvidia-opencl.so.1), writes its own OpenCL vendors folder,
runs the checks and benchmarks, and packs everything into ONE archive, DIR.tar.gz next to the
output folder DIR. Exit status 0 when every step ran and every parity check passed.

Contents:
    glint             the CLI (Swift runtime linked in, stripped)
    run.sh            the one-command GPU run
    lib*.so.*         libraries beyond glibc, found by the binary's RUNPATH (\$ORIGIN) and LD_LIBRARY_PATH;
                      libOpenCL.so.1 is ocl-icd's ICD loader (it honours OCL_ICD_VENDORS)
    fallback/         libstdc++ and libgcc_s: used only when the machine has none of its own
                      (these two need glibc >= $glibc_fallback)
    data/             ring-texture.png for the image-julia fractal; a deep-zoom location at 1e10000

The Glint repository's docs/GPU.md explains the results and the NVIDIA specifics.
EOF

tar -czf bundle/glint-gpu.tar.gz -C bundle glint-gpu || die "tar failed"
size=$(stat -c %s bundle/glint-gpu.tar.gz)
say "libraries: ${copied[*]}"
say "needs glibc >= $glibc_needed on the target (the fallback C++ runtime: >= $glibc_fallback)"
echo "$root/bundle/glint-gpu.tar.gz  $size bytes ($(du -h bundle/glint-gpu.tar.gz | cut -f1))"
