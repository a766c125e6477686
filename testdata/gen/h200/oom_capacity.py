# Issue 10. A single request bigger than the whole GPU: after a small model is loaded
# (about 1 GiB), one 200 GiB tensor is asked for. No cap, nothing else on the GPU.
import torch, torch.nn as nn
from rc import start, stop, dump, save_oom


def on_oom(device, alloc, device_alloc, device_free):
    print("observer: device", device, "alloc", alloc, "device_alloc", device_alloc, "device_free", device_free, flush=True)
    dump("oom_capacity.pickle")


start()
torch._C._cuda_attach_out_of_memory_observer(on_oom)
model = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(16)]).cuda()  # SITE model: 16 x 64 MiB weights
try:
    cache = torch.empty(200 << 30, dtype=torch.uint8, device="cuda")  # SITE huge: 200 GiB request
except torch.OutOfMemoryError as e:
    save_oom("oom_capacity", e)
stop()
