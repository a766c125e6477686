# s36b driver: OUT=DIR bash run.sh (in this folder) -> $OUT/s36b.tar.gz
export RECOUT=/tmp/o PYTHONUNBUFFERED=1 T0=$(date +%s); mkdir -p $RECOUT/log
one() { t=90; [ $1 = compile_ro_clean ] && t=150
 timeout -k 5 $t python3 rec.py $1 >$RECOUT/log/$1.log 2>&1; echo "### $1 rc=$? $(($(date +%s)-T0))s" >>$RECOUT/log/$1.log; }
export -f one
{ date -u; nvidia-smi -L; python3 -c 'import sys,torch;print(sys.version,torch.__version__,torch.version.cuda)'
 echo compile_ro_clean wrap_leak wrap_clean wrap_sparse_leak ga_leak ga_clean amp_tx_clean ckpt_reentrant_clean ckpt_nonreentrant_clean streams_clean graph_step_clean cache_lru_early cache_lru_late cache_dict_leak ctx_alloc_leak ctx_alloc_clean stacks_all_amp_leak | tr ' ' '\n' | xargs -P8 -I{} bash -c 'one {}'
 for f in $RECOUT/log/*; do echo "== $f"; tail -c 2500 $f; done; } >$RECOUT/driver.log 2>&1
python3 neutralize.py . $RECOUT/*.pickle >$RECOUT/neutralize.log 2>&1; gzip -9n $RECOUT/*.pickle
ls -la $RECOUT >$RECOUT/files.txt; tar czf $OUT/s36b.tar.gz -C $RECOUT .; tail -c 3000 $RECOUT/driver.log
