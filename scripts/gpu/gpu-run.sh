#!/bin/bash
# Glint on a GPU machine, in one command: the run.sh of the bundle that scripts/gpu/gpu-bundle.sh builds.
#
#   ./run.sh [--quick] [--out DIR] [--device D] [--vendors DIR] [--deadline SECONDS]
#            [--bench-workloads "LIST"] [--keep-work] [--dry-run]
#
# Finds the vendor's OpenCL driver and writes an ICD vendors folder for it, records the machine,
# lists the devices, checks every workload on the device against the Swift CPU path
# (glint compare), renders the book cover at 1200x800/500 spp and a 4K fractal zoom with timings,
# runs the benchmark suite, and packs everything into ONE archive, DIR.tar.gz.
#
#   --out DIR          results folder (default ./glint-gpu-results); the archive is DIR.tar.gz
#   --device D         the device to test (default gpu; e.g. opencl:0)
#   --vendors DIR      use this OpenCL vendors folder (*.icd files) instead of searching for drivers
#   --quick            tiny sizes, few samples and frames, a short bench: every step in a minute or two
#   --deadline S       skip what would end later than S seconds after the start (default: no limit)
#   --bench-workloads  workloads for glint bench (default: all; with --quick: pulse)
#   --keep-work        keep DIR/work (inputs, every animation frame, caches); never archived
#   --dry-run          print the glint commands instead of running them (probes and archive still run)
#   (GLINT_BIN=PATH runs another glint binary than the one next to this script.)
#
# Needs bash, coreutils, tar and gzip; works in an emptied environment (env -i).
# Exit status: 0 when every step ran and every parity check passed, 1 otherwise, 2 for bad usage.
# The archive is written in every case.

set -u
umask 022
export PATH="/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}"
export LC_ALL=C

