#!/usr/bin/env bash
# Driver: records every case of rec.py in one device run (branch hv, 2026-12-01).
# Usage (device, repo root): OUT=DIR bash testdata/gen/hv/run.sh  -> $OUT/hv.tar.gz
set -u
cd "$(dirname "$0")"
export RECOUT=/tmp/rechv
. ../rec_driver.sh

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
finish hv ../h200/neutralize.py
