#!/usr/bin/env bash
# Driver: records every case of rec.py in one device run (branch hv2, 2026-12-01).
# Usage (device, from the folder holding rec.py): OUT=DIR NEUTRALIZE=.../neutralize.py bash run.sh
#   -> $OUT/hv2.tar.gz (snapshots, logs, driver.log with each case's NOTE lines)
set -u
cd "$(dirname "$0")"
export RECOUT=/tmp/rechv2
. ../rec_driver.sh

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
finish hv2 "${NEUTRALIZE:-../../testdata/gen/h200/neutralize.py}"
