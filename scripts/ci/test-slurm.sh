#!/bin/bash
# The Slurm examples (examples/slurm) on a real, private, single-node Slurm cluster.
#
#   scripts/ci/test-slurm.sh [--stand-in] [--keep]
#
# Installs Debian's slurmctld, slurmd, slurm-client and munge when they are missing, starts munged,
# slurmctld and slurmd with everything (key, sockets, state, logs, config) in a temporary folder
# and their own ports, and submits through examples/slurm/submit.sh, unchanged, three renders and
# their merges:
#   - a Mandelbrot still in 4 tiles,
#   - the ray tracer's cover scene at 160x90, 4 samples per pixel, in 4 tiles,
#   - an 8-frame Julia animation at 96x54 in 4 frame ranges.
# Each merge job must run after its array (afterok) and give, byte for byte, what one glint process
# renders directly (frame by frame for the animation). Every render uses --device cpu. Then the
# still's array is submitted again with one tile removed: only that tile may be rendered again.
# Then the daemons it started are stopped by PID and the folder is removed, on failure too.
#
#   --stand-in   use a stand-in for glint (a shell script that checks the shard arguments and
#                writes a small text "tile"; its merge checks that every tile is there) instead of
#                a built glint: tests the cluster and the example scripts, not glint. A second array
#                with one failing task must get its merge cancelled, and its resubmission must render
#                only the missing tile.
#   --keep       keep the temporary folder (the daemons are stopped all the same)
#
# Environment:
#   GLINT                  the glint binary (default: .build/debug/glint under the repository root)
#   SLURM_TEST_TIMEOUT     seconds that all the jobs may take together (default 600)
#   SLURM_TEST_UP_TIMEOUT  seconds for the node to come up idle (default 60)
#
# Runs as root (through sudo otherwise). Exit status 0 when everything passed, 1 otherwise.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then exec sudo --preserve-env=GLINT,SLURM_TEST_TIMEOUT,SLURM_TEST_UP_TIMEOUT "$0" "$@"; fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
stand_in=0 keep=0
for arg in "$@"; do
    case $arg in
        --stand-in) stand_in=1 ;;
        --keep) keep=1 ;;
        -h | --help) sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "test-slurm.sh: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done
jobs_timeout=${SLURM_TEST_TIMEOUT:-600}
up_timeout=${SLURM_TEST_UP_TIMEOUT:-60}

say() { echo "test-slurm: $*"; }
fail() { echo "test-slurm: FAIL: $*" >&2; exit 1; }

