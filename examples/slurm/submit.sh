#!/bin/bash
# Submits a glint render as a Slurm job array of N shards (render-array.sbatch), then its merge
# (merge.sbatch) with --dependency=afterok on the array: the merge runs once every shard succeeded,
# and is cancelled when one fails (--kill-on-invalid-dep=yes).
#
#   GLINT_WORK=/shared/glint/mandelbrot GLINT_SHARDS=16 \
#   GLINT_ARGS="fractal mandelbrot --size 7680x4320" ./submit.sh [--parsable]
#
# Environment (every variable is passed on to the jobs):
#   GLINT                      the glint binary on the compute nodes (default: glint on PATH)
#   GLINT_WORK                 the work folder, on a filesystem shared by all nodes
#                              (default: ./glint-work); the jobs' logs go to GLINT_WORK/logs
#   GLINT_SHARDS               N, the number of array tasks (default 4; Slurm's MaxArraySize,
#                              1001 unless configured, bounds it)
#   GLINT_ARGS                 the glint command without --shard and -o
#                              (default: fractal mandelbrot --size 3840x2160)
#   GLINT_ARRAY_LIMIT          at most this many tasks at once (sbatch --array=1-N%LIMIT)
#   GLINT_KIND, GLINT_MERGED, GLINT_MERGE_ARGS: see render-array.sbatch and merge.sbatch
#   GLINT_SBATCH_ARGS          sbatch options for both jobs (e.g. --partition=render --account=art)
#   GLINT_RENDER_SBATCH_ARGS   sbatch options for the array only (e.g. --gres=gpu:1 --cpus-per-task=4)
#   GLINT_MERGE_SBATCH_ARGS    sbatch options for the merge only
#
# --parsable prints "ARRAY_JOB_ID MERGE_JOB_ID" and nothing else.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
parsable=0
case ${1:-} in
    --parsable) parsable=1 ;;
    "") ;;
    -h | --help) sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "submit.sh: unknown argument '$1' (only --parsable)" >&2; exit 2 ;;
esac

export GLINT=${GLINT:-glint}
export GLINT_SHARDS=${GLINT_SHARDS:-4}
export GLINT_ARGS=${GLINT_ARGS:-fractal mandelbrot --size 3840x2160}
GLINT_WORK=${GLINT_WORK:-$PWD/glint-work}
mkdir -p "$GLINT_WORK/logs"
GLINT_WORK=$(cd "$GLINT_WORK" && pwd)
export GLINT_WORK

case $GLINT_SHARDS in
    '' | *[!0-9]* | 0*) echo "submit.sh: GLINT_SHARDS must be a whole number >= 1, not '$GLINT_SHARDS'" >&2; exit 2 ;;
esac

array="1-$GLINT_SHARDS"
case ${GLINT_ARRAY_LIMIT:-} in
    '') ;;
    *[!0-9]* | 0*) echo "submit.sh: GLINT_ARRAY_LIMIT must be a whole number >= 1, not '$GLINT_ARRAY_LIMIT'" >&2; exit 2 ;;
    *) array="$array%$GLINT_ARRAY_LIMIT" ;;
esac

read -r -a common <<<"${GLINT_SBATCH_ARGS:-}"
read -r -a render <<<"${GLINT_RENDER_SBATCH_ARGS:-}"
read -r -a merge <<<"${GLINT_MERGE_SBATCH_ARGS:-}"

# sbatch --parsable prints "jobid" or "jobid;cluster".
array_id=$(sbatch --parsable --export=ALL --chdir="$GLINT_WORK" \
    --array="$array" --output="$GLINT_WORK/logs/render-%A_%a.out" \
    "${common[@]}" "${render[@]}" "$here/render-array.sbatch")
array_id=${array_id%%;*}

merge_id=$(sbatch --parsable --export=ALL --chdir="$GLINT_WORK" \
    --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
    --output="$GLINT_WORK/logs/merge-%j.out" \
    "${common[@]}" "${merge[@]}" "$here/merge.sbatch")
merge_id=${merge_id%%;*}

if [ "$parsable" = 1 ]; then
    echo "$array_id $merge_id"
else
    echo "render array: job $array_id, tasks 1-$GLINT_SHARDS"
    echo "merge:        job $merge_id, after the array succeeds"
    echo "work folder:  $GLINT_WORK (logs in $GLINT_WORK/logs)"
    echo "watch:        squeue -j $array_id,$merge_id"
fi
