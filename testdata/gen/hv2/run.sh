#!/usr/bin/env bash
# Driver: records every case of rec.py in one device run (branch hv2, 2026-12-01).
# Usage (device, from the folder holding rec.py): OUT=DIR NEUTRALIZE=.../neutralize.py bash run.sh
#   -> $OUT/hv2.tar.gz (snapshots, logs, driver.log with each case's NOTE lines)
set -u
cd "$(dirname "$0")"
HERE=$(pwd)
export RECOUT=/tmp/rechv2 PYTHONUNBUFFERED=1
rm -rf $RECOUT; mkdir -p $RECOUT
T0=$(date +%s); DEADLINE=$((T0 + ${BUDGET:-200}))

part() {
  local name=$1 secs=$2; shift 2
  local now=$(date +%s); local left=$((DEADLINE - now))
  if [ $left -lt 10 ]; then echo "### SKIP $name (out of time)"; return; fi
  [ $secs -gt $left ] && secs=$left
  echo "### $name start $(date -u +%T) limit ${secs}s"
  timeout -k 5 $secs "$@"
  echo "### $name rc=$? took $(( $(date +%s) - now ))s"
}

main() {
  date -u; nvidia-smi -L
  python3 -c 'import sys, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)'
  for c in ${CASES:-late_leak capped_cache slow_leak loss_list_leak sched_clip_clean reload_leak reload_clean \
           gan_clean gan_leak checkpoint_clean pinned_loader_clean frag_oom chat_kv_leak generate_clean}; do
    part $c 30 python3 rec.py $c
  done
  echo "### all done $(( $(date +%s) - T0 ))s"
}

main 2>&1 | tee $RECOUT/driver.log
find $RECOUT -type f -print0 | xargs -0 python3 ${NEUTRALIZE:-../../testdata/gen/h200/neutralize.py} "$HERE" > $RECOUT/neutralize.log 2>&1
ls -la $RECOUT > $RECOUT/files.txt
tar czf $OUT/hv2.tar.gz -C $RECOUT .
ls -la $OUT; tail -3 $RECOUT/neutralize.log
