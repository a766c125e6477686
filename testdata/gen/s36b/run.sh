#!/usr/bin/env bash
# Driver: records every case of rec.py in one device run (tester s36b, 2026-12-02), the
# cases 6 at a time, each in its own process under a time limit.
# Usage (device, repo root): OUT=DIR bash testdata/gen/s36b/run.sh  -> $OUT/s36b.tar.gz
# (The device copies the project's main tree, so this folder was sent inside the command:
# xz + base64 pieces appended to a file in /tmp, then unpacked into testdata/gen/s36b/.)
set -u
cd "$(dirname "$0")"
export RECOUT=/tmp/recs36b PYTHONUNBUFFERED=1
rm -rf $RECOUT; mkdir -p $RECOUT/log
T0=$(date +%s)
one() { local t=90; [ $1 = compile_ro_clean ] && t=150
  timeout -k 5 $t python3 rec.py $1 > $RECOUT/log/$1.log 2>&1; echo "### $1 rc=$? $(( $(date +%s) - T0 ))s" >> $RECOUT/log/$1.log; }
export -f one; export T0
{
  date -u; nvidia-smi -L
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  printf '%s\n' compile_ro_clean wrap_leak wrap_clean wrap_sparse_leak ga_leak ga_clean amp_tx_clean \
    ckpt_reentrant_clean ckpt_nonreentrant_clean streams_clean graph_step_clean cache_lru_early \
    cache_lru_late cache_dict_leak ctx_alloc_leak ctx_alloc_clean stacks_all_amp_leak |
    xargs -P 8 -I{} bash -c 'one {}'
  for f in $RECOUT/log/*.log; do echo "=== $(basename $f)"; tail -c 3000 $f; done
  echo "### all done $(( $(date +%s) - T0 ))s"
} > $RECOUT/driver.log 2>&1
find $RECOUT -name '*.pickle' -print0 | xargs -0 python3 ../h200/neutralize.py "$(pwd)" > $RECOUT/neutralize.log 2>&1
for f in $RECOUT/*.pickle; do gzip -9n $f; done
ls -la $RECOUT > $RECOUT/files.txt
tar czf $OUT/s36b.tar.gz -C $RECOUT .
ls -la $OUT; tail -40 $RECOUT/driver.log