usage() {
    local line
    while IFS= read -r line; do
        [[ $line == '#!'* ]] && continue
        [[ $line == '#'* ]] || break
        line=${line#\#}; printf '%s\n' "${line# }"
    done <"${BASH_SOURCE[0]}"
}
usage_error() { echo "run.sh: $*" >&2; echo "run.sh: see ./run.sh --help" >&2; exit 2; }

OUT=./glint-gpu-results DEVICE=gpu VENDORS_ARG="" QUICK=0 DEADLINE=0 BENCH_WORKLOADS="" BENCH_SET=0
KEEP_WORK=0 DRY=0
while (( $# )); do
    case $1 in
        --out) (( $# >= 2 )) || usage_error "--out needs a folder"; OUT=$2; shift ;;
        --out=*) OUT=${1#*=} ;;
        --device) (( $# >= 2 )) || usage_error "--device needs a value"; DEVICE=$2; shift ;;
        --device=*) DEVICE=${1#*=} ;;
        --vendors) (( $# >= 2 )) || usage_error "--vendors needs a folder"; VENDORS_ARG=$2; shift ;;
        --vendors=*) VENDORS_ARG=${1#*=} ;;
        --deadline) (( $# >= 2 )) || usage_error "--deadline needs seconds"; DEADLINE=$2; shift ;;
        --deadline=*) DEADLINE=${1#*=} ;;
        --bench-workloads) (( $# >= 2 )) || usage_error "--bench-workloads needs a list"; BENCH_WORKLOADS=$2; BENCH_SET=1; shift ;;
        --bench-workloads=*) BENCH_WORKLOADS=${1#*=}; BENCH_SET=1 ;;
        --quick) QUICK=1 ;;
        --keep-work) KEEP_WORK=1 ;;
        --dry-run) DRY=1 ;;
        -h|--help) usage; exit 0 ;;
        *) usage_error "unknown argument '$1'" ;;
    esac
    shift
done
[[ $DEADLINE =~ ^[0-9]+$ ]] || usage_error "--deadline takes whole seconds, got '$DEADLINE'"
[[ -n $OUT && -n $DEVICE ]] || usage_error "--out and --device must not be empty"
[[ $BENCH_WORKLOADS == all ]] && BENCH_WORKLOADS=""
(( BENCH_SET || ! QUICK )) || BENCH_WORKLOADS=pulse

BUNDLE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) || usage_error "cannot find the bundle folder"
GLINT=${GLINT_BIN:-$BUNDLE/glint}
if [[ -n $VENDORS_ARG ]]; then
    [[ -d $VENDORS_ARG ]] || usage_error "--vendors $VENDORS_ARG: no such folder"
    VENDORS_ARG=$(cd "$VENDORS_ARG" && pwd)
fi
mkdir -p "$OUT" || usage_error "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
[[ $OUT != / ]] || usage_error "--out must not be /"
ARCHIVE=$OUT.tar.gz
WORK=$OUT/work
LOG=$OUT/run.log
# Results of an earlier run in the same folder would be mixed up with these.
rm -rf "$OUT/env" "$OUT/parity" "$OUT/bench" "$OUT/cover" "$OUT/animation" "$OUT/vendors" "$WORK" "$OUT/goals" \
    "$OUT/goals.md" "$OUT/run.log" "$OUT/summary.md" "$OUT/parity.tsv" "$OUT/devices.txt" "$OUT/devices.json" "$ARCHIVE"
mkdir -p "$OUT/env" "$OUT/parity" "$OUT/bench" "$OUT/cover" "$OUT/animation" "$WORK/tmp" "$WORK/inputs"
: >"$LOG"

# ---------------------------------------------------------------- time and logging

now_us() {
    local t=${EPOCHREALTIME:-}
    if [[ -n $t ]]; then t=${t/[.,]/}; echo "$((10#$t))"; return; fi
    t=$(date +%s%N)
    if [[ $t =~ ^[0-9]+$ ]]; then echo "$(( t / 1000 ))"; else echo "$(( $(date +%s) * 1000000 ))"; fi
}
secs() { # microseconds -> seconds with 2 decimals
    local us=$1
    printf '%d.%02d' "$(( us / 1000000 ))" "$(( (us % 1000000) / 10000 ))"
}
START_US=$(now_us)
START_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
elapsed_us() { echo "$(( $(now_us) - START_US ))"; }

log() { printf '%s\n' "$*" >>"$LOG"; }
say() { printf 'run.sh: %s\n' "$*"; log "# $*"; }

# Steps and their outcome, for summary.md.
STEP_NAMES=() STEP_STATUS=() STEP_SECS=() STEP_NOTES=()
record_step() { # name status seconds note
    STEP_NAMES+=("$1"); STEP_STATUS+=("$2"); STEP_SECS+=("$3"); STEP_NOTES+=("$4")
    printf 'run.sh: %-22s %-8s %8s s  %s\n' "$1" "$2" "$3" "$4"
    log "# step $1: $2 ($3 s) $4"
}

# A command line as one string, quoting only the words that need it.
shell_join() {
    local out="" w
    for w in "$@"; do
        if [[ $w =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then out+="$w "; else out+="$(printf '%q' "$w") "; fi
    done
    printf '%s' "${out% }"
}

HAVE_TIMEOUT=0
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1

# run_cmd NAME LIMIT_SECONDS CMD...: runs CMD (stdin from /dev/null), logs the command line, its
# output, exit status and wall time to run.log. Sets RC (124 on a timeout, 125 when skipped for
# the deadline), SECS (wall seconds), T0/T1 (date +%s.%N before and after) and OUTFILE (the output).
RC=0 SECS=0.00 T0="" T1="" OUTFILE=$WORK/tmp/last.txt
run_cmd() {
    local name=$1 limit=$2; shift 2
    local cmdline t0 t1
    cmdline=$(shell_join "$@")
    : >"$OUTFILE"
    if (( DRY )); then
        printf '%s\n' "$cmdline"
        log "=== [$name] (dry run) \$ $cmdline"
        RC=0 SECS=0.00 T0="" T1=""
        return 0
    fi
    if (( DEADLINE > 0 )); then
        local left
        left=$(( DEADLINE - $(elapsed_us) / 1000000 - 20 ))
        if (( left < 5 )); then
            log "=== [$name] SKIPPED (deadline of ${DEADLINE}s reached) \$ $cmdline"
            echo "skipped: the deadline of ${DEADLINE}s was reached" >"$OUTFILE"
            RC=125 SECS=0.00 T0="" T1=""
            return 0
        fi
        (( limit > left )) && limit=$left
    fi
    log "=== [$name] $(date -u +%Y-%m-%dT%H:%M:%SZ) (limit ${limit}s) \$ $cmdline"
    T0=$(date +%s.%N); t0=$(now_us)
    if (( HAVE_TIMEOUT )); then
        timeout -k 10 "$limit" "$@" >"$OUTFILE" 2>&1 </dev/null
    else
        "$@" >"$OUTFILE" 2>&1 </dev/null
    fi
    RC=$?
    t1=$(now_us); T1=$(date +%s.%N)
    SECS=$(secs $(( t1 - t0 )))
    cat "$OUTFILE" >>"$LOG"
    local note=""
    (( RC == 124 || RC == 137 )) && note=" (timed out after ${limit}s)"
    log "=== [$name] exit $RC after $SECS s$note"
    return 0
}

not_ok() { # the status word of a step that did not succeed, from its exit code
    if (( $1 == 125 )); then echo SKIPPED; else echo FAILED; fi
}

last_line() { # the last non-empty line of a file
    local line last=""
    while IFS= read -r line || [[ -n $line ]]; do [[ -n ${line// /} ]] && last=$line; done <"$1"
    printf '%s' "$last"
}

# ---------------------------------------------------------------- sizes per mode

# Each setting with --quick, then without: sizes, samples and frames, then the time limits (seconds)
# of the steps.
SIZES=(
#   setting       quick     full
    FRACTAL_SIZE  32x24     1920x1080
    DEEP_IT       300       2000
    IMG_SIZE      48x32     1920x1080
    RUNS          1         3
    RT_SIZE       32x24     600x400
    RT_SPP        2         64
    RT_DEPTH      4         50
    MIST_FRAMES   3         30
    PULSE_SIZE    32x24     1920x1080
    PULSE_FRAMES  5         120
    ISO_RADIUS    4         24
    ISO_SS        2         4
    COVER_SIZE    32x24     1200x800
    COVER_SPP     2         500
    COVER_DEPTH   4         50
    ANIM_SIZE     64x36     3840x2160
    ANIM_FRAMES   4         60
    ANIM_ZOOM     1e3       1e5
    ANIM_IT       200       2000
    LIM_PARITY    240       180
    LIM_INPUT     120       120
    LIM_COVER     300       240
    LIM_ANIM      300       300
    LIM_BENCH     300       420
    LIM_CPU       300       300
    GOAL_4K       64x36     3840x2160
    GOAL_HD       64x36     1920x1080
    LIM_GOAL      120       120
)
pick_sizes() { # sets each setting to its value in column 1 (quick) or 2 (full)
    local i column=$(( QUICK ? 1 : 2 ))
    for (( i = 0; i < ${#SIZES[@]}; i += 3 )); do
        printf -v "${SIZES[i]}" '%s' "${SIZES[i + column]}"
    done
}
pick_sizes
if (( QUICK )); then
    MODE=quick BENCH_SUITE=(--quick --seconds 0.02)
else
    MODE=full BENCH_SUITE=(--full)
fi
# shellcheck disable=SC2206  # the list is meant to split into words
BENCH_LIST=($BENCH_WORKLOADS)

say "Glint GPU run ($MODE), device '$DEVICE', results in $OUT"
[[ -x $GLINT ]] || say "error: $GLINT is missing or not executable (run.sh belongs next to glint in the bundle); every step will fail"
log "# started $START_DATE; bundle $BUNDLE"

# ---------------------------------------------------------------- environment

# A minimal environment (env -i) has no HOME; drivers and glint want one.
if [[ -z ${HOME:-} || ! -d ${HOME:-/nonexistent} || ! -w ${HOME:-/nonexistent} ]]; then
    export HOME=$WORK/home
    mkdir -p "$HOME"
fi
export GLINT_CACHE_DIR=$WORK/glint-cache
export TMPDIR=$WORK/tmp
unset GLINT_DEVICE GLINT_KERNELS GLINT_KERNEL_CACHE
mkdir -p "$GLINT_CACHE_DIR"

# Libraries: the bundle first (ocl-icd's loader must be the one that reads OCL_ICD_VENDORS); the
# C++ runtime from fallback/ only where the system has none.
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH="$BUNDLE${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
FALLBACK_NOTE="not needed (the system has libstdc++ and libgcc_s)"
if [[ -d $BUNDLE/fallback ]]; then
    trace=$(LD_TRACE_LOADED_OBJECTS=1 "$GLINT" 2>&1)
    if [[ $trace == *"not found"* ]]; then
        export LD_LIBRARY_PATH="$BUNDLE:$BUNDLE/fallback${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
        FALLBACK_NOTE="used: the system lacks a library glint needs"
    fi
fi

# ---------------------------------------------------------------- OpenCL vendors folder

t0=$(now_us)
VENDOR_NOTE=""
NVIDIA_LIB=""
ICD_WRITTEN=() candidates=()
if [[ -n $VENDORS_ARG ]]; then
    VENDORS=$VENDORS_ARG
    VENDOR_NOTE="given with --vendors"
else
    VENDORS=$OUT/vendors
    mkdir -p "$VENDORS"
    # NVIDIA's OpenCL driver library: the loader cache first, then the usual folders.
    candidates=()
    if command -v ldconfig >/dev/null 2>&1; then
        while IFS= read -r line; do
            [[ $line == *libnvidia-opencl.so* && $line == *x86-64* && $line == *'=> '* ]] && candidates+=("${line##*=> }")
        done < <(ldconfig -p 2>/dev/null)
    fi
    for dir in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu \
               /usr/lib/x86_64-linux-gnu/nvidia/current /usr/lib64 /usr/lib64/nvidia /usr/lib \
               /usr/lib/nvidia /lib/x86_64-linux-gnu /lib64; do
        candidates+=("$dir/libnvidia-opencl.so.1")
        for f in "$dir"/libnvidia-opencl.so.[0-9]*.*; do [[ -e $f ]] && candidates+=("$f"); done
    done
    for c in "${candidates[@]}"; do
        if [[ -f $c ]]; then NVIDIA_LIB=$c; break; fi
    done
    if [[ -n $NVIDIA_LIB ]]; then
        printf '%s\n' "$NVIDIA_LIB" >"$VENDORS/nvidia.icd"
        ICD_WRITTEN+=("nvidia.icd -> $NVIDIA_LIB")
    fi
    # Take over the system's ICDs (and those of an OCL_ICD_VENDORS folder already set), except
    # another entry for the NVIDIA library found above (it would show the GPU twice).
    sources=(/etc/OpenCL/vendors/*.icd)
    [[ -n ${OCL_ICD_VENDORS:-} && -d ${OCL_ICD_VENDORS:-} ]] && sources+=("$OCL_ICD_VENDORS"/*.icd)
    for icd in "${sources[@]}"; do
        [[ -f $icd ]] || continue
        lib=""
        IFS= read -r lib <"$icd" || [[ -n $lib ]]
        lib=${lib%$'\r'}
        [[ -n $lib ]] || continue
        if [[ -n $NVIDIA_LIB && ( ${lib##*/} == "${NVIDIA_LIB##*/}" || ${lib##*/} == libnvidia-opencl.so* ) ]]; then
            continue
        fi
        base=${icd##*/}
        dest=$VENDORS/system-$base
        [[ -e $dest ]] && dest=$VENDORS/env-$base
        printf '%s\n' "$lib" >"$dest"
        ICD_WRITTEN+=("${dest##*/} -> $lib (from $icd)")
    done
    if [[ -n $NVIDIA_LIB ]]; then VENDOR_NOTE="NVIDIA driver: $NVIDIA_LIB"; else VENDOR_NOTE="no libnvidia-opencl found"; fi
    VENDOR_NOTE+="; ${#ICD_WRITTEN[@]} ICD file(s) written"
fi
export OCL_ICD_VENDORS=$VENDORS
# Keep NVIDIA's compiled-kernel cache in the work area, out of the user's home.
[[ -n ${CUDA_CACHE_PATH:-} ]] || export CUDA_CACHE_PATH=$WORK/nv-compute-cache

icd_count=0
{
    echo "OCL_ICD_VENDORS=$OCL_ICD_VENDORS ($VENDOR_NOTE)"
    echo
    for icd in "$VENDORS"/*.icd; do
        [[ -f $icd ]] || continue
        icd_count=$(( icd_count + 1 ))
        printf '%s: %s\n' "${icd##*/}" "$(<"$icd")"
    done
    (( icd_count )) || echo "(no .icd files)"
    echo
    echo "NVIDIA library candidates looked at, in order:"
    for c in "${candidates[@]+"${candidates[@]}"}"; do
        if [[ -e $c ]]; then echo "  found  $c"; else echo "  -      $c"; fi
    done
    echo
    echo "/etc/OpenCL/vendors:"
    for icd in /etc/OpenCL/vendors/*; do [[ -e $icd ]] && printf '  %s: %s\n' "${icd##*/}" "$(<"$icd")"; done
} >"$OUT/env/opencl-vendors.txt" 2>&1
if (( icd_count > 0 )); then
    record_step opencl-vendors ok "$(secs $(( $(now_us) - t0 )))" "$VENDOR_NOTE; $icd_count .icd in $OCL_ICD_VENDORS"
else
    record_step opencl-vendors FAILED "$(secs $(( $(now_us) - t0 )))" "no OpenCL driver found ($VENDOR_NOTE)"
fi

# ---------------------------------------------------------------- the machine

t0=$(now_us)
{
    echo "date: $START_DATE"
    echo "uname -a: $(uname -a 2>&1)"
    [[ -r /etc/os-release ]] && { echo; cat /etc/os-release; }
    echo
    echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)"
    echo "cpu cores online: $(nproc 2>/dev/null || echo unknown)"
    [[ -r /proc/cpuinfo ]] && while IFS= read -r line; do
        if [[ $line == "model name"* ]]; then echo "cpu: ${line#*: }"; break; fi
    done </proc/cpuinfo
    [[ -r /proc/meminfo ]] && while IFS= read -r line; do
        [[ $line == MemTotal:* ]] && { echo "memory: ${line#MemTotal:}"; break; }
    done </proc/meminfo
    echo
    echo "mode: $MODE; device: $DEVICE; bundle: $BUNDLE; output: $OUT"
    echo "PATH=$PATH"
    echo "HOME=$HOME"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH (fallback C++ runtime $FALLBACK_NOTE)"
    echo "OCL_ICD_VENDORS=$OCL_ICD_VENDORS"
    echo "GLINT_CACHE_DIR=$GLINT_CACHE_DIR"
    echo "CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-} CUDA_CACHE_DISABLE=${CUDA_CACHE_DISABLE:-}"
    echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-} NVIDIA_VISIBLE_DEVICES=${NVIDIA_VISIBLE_DEVICES:-}"
    echo
    echo "glint --version: $("$GLINT" --version 2>&1)"
    echo
    echo "libraries glint loads (LD_TRACE_LOADED_OBJECTS=1):"
    LD_TRACE_LOADED_OBJECTS=1 "$GLINT" 2>&1
} >"$OUT/env/system.txt" 2>&1
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi >"$OUT/env/nvidia-smi.txt" 2>&1
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,compute_mode \
        --format=csv >>"$OUT/env/nvidia-smi.txt" 2>&1
    nvidia-smi -q >"$OUT/env/nvidia-smi-q.txt" 2>&1
    SMI_NOTE="nvidia-smi recorded"
else
    echo "nvidia-smi: not found on PATH ($PATH)" >"$OUT/env/nvidia-smi.txt"
    SMI_NOTE="no nvidia-smi"
fi
if command -v ldconfig >/dev/null 2>&1; then
    {
        echo "ldconfig -p, OpenCL and NVIDIA entries:"
        while IFS= read -r line; do
            [[ $line == *OpenCL* || $line == *opencl* || $line == *nvidia* || $line == *cuda* ]] && echo "$line"
        done < <(ldconfig -p 2>&1)
    } >"$OUT/env/ldconfig.txt"
fi
if command -v clinfo >/dev/null 2>&1; then
    clinfo >"$OUT/env/clinfo.txt" 2>&1
    SMI_NOTE+="; clinfo recorded"
fi
if version_line=$("$GLINT" --version 2>&1); then
    record_step system ok "$(secs $(( $(now_us) - t0 )))" "$version_line; $SMI_NOTE"
else
    record_step system FAILED "$(secs $(( $(now_us) - t0 )))" "glint does not start: $version_line"
fi

# ---------------------------------------------------------------- devices

t0=$(now_us)
run_cmd devices 60 "$GLINT" devices --verbose
cp "$OUTFILE" "$OUT/devices.txt"
rc1=$RC
run_cmd devices-json 60 "$GLINT" devices --json
cp "$OUTFILE" "$OUT/devices.json"
rc2=$RC
# The chosen device must resolve and run a kernel: one 8x8 pulse frame.
run_cmd device-probe 120 "$GLINT" pulse --frames 1 --size 8x8 --device "$DEVICE" -o "$WORK/probe"
rc3=$RC
probe_line=$(last_line "$OUTFILE")
s1=$(secs $(( $(now_us) - t0 )))
if (( rc1 == 0 && rc2 == 0 && rc3 == 0 )); then
    record_step devices ok "$s1" "device $DEVICE: $probe_line"
else
    record_step devices FAILED "$s1" "exit devices $rc1, --json $rc2, probe on $DEVICE $rc3: $probe_line"
fi

# ---------------------------------------------------------------- the goals (docs/GPU.md)

# Measured first, so that a run cut short by --deadline still has them; the table is in summary.md
# and goals.md. Each timed command runs once after a warm-up that builds its programs.
mkdir -p "$OUT/goals"
GOALS=()        # rows: goal | target | measured | met
goal_row() { GOALS+=("| $1 | $2 | $3 | $4 |"); }
HAVE_AWK=0
command -v awk >/dev/null 2>&1 && HAVE_AWK=1
# glint bench --csv: RFC 4180, a header row and a row a case; columns are read by their header name.
# CSV_AWK goes before an awk program: it joins a quoted field's lines, skips the header (col[NAME]
# is the column's number) and splits each row into f[1..].
CSV_AWK='
function csv_split(line, out,    n, i, c, v, q) {
    n = 0; v = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (q) { if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { v = v c; i++ } else q = 0 } else v = v c }
        else if (c == "\"") q = 1
        else if (c == ",") { out[++n] = v; v = "" }
        else v = v c
    }
    out[++n] = v
    return n
}
{ while (gsub(/"/, "&") % 2 && (getline _more) > 0) $0 = $0 "\n" _more }
FNR == 1 { split("", col); _n = csv_split($0, _h); for (_i = 1; _i <= _n; _i++) col[_h[_i]] = _i; next }
{ split("", f); csv_split($0, f) }
'
# The same in bash (no awk needed): splits one CSV row into the array CSV; fails while a quoted
# field is still open (the row goes on on the next line).
csv_split() {
    local line=$1 v="" c i q=0
    CSV=()
    for (( i = 0; i < ${#line}; i++ )); do
        c=${line:i:1}
        if (( q )); then
            if [[ $c == '"' ]]; then
                if [[ ${line:i+1:1} == '"' ]]; then v+=$c; i=$(( i + 1 )); else q=0; fi
            else v+=$c; fi
        elif [[ $c == '"' ]]; then q=1
        elif [[ $c == , ]]; then CSV+=("$v"); v=""
        else v+=$c; fi
    done
    CSV+=("$v")
    (( ! q ))
}
calc() { (( HAVE_AWK )) && awk "BEGIN { printf \"%.4g\", $1 }" 2>/dev/null; } # floating point, where awk exists
meets() { (( HAVE_AWK )) && [[ $(awk "BEGIN { print ($1) ? 1 : 0 }" 2>/dev/null) == 1 ]]; }
not_measured() { # the measured cell of a goal whose command did not give a figure
    if (( DRY )); then echo "not measured (--dry-run)"
    elif (( RC == 125 )); then echo "not measured (the --deadline was reached)"
    else echo "failed (exit $RC)"; fi
}
unmet() { (( DRY || RC == 125 )) && echo "-" || echo "no"; }
figure() { # the number after a label in a glint summary line: figure "frames/s" LINE
    local re="([0-9][0-9.]*) $1"
    [[ $2 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"
}

t0=$(now_us)
run_cmd peak "$LIM_GOAL" "$GLINT" devices --peak --device "$DEVICE"
cp "$OUTFILE" "$OUT/goals/peak.txt"
peak_rc=$RC
run_cmd peak-json "$LIM_GOAL" "$GLINT" devices --peak --json
cp "$OUTFILE" "$OUT/goals/peak.json"
if (( peak_rc == 0 && RC == 0 )); then
    record_step peak ok "$(secs $(( $(now_us) - t0 )))" "$(grep -m1 'FMA' "$OUT/goals/peak.txt" | tr -s ' ' | sed 's/^ //'); $(grep -m1 'copy ' "$OUT/goals/peak.txt" | tr -s ' ' | sed 's/^ //')"
else
    record_step peak "$(not_ok "$peak_rc")" "$(secs $(( $(now_us) - t0 )))" "exit $peak_rc/$RC: $(last_line "$OUTFILE")"
fi
hostcopy=$(grep -m1 'host copies' "$OUT/goals/peak.txt" 2>/dev/null | tr -s ' ' | sed 's/^ *host copies *//')
goal_row "copies between host and device (pinned staging; the pinned peer reached 52-55 GB/s on the H100 host)" "-" "${hostcopy:-not measured}" "-"

# The cover, whole command, programs already built.
GOAL_COVER=(rtow --scene cover --size "$COVER_SIZE" --spp "$COVER_SPP" --depth "$COVER_DEPTH" --device "$DEVICE" -o "$WORK/tmp/goal-cover.png")
run_cmd goal-cover-warmup "$LIM_COVER" "$GLINT" "${GOAL_COVER[@]}"
run_cmd goal-cover "$LIM_COVER" "$GLINT" "${GOAL_COVER[@]}"
cp "$OUTFILE" "$OUT/goals/cover.txt"
if (( RC == 0 && ! DRY )); then
    met=no; meets "$SECS <= 0.30" && met=yes
    goal_row "the cover, ${COVER_SIZE}, $COVER_SPP spp, depth $COVER_DEPTH, whole command" "≤ 0.30 s" "$SECS s ($(last_line "$OUTFILE" | grep -o 'kernels [0-9.]* ms'))" "$met"
    record_step goal-cover ok "$SECS" "$(last_line "$OUTFILE")"
else
    goal_row "the cover, whole command" "≤ 0.30 s" "$(not_measured)" "$(unmet)"
    record_step goal-cover "$( (( DRY )) && echo ok || not_ok "$RC")" "$SECS" "exit $RC: $(last_line "$OUTFILE")"
fi

# Zooms to PNG (and to a video where ffmpeg is installed): 60 frames, the 4K zoom of step 7.
zoom_goal() { # name size target_fps extra-args...
    local name=$1 size=$2 target=$3; shift 3
    local args=(fractal mandelbrot --center -0.743643887037151,0.131825904205330 --ramp "zoom=1:$ANIM_ZOOM"
                --precision double --iterations "$ANIM_IT" --smooth --bailout 256 --palette fire --device "$DEVICE")
    rm -rf "$WORK/goal-zoom"
    run_cmd "$name-warmup" "$LIM_GOAL" "$GLINT" "${args[@]}" --size "$size" --frames 2 -o "$WORK/goal-zoom"
    rm -rf "$WORK/goal-zoom"
    run_cmd "$name" "$LIM_GOAL" "$GLINT" "${args[@]}" --size "$size" --frames "$ANIM_FRAMES" -o "$WORK/goal-zoom" "$@"
    cp "$OUTFILE" "$OUT/goals/$name.txt"
    local line fps whole met=no shown="-"
    [[ $target == - ]] || shown="≥ $target frames/s"
    line=$(last_line "$OUTFILE")
    fps=$(figure "frames/s" "$line")
    whole=$(calc "$ANIM_FRAMES / $SECS")
    rm -rf "$WORK/goal-zoom" "$WORK/goal-zoom.mp4"
    if (( RC == 0 )) && [[ -n $fps ]]; then
        [[ $target == - ]] && met=- || { meets "$fps >= $target" && met=yes; }
        goal_row "$ANIM_FRAMES-frame zoom at $size$( (( $# )) && echo ' with --video')" "$shown" "$fps frames/s (whole command ${whole:-?} frames/s, $SECS s)" "$met"
        record_step "$name" ok "$SECS" "$line"
    else
        goal_row "$ANIM_FRAMES-frame zoom at $size$( (( $# )) && echo ' with --video')" "$shown" "$(not_measured)" "$( [[ $target == - ]] && echo - || unmet)"
        record_step "$name" "$(not_ok "$RC")" "$SECS" "exit $RC: $line"
    fi
}
zoom_goal goal-zoom-4k "$GOAL_4K" 150
zoom_goal goal-zoom-hd "$GOAL_HD" -
if command -v ffmpeg >/dev/null 2>&1; then
    zoom_goal goal-zoom-hd-video "$GOAL_HD" 200 --video "$WORK/goal-zoom.mp4"
else
    goal_row "$ANIM_FRAMES-frame zoom at $GOAL_HD with --video" "≥ 200 frames/s" "not measured: no ffmpeg on this machine" "-"
fi

# The deep zoom at 1e10000 (the reference orbit on the host, the pixels on the device).
if (( QUICK )); then
    goal_row "deep zoom 1e10000 at 480x320" "≤ 2 s" "not measured (--quick)" "-"
else
    run_cmd goal-deep "$LIM_GOAL" "$GLINT" fractal --location "$BUNDLE/data/misiurewicz-4-1-1e10000.kfr" --size 480x320 \
        --smooth --palette ocean --device "$DEVICE" -o "$WORK/tmp/goal-deep.png"
    cp "$OUTFILE" "$OUT/goals/deep.txt"
    if (( RC == 0 && ! DRY )); then
        met=no; meets "$SECS <= 2" && met=yes
        goal_row "deep zoom 1e10000 at 480x320, whole command" "≤ 2 s" "$SECS s" "$met"
        record_step goal-deep ok "$SECS" "$(last_line "$OUTFILE")"
    else
        goal_row "deep zoom 1e10000 at 480x320" "≤ 2 s" "$(not_measured)" "$(unmet)"
        record_step goal-deep "$( (( DRY )) && echo ok || not_ok "$RC")" "$SECS" "exit $RC: $(last_line "$OUTFILE")"
    fi
fi

# Device-sized bench cases: wall against kernels + copies, and the fraction of the peak.
DEVICE_BENCH=(--device-sized)
(( QUICK )) && DEVICE_BENCH+=(--seconds 0.02 --case f32)
run_cmd bench-device "$LIM_BENCH" "$GLINT" bench "${DEVICE_BENCH[@]}" --device "$DEVICE" --json "$OUT/goals/bench-device.json" \
    --csv "$OUT/goals/bench-device.csv" --markdown "$OUT/goals/bench-device.md"
cp "$OUTFILE" "$OUT/goals/bench-device.txt"
if (( RC == 0 )) && [[ -f $OUT/goals/bench-device.csv ]]; then
    record_step bench-device ok "$SECS" "$(grep -c '^' "$OUT/goals/bench-device.csv") lines"
    if (( HAVE_AWK )); then
        # Per case: id, wall, kernel and copy medians (ms), wall / (kernels + copies), the share of the peak (%).
        while IFS='|' read -r id wall kernel copy ratio fraction; do
            met=no; meets "$ratio <= 1.25" && met=yes
            goal_row "$id: wall ≤ 1.25 × (kernels + copies)" "≤ 1.25" "$ratio ($wall ms; kernels $kernel, copies $copy ms)" "$met"
            case $id in
                fractal/*) target=50; what="of the FMA peak" ;;
                blur/*|iso/*) target=50; what="of the bandwidth" ;;
                *) target=""; what="" ;;
            esac
            if [[ -n $target && -n $fraction ]]; then
                met=no; meets "$fraction >= $target" && met=yes
                goal_row "$id: kernels $what" "≥ $target%" "$fraction%" "$met"
            fi
        done < <(awk "$CSV_AWK"'f[col["status"]] != "skipped" {
                    k = f[col["kernel_ms_median"]] + 0; c = f[col["copy_ms_median"]] + 0; w = f[col["wall_ms_median"]] + 0
                    r = (k + c > 0) ? w / (k + c) : 0
                    p = f[col["peak_fraction"]]; p = (p == "") ? "" : sprintf("%.1f", p * 100)
                    printf "%s|%.3g|%.3g|%.3g|%.3f|%s\n", f[col["id"]], w, k, c, r, p }' "$OUT/goals/bench-device.csv")
    else
        goal_row "device-sized bench cases" "-" "see goals/bench-device.md (no awk here to compute the ratios)" "-"
    fi
else
    record_step bench-device "$(not_ok "$RC")" "$SECS" "exit $RC: $(last_line "$OUTFILE")"
    goal_row "device-sized bench cases" "-" "$(not_measured)" "$(unmet)"
fi
# auto after a calibration: each standard case on the Swift path and on the device, and auto's
# pick against the faster of the two (the calibration is written into this run's own cache).
if (( QUICK )); then
    goal_row "auto within 1.2 × the faster backend on every bench case" "≤ 1.2" "not measured (--quick)" "-"
else
    run_cmd calibrate "$LIM_GOAL" "$GLINT" devices --calibrate
    cp "$OUTFILE" "$OUT/goals/calibrate.txt"
    cal_rc=$RC
    run_cmd bench-auto-cpu "$LIM_BENCH" "$GLINT" bench --standard --seconds 0.3 --device cpu --csv "$OUT/goals/bench-auto-cpu.csv"
    cpu_rc=$RC
    run_cmd bench-auto-device "$LIM_BENCH" "$GLINT" bench --standard --seconds 0.3 --device "$DEVICE" --csv "$OUT/goals/bench-auto-device.csv"
    if (( cal_rc == 0 && cpu_rc == 0 && RC == 0 && HAVE_AWK )) && [[ -f $OUT/goals/bench-auto-cpu.csv && -f $OUT/goals/bench-auto-device.csv ]]; then
        record_step goal-auto ok "$SECS" "calibrated; standard suite on cpu and $DEVICE"
        # Columns: id, wall median, auto (true where auto picks that file's backend; a case auto
        # sends to neither, a third device, is left out).
        worst=$(awk "$CSV_AWK"'{ id = f[col["id"]]; wall = f[col["wall_ms_median"]] + 0; auto = f[col["auto"]] }
            FILENAME ~ /bench-auto-cpu[.]csv$/ { cpu[id] = wall; cauto[id] = auto; next }
            { dev = wall; c = cpu[id]; if (!c || !dev) next
              if (auto == "true") picked = dev; else if (cauto[id] == "true") picked = c; else next
              n++; best = (dev < c) ? dev : c
              r = picked / best; if (r > w) { w = r; worst = id } }
            END { printf "%d %.3f %s", n, w, worst }' "$OUT/goals/bench-auto-cpu.csv" "$OUT/goals/bench-auto-device.csv")
        cases=${worst%% *} worst=${worst#* }
        if (( cases > 0 )); then
            met=no; meets "${worst%% *} <= 1.2" && met=yes
            goal_row "auto within 1.2 × the faster backend on every standard bench case (after --calibrate)" "≤ 1.2" "worst ${worst%% *} of $cases cases (${worst#* })" "$met"
        else
            goal_row "auto within 1.2 × the faster backend on every standard bench case" "≤ 1.2" "no case matched in the two runs" "no"
        fi
    else
        record_step goal-auto "$( (( DRY )) && echo ok || not_ok "$RC")" "$SECS" "calibrate exit $cal_rc, bench cpu $cpu_rc, bench $DEVICE $RC$( (( HAVE_AWK )) || echo '; no awk')"
        goal_row "auto within 1.2 × the faster backend on every standard bench case" "≤ 1.2" "$(not_measured)" "$(unmet)"
    fi
fi
{
    echo "| goal | target | measured | met |"
    echo "|---|---|---|---|"
    printf '%s\n' "${GOALS[@]}"
} >"$OUT/goals.md"
say "goals:"
while IFS= read -r line; do say "  $line"; done <"$OUT/goals.md"

# ---------------------------------------------------------------- inputs (Swift CPU path)

PHOTO=$WORK/inputs/photo.png RGBA=$WORK/inputs/rgba.png PFM=$WORK/inputs/float.pfm
TEXTURE=$BUNDLE/data/ring-texture.png
[[ -f $TEXTURE ]] || TEXTURE=$RGBA
t0=$(now_us)
input_rc=0
run_cmd input-photo "$LIM_INPUT" "$GLINT" fractal julia --size "$IMG_SIZE" --c -0.8,0.156 --smooth --bailout 64 \
    --iterations 300 --palette ocean --device cpu -o "$PHOTO"
(( RC )) && input_rc=$RC
run_cmd input-rgba "$LIM_INPUT" "$GLINT" iso "$PHOTO" --depth 10 --corner-radius 8 --ss 2 --device cpu -o "$RGBA"
(( RC )) && input_rc=$RC
run_cmd input-pfm "$LIM_INPUT" "$GLINT" rtow --scene ch10 --size "$IMG_SIZE" --spp 4 --depth 8 --device cpu \
    -o "$WORK/inputs/float-src.png" --pfm "$PFM"
(( RC )) && input_rc=$RC
if (( input_rc == 0 )); then
    record_step inputs ok "$(secs $(( $(now_us) - t0 )))" "test images made on the Swift CPU path ($IMG_SIZE)"
else
    record_step inputs FAILED "$(secs $(( $(now_us) - t0 )))" "an input image could not be made (exit $input_rc); see run.log"
fi

# ---------------------------------------------------------------- parity

TSV=$OUT/parity.tsv
printf 'check\tresult\texit\tseconds\tmax_abs\tmean_abs\tpsnr_db\tcounts_differing\ta_ms\tb_ms\tb_kernel_ms\tspeedup\tcommand\n' >"$TSV"
P_LINES=()
P_PASS=0 P_FAIL=0

# Each check's figures come from glint compare --tsv: a header line and a line of values, tab-
# separated, empty where a figure does not apply. A glint without --tsv (GLINT_BIN of an older
# build) still gives every verdict, without the figures.
CMP_TSV=$WORK/tmp/compare.tsv CMP_TSV_ARGS=()
if [[ $("$GLINT" compare --help 2>/dev/null) == *--tsv* ]]; then
    CMP_TSV_ARGS=(--tsv "$CMP_TSV")
else
    say "this glint's compare has no --tsv: the parity table shows verdicts without figures"
fi

# Reads the figures of a glint compare --tsv file into F_* variables.
tsv_figures() {
    F_MAX="" F_MEAN="" F_PSNR="" F_COUNTS="" F_A="" F_B="" F_BK="" F_SPEEDUP=""
    [[ -n $1 && -f $1 ]] || return 0
    local names="" values="" name value
    { IFS= read -r names && IFS= read -r values; } <"$1"
    names+=$'\t' values+=$'\t'
    while [[ -n $names ]]; do
        name=${names%%$'\t'*} names=${names#*$'\t'}
        value=${values%%$'\t'*} values=${values#*$'\t'}
        [[ $value == [0-9-]* ]] && value=$(printf '%.4g' "$value" 2>/dev/null || printf '%s' "$value")
        case $name in
            max_abs) F_MAX=$value ;;
            mean_abs) F_MEAN=$value ;;
            psnr_db) F_PSNR=$value ;;
            counts_differing) F_COUNTS=$value ;;
            a_wall_ms) F_A=$value ;;
            b_wall_ms) F_B=$value ;;
            b_kernel_ms) F_BK=$value ;;
            speedup) F_SPEEDUP=$value ;;
        esac
    done
}

# record_parity NAME RC SECS TSV COMMAND-TEXT (TSV: the check's compare --tsv file, or "")
record_parity() {
    local name=$1 rc=$2 s=$3 tsv=$4 cmd=$5 result
    case $rc in
        0) result=pass ;;
        1) result=FAIL ;;
        124|137) result=TIMEOUT ;;
        125) result=SKIPPED ;;
        *) result=ERROR ;;
    esac
    (( DRY )) && result=dry-run
    if [[ $result == pass || $result == dry-run ]]; then
        P_PASS=$(( P_PASS + 1 ))
        rm -f "$OUT/parity/$name-diff.png"
    else
        P_FAIL=$(( P_FAIL + 1 ))
    fi
    tsv_figures "$tsv"
    local why=""
    if [[ $result != pass && $result != dry-run ]]; then
        why=$(last_line "$OUTFILE"); why=${why//|/\\|}
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$result" "$rc" "$s" "$F_MAX" "$F_MEAN" \
        "$F_PSNR" "$F_COUNTS" "$F_A" "$F_B" "$F_BK" "$F_SPEEDUP" "$cmd" >>"$TSV"
    P_LINES+=("| $name | $result | $rc | $s | ${F_MAX:--} | ${F_MEAN:--} | ${F_PSNR:--} | ${F_COUNTS:--} | ${F_A:--} | ${F_B:--} | ${F_BK:--} | ${F_SPEEDUP:--} | ${why} |")
    printf 'run.sh:   parity %-34s %-7s %6s s\n' "$name" "$result" "$s"
}

# parity NAME WORKLOAD [options]: glint compare --a cpu --b DEVICE on one job.
parity() {
    local name=$1; shift
    rm -f "$CMP_TSV"
    run_cmd "parity $name" "$LIM_PARITY" "$GLINT" compare --a cpu --b "$DEVICE" --runs "$RUNS" --json "$OUT/parity/$name.json" \
        "${CMP_TSV_ARGS[@]+"${CMP_TSV_ARGS[@]}"}" --diff "$OUT/parity/$name-diff.png" "$@"
    record_parity "$name" "$RC" "$SECS" "$CMP_TSV" "glint compare --a cpu --b $DEVICE $*"
}

# parity_images NAME A B [compare options]: glint compare --images on two files made apart.
parity_images() {
    local name=$1 a=$2 b=$3; shift 3
    rm -f "$CMP_TSV"
    run_cmd "parity $name" 120 "$GLINT" compare --images "$a" "$b" --json "$OUT/parity/$name.json" \
        "${CMP_TSV_ARGS[@]+"${CMP_TSV_ARGS[@]}"}" --diff "$OUT/parity/$name-diff.png" "$@"
    record_parity "$name" "$RC" "$SECS" "$CMP_TSV" "glint compare --images ${a##*/} ${b##*/} $*"
}

# A render on both sides for a check that compare cannot run as a job (chained passes).
# parity_render NAME TOLERANCE-OPTIONS... -- RENDER ARGS (without --device and -o)
parity_render() {
    local name=$1; shift
    local tol=()
    while (( $# )) && [[ $1 != -- ]]; do tol+=("$1"); shift; done
    shift
    local a=$WORK/tmp/$name-cpu.png b=$WORK/tmp/$name-device.png rca rcb sa sb
    rm -f "$a" "$b"
    run_cmd "parity $name (cpu)" "$LIM_PARITY" "$GLINT" "$@" --device cpu -o "$a"; rca=$RC sa=$SECS
    run_cmd "parity $name ($DEVICE)" "$LIM_PARITY" "$GLINT" "$@" --device "$DEVICE" -o "$b"; rcb=$RC sb=$SECS
    if (( rca == 0 && rcb == 0 )); then
        parity_images "$name" "$a" "$b" "${tol[@]+"${tol[@]}"}"
    else
        local rc=2
        (( rca == 124 || rcb == 124 || rca == 137 || rcb == 137 )) && rc=124
        (( rca == 125 || rcb == 125 )) && rc=125
        record_parity "$name" "$rc" "$sb" "" "glint $* (cpu exit $rca, $DEVICE exit $rcb, ${sa}+${sb} s)"
    fi
}

t0=$(now_us)
say "parity: every workload on $DEVICE against the Swift CPU path"

# Fractals: every formula the CLI lists, float and double, banded and smooth.
FORMULAS=()
help_text=$("$GLINT" fractal --help 2>/dev/null)
collect=0
while IFS= read -r line; do
    if [[ $line == *'<formula>'* && $line != *USAGE* ]]; then collect=1; line=${line#*<formula>}
    elif (( collect )) && [[ -z ${line// /} || $line == *OPTIONS:* ]]; then break
    fi
    if (( collect )); then
        # The list is "a | b | c"; a remark in parentheses may follow it.
        last=0
        [[ $line == *'('* ]] && { line=${line%%(*}; last=1; }
        IFS=' |' read -ra words <<<"$line"
        for word in "${words[@]}"; do [[ $word =~ ^[a-z][a-z0-9-]*$ ]] && FORMULAS+=("$word"); done
        (( last )) && break
    fi
done <<<"$help_text"
(( ${#FORMULAS[@]} )) || FORMULAS=(mandelbrot julia burning-ship sierpinski-julia image-julia)
log "# fractal formulas: ${FORMULAS[*]}"

formula_args() {
    case $1 in
        mandelbrot) FARGS=() ;;
        julia) FARGS=(--c -0.8,0.156) ;;
        burning-ship) FARGS=(--center -1.755,-0.03 --zoom 25) ;;
        sierpinski-julia) FARGS=(--c -0.12,0.05 --zoom 0.7) ;;
        image-julia) FARGS=(--texture "$TEXTURE" --center 0.5,0.5 --zoom 1.2) ;;
        *) FARGS=() ;;
    esac
}
palettes=(fire ocean grey rainbow tutorial)
i=0
for f in "${FORMULAS[@]}"; do
    formula_args "$f"
    pal=${palettes[i % ${#palettes[@]}]}; i=$(( i + 1 ))
    for prec in float double; do
        parity "fractal-$f-$prec" fractal "$f" --size "$FRACTAL_SIZE" --precision "$prec" "${FARGS[@]+"${FARGS[@]}"}"
        parity "fractal-$f-$prec-smooth" fractal "$f" --size "$FRACTAL_SIZE" --precision "$prec" \
            --smooth --bailout 64 --iterations 400 --palette "$pal" "${FARGS[@]+"${FARGS[@]}"}"
    done
done
parity fractal-mandelbrot-deep-double fractal mandelbrot --size "$FRACTAL_SIZE" --precision double \
    --center -0.7435669,0.1314023 --zoom 2e4 --iterations "$DEEP_IT" --smooth --bailout 256 --palette fire
parity fractal-mandelbrot-noskip-ss2 fractal mandelbrot --size "$FRACTAL_SIZE" --no-skip --ss 2
parity fractal-julia-ss3-rainbow fractal julia --size "$FRACTAL_SIZE" --c -0.4,0.6 --ss 3 --smooth --bailout 64 --palette rainbow
parity fractal-mandelbrot-16bit fractal mandelbrot --size "$FRACTAL_SIZE" --bit-depth 16 --smooth --bailout 256 --palette grey
# Deep zoom by perturbation (deltas against an MPFR reference orbit, bilinear approximation):
# the Misiurewicz point M(4,1) to 1250 digits at 1e100, 1e300 (also step by step, --no-bla) and
# 1e1000 (deltas with their own exponent); 1e10000 from the bundled .kfr location (its orbit alone
# takes about 12 s on the host CPU); Julia (the rabbit, with interior) and Burning Ship at 1e100.
M41="-0.10109636384562216102578544573862256546380544282625348387693117766078084074047058427482121981051677903340453190855674119397154614426091188235570390768030161575841814343545448230681066640294193782674118916078195264489953969953344668233931266990098175571504252065388669918613443339616006105627753851442596095607035682216432799561330369267147603777972840547126801980704959564343122613074621896737872910571815679801197486243277885212232140346141476363055768794030853505141349183029015625069901969710301398305392417144156069597140451840313064629757293752694923578083419008033459932163104727756510242751841556788286021711749416601499429216872982016341208446855985403661105316998835492040882172175855157966911277323873665854191343771846069063795296101344596119896334264441246321148208383158915620033579477494837698116548857304134421746520875080578843986768445143189676901909197593373430777401468101258224338365501559662038514812825361666266958662987446628547717033563574030921348178403792112443072779400152356332499276233708436342563966294999507550757660460614190506318706657692810104805864408721582914451598324917228901892688402383071449392959536341157638421518777026130146909190815639149690332889177166298179725062798523839410940541549263621310338315356379,0.95628651080914150077109605772997743580983333651052917003431432150052465906571673252697841078733980720434447249264692843667524065674657226562008157197415513138312280548844438105716778702037383950554772793095483119531903851700248779176701131056494620545534858599306150044273974477620459800859739159776038642766707440422533353543235668594047123274570837878571482486158738696750601083540661226888031134410954052208222674126638248517790986347704818118648062587380239692583828840815719255370121522800385884301819983280784742726336991741454106147394625891287891505532343496859294607738650173505290156602912209133964897752649581171143826432956544961578982745830551788479258147454202842963313067386365684972668134880508525561560701187980873067963356194887705246354696328648097124149722563177379309277911710285360237867482492964038350503763684164437184049412481921300195835478454483256901334110451034553506095219934870057603168216556567172242966791404273945295217280446271780417832018254782556811956582483509985195860450540489882469709942496223493021936107080339124039241648516064751765003945087797445598098635224885950441217876454296014840103124596381704353322864028788425317984340924120038324059198177390626601044963669929362004951552963110762353081882867432"
parity fractal-mandelbrot-perturbation-1e100 fractal mandelbrot --size "$FRACTAL_SIZE" --center "$M41" --zoom 1e100 \
    --iterations 5000 --smooth
parity fractal-mandelbrot-perturbation-1e300-nobla fractal mandelbrot --size "$FRACTAL_SIZE" --center "$M41" --zoom 1e300 \
    --iterations 4000 --no-bla
parity fractal-mandelbrot-perturbation-1e1000 fractal mandelbrot --size "$FRACTAL_SIZE" --center "$M41" --zoom 1e1000 \
    --iterations 9000 --smooth --palette ocean
(( QUICK )) || parity fractal-mandelbrot-perturbation-1e10000 fractal --location "$BUNDLE/data/misiurewicz-4-1-1e10000.kfr" \
    --size "$FRACTAL_SIZE" --smooth
parity fractal-julia-perturbation-1e100 fractal julia --size "$FRACTAL_SIZE" --zoom 1e100 --iterations 3000 \
    --center "-0.2763376235931174165515313807292051890683630462797931279008351528684494187555469260314741879347767638260027619360605,0.4797279843093951091373594360594429143540192923757372489542526200937764252983668961247593721878201441637334676150425" --c "-0.122561166876653619975245551820735654052696691113603428005358014676959672435959454630886453578874848175811316043593288531,0.744861766619744236593170428604392367240163084906824574201847592154415217837839767791143754932964159039252804873377366033"
parity fractal-burning-ship-perturbation-1e100 fractal burning-ship --size "$FRACTAL_SIZE" --zoom 1e100 --iterations 3000 \
    --center "-1.75300805237627141898296246847745925970403779974557767247241501267848438146686242475772476145294778802864294623353841859788006346805403,-0.07286028226955921300445350201281591238315244851348176861614437632751720862011254618479376097407831093770671197769681662212031855006534" --smooth

# Ray tracing: the three scenes, and the camera gestures.
for scene in ch8 ch10 cover; do
    parity "rtow-$scene" rtow --scene "$scene" --size "$RT_SIZE" --spp "$RT_SPP" --depth "$RT_DEPTH"
done
parity rtow-cover-gestures rtow --scene cover --size "$RT_SIZE" --spp "$RT_SPP" --depth "$RT_DEPTH" \
    --distance 0.6 --turn 5,0 --roll 10 --vfov 30
parity rtow-ch10-orbit-pinhole-appglass rtow --scene ch10 --size "$RT_SIZE" --spp "$RT_SPP" --depth "$RT_DEPTH" \
    --orbit 30,10 --aperture 0 --app-glass

# Blur: both methods and every border on 8-bit, an RGBA image, and float.
for border in reflect101 clamp wrap zero; do
    parity "blur-8bit-exact-s2-$border" blur "$PHOTO" --sigma 2 --method exact --border "$border"
    parity "blur-8bit-recursive-s20-$border" blur "$PHOTO" --sigma 20 --method recursive --border "$border"
done
parity blur-8bit-exact-s10 blur "$PHOTO" --sigma 10 --method exact
parity blur-8bit-recursive-s40 blur "$PHOTO" --sigma 40 --method recursive
parity blur-rgba-exact-s3.3 blur "$RGBA" --sigma 3.3 --method exact
parity blur-rgba-recursive-s8 blur "$RGBA" --sigma 8 --method recursive
parity blur-float-exact-s2 blur "$PFM" --sigma 2 --method exact
parity blur-float-exact-s8-clamp blur "$PFM" --sigma 8 --method exact --border clamp
parity blur-float-recursive-s8 blur "$PFM" --sigma 8 --method recursive
# The blur and mist kernels' CPU forms (what PoCL runs), built by this device's compiler too.
GLINT_KERNEL_LANES=16 parity blur-8bit-exact-s2-cpuform blur "$PHOTO" --sigma 2 --method exact
GLINT_KERNEL_LANES=16 parity blur-8bit-recursive-s40-cpuform blur "$PHOTO" --sigma 40 --method recursive
GLINT_KERNEL_LANES=8 parity blur-float-recursive-s8-cpuform blur "$PFM" --sigma 8 --method recursive
# The fractal kernels' CPU forms: the escape loop's vectors and the colour pass's (smooth, supersampled).
GLINT_KERNEL_LANES=16 parity fractal-smooth-ss2-cpuform fractal mandelbrot --size "$FRACTAL_SIZE" --smooth --palette rainbow --ss 2

# Mist, iso, pulse.
parity mist mist --input "$PHOTO" --frames "$MIST_FRAMES"
GLINT_KERNEL_LANES=16 parity mist-cpuform mist --input "$PHOTO" --frames "$MIST_FRAMES"
parity mist-classic-exact mist --input "$PHOTO" --frames "$MIST_FRAMES" --classic --gravity 0.3,1 --drops 80 \
    --seed 7 --sigma 10 --method exact
parity iso iso "$PHOTO"
parity iso-rounded iso "$PHOTO" --depth 30 --corner-radius "$ISO_RADIUS" --ss "$ISO_SS"
parity iso-rgba iso "$RGBA" --depth 5 --ss 2
parity pulse pulse --size "$PULSE_SIZE" --frames "$PULSE_FRAMES"
parity pulse-teal-ramp pulse --size "$PULSE_SIZE" --frames "$PULSE_FRAMES" --hue 0.5 --purity-center 0.6 \
    --purity-range 0.4 --ramp hue=0:1

# Chained passes (one device image from pass to pass): rendered on both sides, compared as files.
parity_render chain-julia-blur-iso -- fractal julia --size "$IMG_SIZE" --smooth --bailout 64 --palette fire \
    --then blur --sigma 3 --then iso --depth 30
parity_render chain-rtow-iso --tolerance mean:0.5%,psnr:40 -- rtow --scene cover --size "$RT_SIZE" \
    --spp "$RT_SPP" --depth "$RT_DEPTH" --then iso --depth 24

# Render farms: 4 shards rendered on the device one after another, merged, and the merged file
# compared byte for byte with the single render on the device (glint merge's contract).
# shard_check NAME EXT RENDER-ARGS... (without --device, -o and --shard)
shard_check() {
    local name=$1 ext=$2; shift 2
    local dir=$WORK/tmp/shards-$name rc=0 t0s i
    rm -rf "$dir"; mkdir -p "$dir/tiles"
    t0s=$(now_us)
    run_cmd "shards $name (single)" "$LIM_PARITY" "$GLINT" "$@" --device "$DEVICE" -o "$dir/single.$ext"
    (( RC == 0 )) || rc=$RC
    for i in 1 2 3 4; do
        run_cmd "shards $name ($i/4)" "$LIM_PARITY" "$GLINT" "$@" --device "$DEVICE" --shard "$i/4" -o "$dir/tiles/part-$i.$ext"
        (( RC == 0 )) || rc=$RC
    done
    run_cmd "shards $name (merge)" 120 "$GLINT" merge "$dir/tiles" -o "$dir/merged.$ext"
    (( RC == 0 )) || rc=$RC
    (( rc == 1 )) && rc=2   # a command that failed is an error, not a difference
    if (( rc == 0 && ! DRY )) && ! cmp -s "$dir/single.$ext" "$dir/merged.$ext"; then rc=1; fi
    record_parity "shards-$name" "$rc" "$(secs $(( $(now_us) - t0s )))" "" \
        "glint $* --device $DEVICE as 4 shards + glint merge, cmp with the single render"
    (( KEEP_WORK )) || rm -rf "$dir"
}
shard_check fractal png fractal mandelbrot --size "$FRACTAL_SIZE" --smooth --bailout 256 --palette fire
shard_check fractal-perturbation png fractal mandelbrot --size "$FRACTAL_SIZE" --center "$M41" --zoom 1e100 --iterations 3000
shard_check rtow png rtow --scene cover --size "$RT_SIZE" --spp "$RT_SPP" --depth "$RT_DEPTH"
shard_check iso png iso "$PHOTO" --depth 24 --corner-radius 16

p_total=$(( P_PASS + P_FAIL ))
if (( P_FAIL == 0 )); then
    record_step parity ok "$(secs $(( $(now_us) - t0 )))" "$P_PASS of $p_total checks passed"
else
    record_step parity FAILED "$(secs $(( $(now_us) - t0 )))" "$P_FAIL of $p_total checks did not pass"
fi

# ---------------------------------------------------------------- the book cover

COVER=$OUT/cover/cover.png
run_cmd cover "$LIM_COVER" "$GLINT" rtow --scene cover --size "$COVER_SIZE" --spp "$COVER_SPP" --depth "$COVER_DEPTH" \
    --device "$DEVICE" -o "$COVER"
cover_rc=$RC cover_secs=$SECS cover_line=$(last_line "$OUTFILE")
cp "$OUTFILE" "$OUT/cover/cover.txt"
printf 'wall time (date +%%s.%%N): start %s, end %s, %s s; exit %s\n' "$T0" "$T1" "$cover_secs" "$cover_rc" >>"$OUT/cover/cover.txt"
if (( cover_rc == 0 )); then
    record_step cover ok "$cover_secs" "$cover_line"
else
    record_step cover "$(not_ok "$cover_rc")" "$cover_secs" "exit $cover_rc: $cover_line"
fi
# The same image on the Swift CPU path: the final image's parity, and the speed-up.
COVER_CPU=$WORK/tmp/cover-cpu.png
run_cmd cover-cpu "$LIM_CPU" "$GLINT" rtow --scene cover --size "$COVER_SIZE" --spp "$COVER_SPP" --depth "$COVER_DEPTH" \
    --device cpu -o "$COVER_CPU"
cpu_rc=$RC cpu_secs=$SECS cpu_line=$(last_line "$OUTFILE")
printf '\nSwift CPU path, same render: %s s, exit %s: %s\n' "$cpu_secs" "$cpu_rc" "$cpu_line" >>"$OUT/cover/cover.txt"
if (( cpu_rc == 0 )); then
    record_step cover-cpu ok "$cpu_secs" "$cpu_line"
else
    record_step cover-cpu "$(not_ok "$cpu_rc")" "$cpu_secs" "exit $cpu_rc: $cpu_line"
fi
if (( cover_rc == 0 && cpu_rc == 0 )); then
    parity_images rtow-cover-final "$COVER_CPU" "$COVER" --tolerance mean:0.5%,psnr:40
else
    rc=2; (( cover_rc == 125 || cpu_rc == 125 )) && rc=125
    record_parity rtow-cover-final "$rc" 0.00 "" "the cover renders failed (device exit $cover_rc, cpu exit $cpu_rc)"
fi

# ---------------------------------------------------------------- 4K fractal zoom

ANIM=$WORK/anim
ANIM_CENTER=-0.743643887037151,0.131825904205330   # a minibrot in the seahorse valley at zoom 1e5
rm -rf "$ANIM"
run_cmd animation "$LIM_ANIM" "$GLINT" fractal mandelbrot --size "$ANIM_SIZE" --frames "$ANIM_FRAMES" \
    --center "$ANIM_CENTER" --ramp "zoom=1:$ANIM_ZOOM" --precision double --iterations "$ANIM_IT" --smooth \
    --bailout 256 --palette fire --device "$DEVICE" -o "$ANIM"
anim_rc=$RC anim_secs=$SECS anim_line=$(last_line "$OUTFILE")
cp "$OUTFILE" "$OUT/animation/animation.txt"
printf 'wall time (date +%%s.%%N): start %s, end %s, %s s; exit %s\n' "$T0" "$T1" "$anim_secs" "$anim_rc" >>"$OUT/animation/animation.txt"
frames=0
for f in "$ANIM"/frame_*.png; do [[ -f $f ]] && frames=$(( frames + 1 )); done
kept=()
last_frame=$(printf 'frame_%05d.png' $(( ANIM_FRAMES - 1 )))
for k in 0 $(( ANIM_FRAMES / 2 )) $(( ANIM_FRAMES - 1 )); do
    f=$(printf 'frame_%05d.png' "$k")
    if [[ -f $ANIM/$f && ! -f $OUT/animation/$f ]]; then cp "$ANIM/$f" "$OUT/animation/$f"; kept+=("$f"); fi
done
echo "frames written: $frames of $ANIM_FRAMES; kept: ${kept[*]:-none}" >>"$OUT/animation/animation.txt"
if (( DRY || (anim_rc == 0 && frames == ANIM_FRAMES) )); then
    record_step animation ok "$anim_secs" "$anim_line"
else
    record_step animation "$(not_ok "$anim_rc")" "$anim_secs" "exit $anim_rc, $frames of $ANIM_FRAMES frames: $anim_line"
fi
# The last frame is the single render at the ramp's end: check it against the Swift CPU path.
run_cmd animation-last-cpu "$LIM_CPU" "$GLINT" fractal mandelbrot --size "$ANIM_SIZE" --center "$ANIM_CENTER" \
    --zoom "$ANIM_ZOOM" --precision double --iterations "$ANIM_IT" --smooth --bailout 256 --palette fire \
    --device cpu -o "$WORK/tmp/anim-last-cpu.png"
if (( RC == 0 )) && [[ -f $ANIM/$last_frame ]]; then
    parity_images fractal-zoom-last-frame "$WORK/tmp/anim-last-cpu.png" "$ANIM/$last_frame"
else
    rc=2; (( RC == 125 || anim_rc == 125 )) && rc=125
    record_parity fractal-zoom-last-frame "$rc" "$SECS" "" "the last frame or its CPU render is missing (cpu exit $RC)"
fi
(( KEEP_WORK )) || rm -rf "$ANIM"

# ---------------------------------------------------------------- benchmarks

run_cmd bench "$LIM_BENCH" "$GLINT" bench "${BENCH_SUITE[@]}" --device "$DEVICE" --json "$OUT/bench/bench.json" \
    --markdown "$OUT/bench/bench.md" --csv "$OUT/bench/bench.csv" --chart "$OUT/bench/bench.svg" \
    "${BENCH_LIST[@]+"${BENCH_LIST[@]}"}"
bench_rc=$RC bench_secs=$SECS
cp "$OUTFILE" "$OUT/bench/bench.txt"
bench_note=""
if [[ -f $OUT/bench/bench.csv ]]; then
    # The cases by their status column (reference, pass, fail, skipped, unchecked).
    status_col=-1 row="" n_cases=0 n_pass=0 n_fail=0 n_skip=0
    while IFS= read -r line || [[ -n $line ]]; do
        row+=$line
        csv_split "$row" || { row+=$'\n'; continue; }
        row=""
        if (( status_col < 0 )); then
            for i in "${!CSV[@]}"; do [[ ${CSV[i]} == status ]] && status_col=$i; done
            (( status_col >= 0 )) || break
            continue
        fi
        n_cases=$(( n_cases + 1 ))
        case ${CSV[status_col]:-} in
            pass) n_pass=$(( n_pass + 1 )) ;;
            fail) n_fail=$(( n_fail + 1 )) ;;
            skipped) n_skip=$(( n_skip + 1 )) ;;
        esac
    done <"$OUT/bench/bench.csv"
    (( status_col >= 0 )) && bench_note="cases $n_cases, passed $n_pass, failed $n_fail, skipped $n_skip"
fi
bench_note="${BENCH_SUITE[*]} ${BENCH_LIST[*]:-(all workloads)}${bench_note:+: $bench_note}"
case $bench_rc in
    0) record_step bench ok "$bench_secs" "$bench_note" ;;
    1) record_step bench FAILED "$bench_secs" "a case failed validation or the run failed: $bench_note; $(last_line "$OUTFILE")" ;;
    *) record_step bench "$(not_ok "$bench_rc")" "$bench_secs" "exit $bench_rc: $(last_line "$OUTFILE")" ;;
esac

# A kernel build that succeeds prints nothing: compiler chatter in the log is a step that failed.
chatter=$(grep -cE '^[0-9]+ warnings? generated\.$' "$LOG" 2>/dev/null) || chatter=0
if (( chatter == 0 )); then record_step quiet-builds ok 0.00 "no compiler output in run.log"
else record_step quiet-builds FAILED 0.00 "$chatter lines of compiler output in run.log (\"N warning(s) generated.\")"
fi

# ---------------------------------------------------------------- summary and archive

TOTAL_SECS=$(secs "$(elapsed_us)")
failed_steps=0
for s in "${STEP_STATUS[@]}"; do [[ $s == ok ]] || failed_steps=$(( failed_steps + 1 )); done
if (( failed_steps == 0 && P_FAIL == 0 )); then VERDICT="all steps ran, all $P_PASS parity checks passed"; STATUS=0
else VERDICT="$failed_steps step(s) not ok, $P_FAIL of $(( P_PASS + P_FAIL )) parity checks did not pass"; STATUS=1
fi
(( DRY )) && VERDICT="dry run: commands printed, nothing rendered" && STATUS=0

# Keep the archive well below 16 MiB: drop diff images, then animation frames, largest first.
BUDGET_KB=13312
TRIMMED=()
folder_kb() { local kb; kb=$(du -sk --exclude=work "$OUT" 2>/dev/null) || kb=$(du -sk "$OUT"); echo "${kb%%[!0-9]*}"; }
trim_to_budget() {
    local f
    for f in "$@"; do
        (( $(folder_kb) > BUDGET_KB )) || return 0
        [[ -f $f ]] || continue
        TRIMMED+=("${f#"$OUT"/} ($(( $(stat -c %s "$f") / 1024 )) KiB)")
        rm -f "$f"
    done
}
trim_to_budget "$OUT"/parity/*-diff.png "$OUT/animation/frame_$(printf %05d $(( ANIM_FRAMES / 2 ))).png" \
    "$OUT/animation/frame_00000.png" "$OUT/animation/$last_frame" "$OUT/bench/bench.csv"

{
    echo "# Glint GPU run: $VERDICT"
    echo
    echo "- started $START_DATE, $TOTAL_SECS s in all; mode **$MODE**; device \`$DEVICE\`"
    echo "- $version_line; host $(uname -n 2>/dev/null) ($(uname -r 2>/dev/null))"
    echo "- OpenCL vendors: \`$OCL_ICD_VENDORS\` ($VENDOR_NOTE)"
    [[ -f $OUT/env/nvidia-smi.txt ]] && while IFS= read -r line; do
        [[ $line == name,* ]] && { IFS= read -r line; echo "- nvidia-smi: $line"; break; }
    done <"$OUT/env/nvidia-smi.txt"
    echo "- exit status $STATUS (0: every step ran and every parity check passed)"
    echo
    echo "## Goals (docs/GPU.md)"
    echo
    cat "$OUT/goals.md"
    echo
    echo "## Steps"
    echo
    echo "| step | status | seconds | note |"
    echo "|---|---|---|---|"
    for i in "${!STEP_NAMES[@]}"; do
        echo "| ${STEP_NAMES[i]} | ${STEP_STATUS[i]} | ${STEP_SECS[i]} | ${STEP_NOTES[i]//|/\\|} |"
    done
    echo
    echo "## Devices"
    echo
    echo '```'
    cat "$OUT/devices.txt"
    echo '```'
    echo
    echo "## Parity: Swift CPU path (A) against $DEVICE (B), $P_PASS of $(( P_PASS + P_FAIL )) passed"
    echo
    echo "Each check is \`glint compare\` with the workload's tolerance; exit 0 pass, 1 outside the tolerance"
    echo "(FAIL), 2 no comparison (ERROR), 124 timeout. Differences in 8-bit levels (plain values for PFM);"
    echo "counts = fractal escape counts that differ; seconds = the whole check's wall time (program"
    echo "builds included); A ms, B ms = median wall time of one run; B kernel ms = OpenCL kernel time."
    echo "Details: parity/NAME.json,"
    echo "parity.tsv, run.log; parity/NAME-diff.png for each check that did not pass."
    echo
    echo "| check | result | exit | seconds | max | mean | PSNR dB | counts | A ms | B ms | B kernel ms | speed-up | message |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${P_LINES[@]}"
    echo
    echo "## Book cover (rtow --scene cover --size $COVER_SIZE --spp $COVER_SPP --depth $COVER_DEPTH)"
    echo
    echo '```'
    cat "$OUT/cover/cover.txt"
    echo '```'
    echo
    echo "## Fractal zoom ($ANIM_SIZE, $ANIM_FRAMES frames, zoom 1 to $ANIM_ZOOM, double)"
    echo
    echo '```'
    cat "$OUT/animation/animation.txt"
    echo '```'
    echo
    echo "## Bench (glint bench ${BENCH_SUITE[*]} --device $DEVICE ${BENCH_LIST[*]:-})"
    echo
    if [[ -f $OUT/bench/bench.md ]]; then cat "$OUT/bench/bench.md"; else echo "(no bench results; see bench/bench.txt)"; fi
    if (( ${#TRIMMED[@]} )); then
        echo
        echo "## Left out to keep the archive small"
        echo
        printf -- '- %s\n' "${TRIMMED[@]}"
    fi
} >"$OUT/summary.md"

# The vendors folder given with --vendors is recorded too.
if [[ -n $VENDORS_ARG ]]; then
    mkdir -p "$OUT/env/vendors-given"
    for icd in "$VENDORS_ARG"/*.icd; do [[ -f $icd ]] && cp "$icd" "$OUT/env/vendors-given/"; done
fi

parent=$(dirname "$OUT") base=$(basename "$OUT")
log "# finished after $TOTAL_SECS s: $VERDICT (exit $STATUS)"
log "# archive: $ARCHIVE"
if ! tar -czf "$ARCHIVE" -C "$parent" --exclude="$base/work" "$base" 2>>"$LOG"; then
    # A tar without --exclude: archive what there is without the work area.
    say "tar --exclude failed; archiving without the work area"
    rm -rf "$WORK"
    tar -czf "$ARCHIVE" -C "$parent" "$base" || say "error: could not write $ARCHIVE"
fi
(( KEEP_WORK )) || rm -rf "$WORK"
say "$VERDICT"
say "summary: $OUT/summary.md"
say "archive: $ARCHIVE ($(( $(stat -c %s "$ARCHIVE" 2>/dev/null || echo 0) / 1024 )) KiB)"
exit "$STATUS"
