# With expandable segments: a leak plus churn, so the trace has segment_map/unmap.
# Run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.
import os, pickle, time, torch
OUT = os.environ.get("FIXOUT", "/tmp/fix")
torch.cuda.memory._record_memory_history(max_entries=100000)
kept = []
for i in range(40):
    big = torch.empty((64 + (i % 5) * 16) << 20, dtype=torch.uint8, device="cuda")
    small = torch.empty(2 << 20, dtype=torch.uint8, device="cuda")
    if i % 4 == 0:
        kept.append(small)
    del big
    if i % 10 == 9:
        torch.cuda.empty_cache()
    time.sleep(0.01)
with open(os.path.join(OUT, "expandable_segments.pickle"), "wb") as f:
    pickle.dump(torch.cuda.memory._snapshot(), f)
print("expandable", torch.cuda.memory._snapshot()["segments"][0].get("is_expandable"))
torch.cuda.memory._record_memory_history(enabled=None)
