#!/usr/bin/env bash
# Session 42. nvidia-smi -q -x (XML), -q (text) and the default table while a
# Python process holds 6 GiB of cuda:0 (torch.empty of 6 GiB, then a sleep),
# and with no process. Outputs under $RECOUT.
set -u
cd "$(dirname "$0")"
OUT=${RECOUT:-/tmp/rec}; mkdir -p "$OUT"
nvidia-smi -q -x > "$OUT/smi_q_x_idle.xml"
python3 -c 'import torch,time; x=torch.empty(6<<30, dtype=torch.uint8, device="cuda"); torch.cuda.synchronize(); print("holding", flush=True); time.sleep(25)' &
P=$!
for i in $(seq 1 60); do nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q . && break; sleep 0.5; done
sleep 2
nvidia-smi -q -x > "$OUT/smi_q_x_process.xml"
nvidia-smi -q > "$OUT/smi_q_process.txt"
nvidia-smi -q -x -d MEMORY > "$OUT/smi_q_x_d_memory.xml" 2>&1
nvidia-smi > "$OUT/smi_table_process.txt"
kill $P; wait
ls -l "$OUT"
