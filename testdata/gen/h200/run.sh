#!/usr/bin/env bash
# Driver: records every item in one device run. Usage (device): cd .rec && bash run.sh
# Outputs: $OUT/rec.tar.gz holding everything, this driver's log and the scripts as run.
set -u
cd "$(dirname "$0")"
HERE=$(pwd)
export RECOUT=/tmp/rec PYTHONUNBUFFERED=1
rm -rf $RECOUT; mkdir -p $RECOUT
T0=$(date +%s); DEADLINE=$((T0 + ${BUDGET:-500}))

part() {
  local name=$1 secs=$2; shift 2
  local now=$(date +%s); local left=$((DEADLINE - now))
  if [ $left -lt 15 ]; then echo "### SKIP $name (out of time)"; return; fi
  [ $secs -gt $left ] && secs=$left
  echo "### $name start $(date -u +%T) limit ${secs}s"
  timeout -k 5 $secs "$@"
  echo "### $name rc=$? took $(( $(date +%s) - now ))s"
}

main() {
  echo "### env"
  date -u; uname -r
  nvidia-smi -L; nvidia-smi --version
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
  python3 -c 'import cupy; print("cupy", cupy.__version__)'
  python3 -c 'import pynvml; print("pynvml ok", getattr(pynvml, "__version__", "?"))'
  compute-sanitizer --version | tail -2; nvcc --version | tail -2
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv

  # Issue 11
  part bounded_cache_leak 60 python3 bounded_cache_leak.py
  part side_stream_pending 60 python3 side_stream_pending.py
  part slow_leak_every_k 60 env LEAK=1 python3 slow_leak_every_k.py
  part first_step_growth 60 env LEAK=0 python3 slow_leak_every_k.py
  part forward_many_layers 40 python3 forward_many_layers.py
  part adam_few_steps 60 python3 adam_few_steps.py
  # Issue 10
  part oom_fraction 60 python3 oom_fraction.py
  part oom_expandable 60 python3 oom_expandable.py
  part oom_capacity 40 python3 oom_capacity.py
  part oom_other_process 90 python3 oom_other_process.py
  part oom_caught_retry 60 python3 oom_caught_retry.py
  part oom_fragmentation_expandable 60 python3 oom_fragmentation_expandable.py
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv
  # Issue 12: samplers run only here
  part leak_then_exit 75 bash sample_leak_then_exit.sh
  # Issue 14
  mkdir -p $RECOUT/native
  nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv -lms 250 > $RECOUT/native/query_apps.csv 2>&1 & S1=$!
  nvidia-smi --query-gpu=timestamp,index,uuid,name,memory.total,memory.used,memory.free --format=csv -lms 250 > $RECOUT/native/query_gpu.csv 2>&1 & S2=$!
  sleep 1
  part native_beside_flat 50 python3 native_beside_flat.py
  sleep 1; kill $S1 $S2; wait $S1 $S2 2>/dev/null
  part profile_keep_outputs 90 python3 profile_keep_outputs.py
  # Issue 13
  mkdir -p $RECOUT/sanitizer
  part nvcc_cublas 60 nvcc -g -lineinfo -Xcompiler -rdynamic -o cublas_leak cublas_leak.cu -lcublas
  [ -x cublas_leak ] && part san_cublas 90 bash -c "compute-sanitizer --leak-check full ./cublas_leak > $RECOUT/sanitizer/san_cublas_no_destroy.txt 2>&1"
  part san_torch 170 bash -c "compute-sanitizer --leak-check full python3 torch_matmul.py > $RECOUT/sanitizer/san_torch_matmul.txt 2>&1"
  echo "### all parts done $(date -u +%T), $(( $(date +%s) - T0 ))s"
}

main 2>&1 | tee $RECOUT/driver.log
mkdir -p $RECOUT/scripts
cp rc.py run.sh neutralize.py nvml_sampler.py sample_leak_then_exit.sh *.py *.cu $RECOUT/scripts/ 2>/dev/null
find $RECOUT -type f ! -path "$RECOUT/scripts/*" -print0 | xargs -0 python3 neutralize.py "$HERE" > $RECOUT/neutralize.log 2>&1
for f in $RECOUT/*trace.json; do [ -f "$f" ] && gzip -9 "$f"; done
ls -laR $RECOUT > $RECOUT/files.txt
tar czf $OUT/rec.tar.gz -C $RECOUT .
ls -la $OUT; tail -5 $RECOUT/neutralize.log
