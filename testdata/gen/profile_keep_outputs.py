# Issue 14. torch.profiler(profile_memory=True, with_stack=True, record_shapes=True) of 10 steps
# (no schedule; prof.step() each step) of a loop that keeps one output per step
# (512x1024 fp32 = 2 MiB each, 10 kept). Exports the Chrome trace and the memory timeline.
import os
import torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity, record_function
from rc import OUT

model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept = []
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
             record_shapes=True, with_stack=True) as prof:
    for i in range(10):
        x = torch.randn(512, 1024, device="cuda")
        out = model(x)
        loss = out.pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        kept.append(out.detach().clone())  # SITE keep: 2 MiB per step, never freed
        prof.step()
torch.cuda.synchronize()
prof.export_chrome_trace(os.path.join(OUT, "profile_keep_outputs_trace.json"))
print("trace", os.path.getsize(os.path.join(OUT, "profile_keep_outputs_trace.json")), flush=True)
for name, dev in (("profile_keep_outputs_memory_timeline.json", "cuda:0"),
                  ("profile_keep_outputs_memory_timeline.raw.json.gz", "cuda:0")):
    try:
        prof.export_memory_timeline(os.path.join(OUT, name), device=dev)
        print("timeline", name, os.path.getsize(os.path.join(OUT, name)), flush=True)
    except Exception as e:
        print("memory timeline failed:", name, repr(e), flush=True)
