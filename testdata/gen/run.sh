#!/usr/bin/env bash
# Makes new real inputs on a GPU machine (see README.md in this folder).
# Usage: OUT=/some/dir bash testdata/gen/run.sh   -> $OUT/realgen.tar.gz
set -u
cd "$(dirname "$0")"
export FIXOUT=${FIXOUT:-/tmp/realgen}
mkdir -p "$FIXOUT"
log() { echo "### $*"; }
nvidia-smi -L; nvidia-smi --version | head -3
python3 -c 'import torch, sys; print(torch.__version__, sys.version)'
compute-sanitizer --version | tail -2

log samplers
nvidia-smi --query-gpu=timestamp,index,uuid,name,memory.total,memory.used,memory.free --format=csv,noheader,nounits -lms 200 > "$FIXOUT/query_gpu_noheader_nounits.csv" & P1=$!
nvidia-smi --query-gpu=index,memory.used,memory.total,timestamp,name,memory.reserved --format=csv -lms 500 > "$FIXOUT/query_gpu_reordered.csv" & P2=$!
nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv,noheader -lms 500 > "$FIXOUT/query_apps_noheader.csv" & P3=$!
nvidia-smi dmon -s mu > "$FIXOUT/dmon_mu.txt" & P4=$!
nvidia-smi pmon -s mu -o T > "$FIXOUT/pmon_mu_T.txt" & P5=$!
python3 nvml_sampler.py "$FIXOUT/pynvml_2.jsonl" 0.25 & P6=$!
sleep 1

log snapshots
timeout 240 python3 snap_variants.py
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 60 python3 expandable.py
timeout 120 python3 hf_leak.py
timeout 90 python3 oom_other.py
sleep 1
kill $P1 $P2 $P3 $P4 $P5 $P6 2>/dev/null; wait 2>/dev/null

log sanitizer
nvcc -g -lineinfo -Xcompiler -rdynamic -o leaky leaky.cu && {
  timeout 60 compute-sanitizer --leak-check full --print-limit 3 ./leaky 5 > "$FIXOUT/san_print_limit.txt" 2>&1
  timeout 60 compute-sanitizer --leak-check full --prefix '### ' ./leaky 2 > "$FIXOUT/san_prefix.txt" 2>&1
  timeout 60 compute-sanitizer --leak-check full --demangle no ./leaky 2 > "$FIXOUT/san_nodemangle.txt" 2>&1
  timeout 90 compute-sanitizer --leak-check full --target-processes all bash -c './leaky 1; ./leaky 2' > "$FIXOUT/san_two_processes.txt" 2>&1
  timeout 60 compute-sanitizer --leak-check full --xml --save "$FIXOUT/san_oob.xml" ./leaky 3 1 > "$FIXOUT/san_oob_xml_stdout.txt" 2>&1
  timeout 60 compute-sanitizer --leak-check full --log-file "$FIXOUT/san_logfile.txt" ./leaky 2 > /dev/null 2>&1
  timeout 120 compute-sanitizer --leak-check full python3 -c 'import torch; x = torch.ones(1000, device="cuda"); y = x * 2; print(float(y.sum()))' > "$FIXOUT/san_torch.txt" 2>&1
}
ls -la "$FIXOUT"
tar czf "$OUT/realgen.tar.gz" -C "$FIXOUT" .
