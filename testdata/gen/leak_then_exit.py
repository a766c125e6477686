# Issue 12. A process that leaks +128 MiB every 0.5 s for 30 s (60 x 128 MiB = 7.5 GiB),
# then EXITS. Its own log lines give the wall-clock times of start, each step and exit.
import time
import torch

held = []
t0 = time.time()
print("start %.3f" % t0, flush=True)
torch.cuda.init()
torch.empty(1, device="cuda")
print("context %.3f" % time.time(), flush=True)
for i in range(60):
    held.append(torch.empty(128 << 20, dtype=torch.uint8, device="cuda").fill_(1))  # SITE leak: 128 MiB per 0.5 s
    print("step %d %.3f reserved %d" % (i, time.time(), torch.cuda.memory_reserved()), flush=True)
    time.sleep(0.5)
print("exit %.3f" % time.time(), flush=True)
