# Session 42. export_memory_timeline of a profiled region that allocates one
# tensor on cuda:0 (torch.empty, 1024x1024 fp32 = 4 MiB, kept): the timeline
# has one point. Then a region that allocates nothing on the GPU (a CPU
# tensor only): the timeline of cuda:0 is empty. Each as .json and .raw.json.gz.
import os
import torch
from torch.profiler import profile, ProfilerActivity
from rc import OUT

torch.cuda.init()
torch.zeros(1, device="cuda")  # the context and the allocator, before profiling
torch.cuda.synchronize()
kept = []
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
             record_shapes=True, with_stack=True) as prof:
    kept.append(torch.empty(1024, 1024, device="cuda"))  # SITE one: 4194304 B
    torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
             record_shapes=True, with_stack=True) as empty:
    cpu = torch.ones(1024)
for p, stem in ((prof, "timeline_one_point"), (empty, "timeline_no_gpu_alloc")):
    for ext in (".json", ".raw.json.gz"):
        name = stem + ext
        try:
            p.export_memory_timeline(os.path.join(OUT, name), device="cuda:0")
            print("timeline", name, os.path.getsize(os.path.join(OUT, name)), flush=True)
        except Exception as e:
            print("memory timeline failed:", name, repr(e), flush=True)
