# Issue 10. Fragmentation under expandable segments: under set_per_process_memory_fraction(0.02)
# fill the cap with 3 MiB blocks, keep every other one (free the rest), then ask for one 512 MiB
# block. Whether that OOMs depends on whether the allocator can unmap the holes; the output
# says which happened (fragmentation_expandable_result.txt).
import os
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
import torch
from rc import start, stop, dump, write, save_oom

torch.cuda.set_per_process_memory_fraction(0.02)


def on_oom(device, alloc, device_alloc, device_free):
    print("observer: alloc", alloc, "device_alloc", device_alloc, "device_free", device_free, flush=True)


start()
blocks = []
try:
    while True:
        blocks.append(torch.empty(3 << 20, dtype=torch.uint8, device="cuda"))  # SITE fill: 3 MiB each
except torch.OutOfMemoryError:
    pass
n = len(blocks)
blocks = blocks[:-8]
for i in range(0, len(blocks), 2):
    blocks[i] = None
torch.cuda.synchronize()
dump("oom_fragmentation_expandable_holes.pickle")
torch._C._cuda_attach_out_of_memory_observer(on_oom)
try:
    big = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")  # SITE big: 512 MiB request
    write("oom_fragmentation_expandable_result.txt", "no OOM: 512 MiB fitted after filling %d blocks\n" % n)
except torch.OutOfMemoryError as e:
    write("oom_fragmentation_expandable_result.txt", "OOM after filling %d blocks\n" % n)
    save_oom("oom_fragmentation_expandable", e)
dump("oom_fragmentation_expandable.pickle")
stop()
