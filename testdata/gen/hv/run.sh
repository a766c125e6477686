#!/usr/bin/env bash
# Driver: records every case of rec.py in one device run (branch hv, 2026-12-01).
# Usage (device, repo root): OUT=DIR bash testdata/gen/hv/run.sh  -> $OUT/hv.tar.gz
set -u
cd "$(dirname "$0")"
HERE=$(pwd)
export RECOUT=/tmp/rechv PYTHONUNBUFFERED=1
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
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  for c in grad_accum_leak grad_accum_clean eval_leak val_graph_stacks_all wrapped_leak \
           two_streams_clean amp_clean hook_leak cudagraph_clean oom_peak; do
    part $c 30 python3 rec.py $c
  done
  part expandable_leak 30 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 rec.py expandable_leak
  part compile_clean 90 python3 rec.py compile_clean
  echo "### all done $(( $(date +%s) - T0 ))s"
}

main 2>&1 | tee $RECOUT/driver.log
find $RECOUT -type f -print0 | xargs -0 python3 ../h200/neutralize.py "$HERE" > $RECOUT/neutralize.log 2>&1
ls -la $RECOUT > $RECOUT/files.txt
tar czf $OUT/hv.tar.gz -C $RECOUT .
ls -la $OUT; tail -3 $RECOUT/neutralize.log
