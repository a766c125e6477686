# Issue 10. An OOM under set_per_process_memory_fraction(0.05) by accumulation: an eval loop
# keeps every 256 MiB output in a list until the capped allocator refuses. Writes the
# snapshot from the OOM observer, the error text, the traceback and memory_summary().
import os
import torch
from rc import start, stop, dump, save_oom

torch.cuda.set_per_process_memory_fraction(0.05)
outputs = []


def on_oom(device, alloc, device_alloc, device_free):
    print("observer: device", device, "alloc", alloc, "device_alloc", device_alloc, "device_free", device_free, flush=True)
    dump("oom_fraction.pickle")


def evaluate():
    while True:
        x = torch.randn(8192, 8192, device="cuda")  # SITE input: 256 MiB, freed each iteration
        outputs.append(x * 2)  # SITE kept: 256 MiB kept per iteration (the accumulation)


start()
torch._C._cuda_attach_out_of_memory_observer(on_oom)
try:
    evaluate()
except torch.OutOfMemoryError as e:
    print("kept", len(outputs), "outputs", flush=True)
    save_oom("oom_fraction", e)
stop()
