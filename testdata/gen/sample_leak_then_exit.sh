# Issue 12: start the samplers, run leak_then_exit.py (30 s, then exit), 5 s idle, stop them.
# Outputs in $RECOUT/nvml/. Nothing else uses the GPU while this runs.
set -u
D=$RECOUT/nvml; mkdir -p $D
nvidia-smi --query-gpu=timestamp,index,uuid,name,memory.total,memory.used,memory.free --format=csv -lms 250 > $D/query_gpu.csv 2> $D/query_gpu.err & P1=$!
nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv -lms 250 > $D/query_apps.csv 2> $D/query_apps.err & P2=$!
nvidia-smi dmon -s mu -o TD > $D/dmon_mu_TD.txt 2>&1 & P3=$!
nvidia-smi pmon -s m -o TD > $D/pmon_m_TD.txt 2>&1 & P4=$!
python3 nvml_sampler.py $D/pynvml.jsonl 0.25 > $D/pynvml.err 2>&1 & P5=$!
sleep 3
python3 leak_then_exit.py > $D/leak_then_exit.log 2>&1 & L=$!
sleep 15
nvidia-smi > $D/nvidia_smi_default.txt 2>&1
nvidia-smi -q -d MEMORY > $D/nvidia_smi_q_memory.txt 2>&1
wait $L; echo "leaker rc $?"; date +%s.%N > $D/leaker_exited_at.txt
sleep 5
kill $P1 $P2 $P3 $P4 $P5 2>/dev/null; wait $P1 $P2 $P3 $P4 $P5 2>/dev/null
ls -la $D