# --- glint ---------------------------------------------------------------------------------------
if [ "$stand_in" = 0 ]; then
    GLINT=${GLINT:-.build/debug/glint}
    case $GLINT in /*) ;; *) GLINT="$root/$GLINT" ;; esac
    [ -x "$GLINT" ] || fail "no glint binary at $GLINT (build it, or set GLINT)"
fi

# --- packages ------------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
        || ! command -v munged >/dev/null; then
    say "installing slurmctld slurmd slurm-client munge"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge
fi
# Debian's packages start their services where systemd runs; this test uses its own daemons only.

# --- the temporary cluster -----------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glint-slurm.XXXXXX")
munged_pid="" slurmctld_pid="" slurmd_pid=""

stop_pid() { # PID NAME: TERM, then KILL after 10 s; only a PID this script started
    local pid=$1 name=$2 i
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
        sleep 0.1
    done
    say "$name ($pid) still running after 10 s: KILL"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

stepds() { # PIDs of every slurmstepd on the machine
    local d
    for d in /proc/[0-9]*; do
        [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] && printf '%s\n' "${d#/proc/}"
    done
    return 0
}
stepds_before=" $(stepds | tr '\n' ' ') "

# Job steps this cluster's slurmd started: they carry its SLURM_CONF, or, while they exit (their
# environment unreadable by then), they are the slurmstepd processes that were not there before.
our_stepds() { # [--killable]: only those that still show our SLURM_CONF
    local pid env
    for pid in $(stepds); do
        if env=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ") && [ -n "$env" ]; then
            grep -qxF "SLURM_CONF=$tmp/slurm.conf" <<<"$env" && printf '%s ' "$pid"
        elif [ "${1:-}" != --killable ] && [[ $stepds_before != *" $pid "* ]]; then
            printf '%s ' "$pid"
        fi
    done
    return 0
}

cleanup() {
    local status=$? i
    set +e
    trap - EXIT INT TERM
    if [ -n "$slurmctld_pid" ] && kill -0 "$slurmctld_pid" 2>/dev/null; then
        # Jobs still in this cluster (after a failure): cancel them so that no job step outlives slurmd.
        local ids
        ids=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
        if [ -n "${ids// /}" ]; then
            say "cancelling jobs still queued: $ids"
            # shellcheck disable=SC2086
            scancel $ids 2>/dev/null
            for ((i = 0; i < 150; i++)); do
                [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
                sleep 0.2
            done
        fi
    fi
    # A job's slurmstepd outlives its job's end in slurmctld by a moment (it reports to slurmd):
    # let this cluster's steps finish before slurmd goes.
    for ((i = 0; i < 150; i++)); do [ -z "$(our_stepds)" ] && break; sleep 0.1; done
    stop_pid "$slurmd_pid" slurmd
    stop_pid "$slurmctld_pid" slurmctld
    stop_pid "$munged_pid" munged
    local left
    for ((i = 0; i < 50; i++)); do [ -z "$(our_stepds)" ] && break; sleep 0.1; done
    left=$(our_stepds)
    if [ -n "$left" ]; then
        echo "test-slurm: slurmstepd of this cluster still running after its jobs: $left" >&2
        left=$(our_stepds --killable)
        # shellcheck disable=SC2086
        [ -z "$left" ] || kill -KILL $left 2>/dev/null
        status=1
    fi
    if [ "$keep" = 1 ]; then say "kept $tmp"; else rm -rf "$tmp"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
    local f
    for f in "$tmp"/log/*.log; do
        [ -f "$f" ] || continue
        echo "---- $f (last 30 lines)"; tail -n 30 "$f"
    done >&2
}

host=$(hostname -s)
mkdir -p "$tmp/munge" "$tmp/log" "$tmp/state" "$tmp/spool" "$tmp/run" "$tmp/jobs"
chmod 0755 "$tmp"   # munged, when it runs as munge, must reach its folder

# munge: a key of its own, its own socket. As the munge user when there is one (munged wants the
# key's owner to be the user it runs as), else as root, which munged refuses without --force.
key="$tmp/munge/munge.key"
dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
chmod 0400 "$key"
socket="$tmp/munge/munge.socket"
munged_args=(--foreground --key-file="$key" --socket="$socket" --pid-file="$tmp/munge/munged.pid"
             --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed" --num-threads=10)
: >"$tmp/log/munged.log"
if id munge >/dev/null 2>&1; then
    chown -R munge: "$tmp/munge" "$tmp/log/munged.log"
    chmod 0711 "$tmp/munge"   # the socket must be reachable by every user
    setpriv --reuid=munge --regid=munge --init-groups munged "${munged_args[@]}" >"$tmp/log/munged.out" 2>&1 &
else
    munged --force "${munged_args[@]}" >"$tmp/log/munged.out" 2>&1 &
fi
munged_pid=$!
for ((i = 0; i < 100; i++)); do [ -S "$socket" ] && break; kill -0 "$munged_pid" 2>/dev/null || break; sleep 0.1; done
if [ ! -S "$socket" ]; then cat "$tmp/log/munged.out" "$tmp/log/munged.log" >&2; fail "munged did not start"; fi
munge --socket="$socket" -n | unmunge --socket="$socket" >/dev/null || fail "munge credentials do not round-trip"

# Free ports for slurmctld and slurmd (a real cluster may use 6817/6818 on this machine).
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=16817
while port_busy "$ctld_port" || port_busy "$((ctld_port + 1))"; do ctld_port=$((ctld_port + 2)); done
slurmd_port=$((ctld_port + 1))

cpus=$(nproc)
mem_mib=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=glinttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=3600
MailProg=/bin/true
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mib State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
# cgroups: nothing here uses them (proctrack/linuxproc, task/none), but Slurm 22.05's slurmd always
# initialises a cgroup plugin, CgroupPlugin=autodetect when there is no cgroup.conf next to
# slurm.conf, and fails to start when that plugin cannot. 22.05 has no CgroupPlugin=disabled
# ("cannot find cgroup plugin for disabled"; that value came with 23.x). On a cgroup v1 hierarchy
# without systemd it starts with no cgroup.conf at all, so none is written first; when slurmd dies
# at start with a cgroup error, it is started again once with a cgroup.conf for the hierarchy
# there: cgroup/v2 without asking systemd for a scope (IgnoreSystemd=yes), or cgroup/v1.
start_daemons() {
    slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
    slurmctld_pid=$!
    slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
    slurmd_pid=$!
}

up_start=$SECONDS
start_daemons
cgroup_retry=0
state=""
while :; do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    if ! kill -0 "$slurmd_pid" 2>/dev/null && [ "$cgroup_retry" = 0 ] \
            && grep -qi cgroup "$tmp/log/slurmd.out" "$tmp/log/slurmd.log" 2>/dev/null; then
        cgroup_retry=1
        wait "$slurmd_pid" 2>/dev/null || true
        if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
            printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' >"$tmp/cgroup.conf"
        else
            printf 'CgroupPlugin=cgroup/v1\n' >"$tmp/cgroup.conf"
        fi
        say "slurmd failed on cgroups with none configured; again with cgroup.conf: $(tr '\n' ' ' <"$tmp/cgroup.conf")"
        grep -i cgroup "$tmp/log/slurmd.out" | tail -n 3 >&2 || true
        slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
        slurmd_pid=$!
        continue
    fi
    if ! kill -0 "$slurmctld_pid" 2>/dev/null || ! kill -0 "$slurmd_pid" 2>/dev/null; then
        cat "$tmp"/log/*.out >&2; show_logs; fail "slurmctld or slurmd exited"
    fi
    if ((SECONDS - up_start > up_timeout)); then
        show_logs; fail "node $host not idle after ${up_timeout}s (state: ${state:-none})"
    fi
    sleep 0.5
done
say "cluster up in $((SECONDS - up_start)) s: node $host idle, $cpus CPUs, ports $ctld_port/$slurmd_port, in $tmp"

# --- jobs ----------------------------------------------------------------------------------------
submit="$root/examples/slurm/submit.sh"
names=() arrays=() merges=()

submit_job() { # NAME SHARDS GLINT_ARGS [extra env...]: submits through the example, unchanged
    local name=$1 shards=$2 args=$3 ids
    shift 3
    ids=$(env "$@" GLINT="$GLINT" GLINT_WORK="$tmp/jobs/$name" GLINT_SHARDS="$shards" GLINT_ARGS="$args" \
          "$submit" --parsable) || fail "submit.sh failed for $name"
    names+=("$name"); arrays+=("${ids% *}"); merges+=("${ids#* }")
    say "$name: array job ${ids% *} ($shards tasks), merge job ${ids#* }"
}

job_field() { # JOBID FIELD: one value per job record (an array gives one per task)
    scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"
}

finished() { # JOBID: true when every record of the job is in a final state
    local s
    s=$(job_field "$1" JobState)
    [ -n "$s" ] || return 1
    ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$' <<<"$s"
}

print_outputs() {
    local f
    for f in "$tmp"/jobs/*/logs/*.out; do
        [ -f "$f" ] || continue
        echo "---- $f"; cat "$f"
    done >&2
}

wait_all() { # waits for every submitted job, bounded by jobs_timeout
    local start=$SECONDS id pending
    while :; do
        pending=0
        for id in "${arrays[@]}" "${merges[@]}"; do finished "$id" || pending=1; done
        [ "$pending" = 0 ] && break
        if ((SECONDS - start > jobs_timeout)); then
            squeue >&2 || true; print_outputs; show_logs
            fail "jobs not finished after ${jobs_timeout}s"
        fi
        sleep 1
    done
    say "all jobs finished $((SECONDS - start)) s after the wait began"
}

epoch() { date -d "$1" +%s; }

check_completed() { # INDEX: the array's tasks and then its merge all COMPLETED, merge after array
    local i=$1 name=${names[$1]} a=${arrays[$1]} m=${merges[$1]} bad last_end t merge_start
    bad=$(job_field "$a" JobState | grep -cv '^COMPLETED$' || true)
    [ "$bad" = 0 ] || { print_outputs; fail "$name: $bad task(s) of array $a did not complete: $(job_field "$a" JobState | tr '\n' ' ')"; }
    [ "$(job_field "$m" JobState)" = COMPLETED ] || { print_outputs; fail "$name: merge job $m is $(job_field "$m" JobState)"; }
    last_end=0
    while read -r t; do t=$(epoch "$t"); ((t > last_end)) && last_end=$t; done < <(job_field "$a" EndTime)
    merge_start=$(epoch "$(job_field "$m" StartTime)")
    ((merge_start >= last_end)) || fail "$name: merge job $m started before its array ended"
}

run_start=$SECONDS
if [ "$stand_in" = 1 ]; then
    # A stand-in for glint: checks what the example scripts pass and how --shard auto resolves.
    GLINT="$tmp/glint-stand-in"
    cat >"$GLINT" <<'STANDIN'
#!/bin/bash
set -euo pipefail
if [ "${1:-}" = merge ]; then
    shift; out="" inputs=()
    while [ $# -gt 0 ]; do
        case $1 in -o) out=$2; shift 2 ;; *) inputs+=("$1"); shift ;; esac
    done
    [ -n "$out" ] || { echo "glint merge: no -o" >&2; exit 2; }
    for f in "${inputs[@]}"; do
        [ -f "$f" ] || { echo "glint merge: missing tile $f" >&2; exit 1; }
        head -n 1 "$f" >>"$out.tmp"
    done
    mv "$out.tmp" "$out"; exit 0
fi
shard="" skip=0 out="" args=()
while [ $# -gt 0 ]; do
    case $1 in
        --shard) shard=$2; shift 2 ;;
        --skip-existing) skip=1; shift ;;
        -o) out=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
[ "$shard" = auto ] && [ "$skip" = 1 ] && [ -n "$out" ] || { echo "stand-in: want --shard auto --skip-existing -o" >&2; exit 2; }
i=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1)) n=$SLURM_ARRAY_TASK_COUNT
[ "$n" = $((SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1)) ] || { echo "stand-in: array not whole" >&2; exit 2; }
[ "$skip" = 1 ] && [ -f "$out" ] && exit 0
[ "${STAND_IN_FAIL:-0}" = "$i" ] && { echo "stand-in: task $i fails on purpose" >&2; exit 1; }
sleep 1
echo "shard $i/$n ${args[*]}" >"$out"
STANDIN
    chmod 0755 "$GLINT"
    submit_job standin 4 "fractal mandelbrot --size 64x36" GLINT_ARRAY_LIMIT=2
    submit_job standin-fail 4 "fractal mandelbrot --size 64x36" STAND_IN_FAIL=3
    wait_all
    say "array and merge run: $((SECONDS - run_start)) s"
    check_completed 0
    expected=$(printf 'shard %d/4 fractal mandelbrot --size 64x36\n' 1 2 3 4)
    [ "$(cat "$tmp/jobs/standin/merged.png")" = "$expected" ] || fail "stand-in merge output differs"
    [ "$(job_field "${merges[1]}" JobState)" = CANCELLED ] \
        || fail "merge after a failed task is $(job_field "${merges[1]}" JobState), not CANCELLED"
    [ ! -e "$tmp/jobs/standin-fail/merged.png" ] || fail "merge ran after a failed task"
    # The README's resubmission: the whole array again; the three tiles there are skipped.
    for t in 1 2 4; do touch -d '2000-01-01' "$tmp/jobs/standin-fail/tiles/part-$t.png"; done
    submit_job standin-fail 4 "fractal mandelbrot --size 64x36"
    wait_all
    check_completed 2
    [ "$(cat "$tmp/jobs/standin-fail/merged.png")" = "$expected" ] || fail "stand-in merge output differs after resubmission"
    [ -z "$(find "$tmp/jobs/standin-fail/tiles" -type f -newermt '2001-01-01' ! -name part-3.png)" ] \
        || fail "resubmission rendered tiles that were there"
    say "PASS (stand-in): 4-task array, merge after it, merge cancelled after a failed task, resubmission"
    exit 0
fi

fractal_args="fractal mandelbrot --size 192x108 --device cpu -q"
rtow_args="rtow --scene cover --size 160x90 --spp 4 --device cpu -q"
anim_args="fractal julia --size 96x54 --frames 8 --ramp c=-0.8,0.156:-0.7,0.27 --device cpu -q"
submit_job fractal 4 "$fractal_args"
submit_job rtow 4 "$rtow_args"
submit_job anim 4 "$anim_args"

# The single-process renders, directly, while the cluster works.
mkdir -p "$tmp/ref"
# shellcheck disable=SC2086
"$GLINT" $fractal_args -o "$tmp/ref/fractal.png" || fail "direct fractal render failed"
# shellcheck disable=SC2086
"$GLINT" $rtow_args -o "$tmp/ref/rtow.png" || fail "direct rtow render failed"
# shellcheck disable=SC2086
"$GLINT" $anim_args -o "$tmp/ref/anim" || fail "direct animation render failed"

wait_all
say "arrays and merges run: $((SECONDS - run_start)) s"
for i in 0 1 2; do check_completed "$i"; done

cmp "$tmp/ref/fractal.png" "$tmp/jobs/fractal/merged.png" || fail "fractal: merged still differs from the direct render"
cmp "$tmp/ref/rtow.png" "$tmp/jobs/rtow/merged.png" || fail "rtow: merged still differs from the direct render"
ref_frames=$(cd "$tmp/ref/anim" && find . -type f | sort)
got_frames=$(cd "$tmp/jobs/anim/merged" && find . -type f | sort)
[ -n "$ref_frames" ] || fail "anim: the direct render wrote no frames"
[ "$ref_frames" = "$got_frames" ] || fail "anim: merged frame folder has other files: $(echo $got_frames) vs $(echo $ref_frames)"
while read -r f; do
    cmp "$tmp/ref/anim/$f" "$tmp/jobs/anim/merged/$f" || fail "anim: $f differs from the direct render"
done <<<"$ref_frames"

# A resubmission after a lost tile (README's recipe): the whole array again, --skip-existing leaves
# the three good tiles alone, and the merge gives the same image.
rm "$tmp/jobs/fractal/tiles/part-2.png" "$tmp/jobs/fractal/merged.png"
for t in 1 3 4; do touch -d '2000-01-01' "$tmp/jobs/fractal/tiles/part-$t.png"; done
submit_job fractal 4 "$fractal_args"
wait_all
check_completed 3
cmp "$tmp/ref/fractal.png" "$tmp/jobs/fractal/merged.png" || fail "fractal: merged still differs after the resubmission"
[ -z "$(find "$tmp/jobs/fractal/tiles" -type f -newermt '2001-01-01' ! -name part-2.png)" ] \
    || fail "fractal: the resubmission rendered tiles that were there"
say "PASS: fractal still, rtow still and an 8-frame animation merged identical to single-process renders; a resubmission renders only the missing tile"
