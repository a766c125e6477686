# gpuleak issue 16: a PyTorch loop that leaks 64 MiB every 0.5 s (128 MiB/s)
# for 20 s (40 steps, 2.5 GiB), then exits. Its own lines give the times.
import time
import torch

held = []
torch.empty(1, device="cuda")  # the CUDA context first
print("context %.6f pid-tree leader" % time.time(), flush=True)
time.sleep(1.0)
for i in range(40):
    held.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda").fill_(1))  # leaks 64 MiB
    print("step %d %.6f reserved %d" % (i, time.time(), torch.cuda.memory_reserved()), flush=True)
    time.sleep(0.5)
print("exit %.6f" % time.time(), flush=True)
