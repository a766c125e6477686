# Issue 10. The same accumulation as oom_fraction.py, under
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and set_per_process_memory_fraction(0.05).
import os
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
import torch
from rc import start, stop, dump, save_oom

torch.cuda.set_per_process_memory_fraction(0.05)
outputs = []


def on_oom(device, alloc, device_alloc, device_free):
    print("observer: device", device, "alloc", alloc, "device_alloc", device_alloc, "device_free", device_free, flush=True)
    dump("oom_expandable.pickle")


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
    save_oom("oom_expandable", e)
stop()
