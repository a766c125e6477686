# Real recordings for session 46's tests (memory timelines of heavy keeps; CUDA graph / MemPool snapshots).
import os, sys, json, torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity
OUT = os.environ["OUT"]
print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), flush=True)
dev = "cuda"

def mlp(width=4096, depth=6):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*layers).to(dev)

def timeline(name, body, steps):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, record_shapes=True, with_stack=True) as prof:
        body(steps)
        torch.cuda.synchronize()
    p = os.path.join(OUT, name + "_memory_timeline.json")
    prof.export_memory_timeline(p, device="cuda:0")
    print("wrote", p, os.path.getsize(p), "max_alloc", torch.cuda.max_memory_allocated(), flush=True)
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()

# 1. eval loop without no_grad, outputs appended: each step keeps its whole graph (all saved activations).
def eval_keep_graph(steps):
    m = mlp(); kept = []
    for i in range(steps):
        x = torch.randn(2048, 4096, device=dev)
        kept.append(m(x))  # no torch.no_grad(): the graph and its saved tensors live on
    return kept
# 2. the same loop, correct (no_grad, .cpu() scalar kept)
def eval_clean(steps):
    m = mlp(); kept = []
    with torch.no_grad():
        for i in range(steps):
            x = torch.randn(2048, 4096, device=dev)
            kept.append(m(x).sum().item())
# 3. training loop that keeps ~80% of each step's activations: a forward hook keeps every other layer's output
def train_keep_acts(steps):
    m = mlp(); opt = torch.optim.SGD(m.parameters(), lr=1e-3); store = []
    def hook(mod, inp, out):
        store.append(out.detach())
    for j, l in enumerate(m):
        if isinstance(l, nn.Linear):
            l.register_forward_hook(hook)
    for i in range(steps):
        x = torch.randn(2048, 4096, device=dev)
        loss = m(x).pow(2).mean(); loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
# 4. training loop, clean, accumulates loss correctly
def train_clean(steps):
    m = mlp(); opt = torch.optim.SGD(m.parameters(), lr=1e-3); tot = 0.0
    for i in range(steps):
        x = torch.randn(2048, 4096, device=dev)
        loss = m(x).pow(2).mean(); loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        tot += loss.item()
# 5. training loop accumulating the loss tensor (graph kept: only the small graph nodes, backward freed saved tensors)
def train_sum_loss(steps):
    m = mlp(); opt = torch.optim.SGD(m.parameters(), lr=1e-3); tot = 0
    for i in range(steps):
        x = torch.randn(2048, 4096, device=dev)
        loss = m(x).pow(2).mean(); loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        tot = tot + loss

for name, fn, n in [("dev46_eval_keep_graph_8", eval_keep_graph, 8), ("dev46_eval_clean_8", eval_clean, 8),
                    ("dev46_train_keep_acts_8", train_keep_acts, 8), ("dev46_train_clean_8", train_clean, 8),
                    ("dev46_train_sum_loss_8", train_sum_loss, 8)]:
    try:
        timeline(name, fn, n)
    except Exception as e:
        print(name, "FAILED", repr(e), flush=True)

# Snapshots: CUDA graph private pool; MemPool
def snap(name):
    p = os.path.join(OUT, name + ".pickle")
    torch.cuda.memory._dump_snapshot(p)
    print("wrote", p, os.path.getsize(p), flush=True)

torch.cuda.empty_cache()
torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=200000)
try:
    m = mlp(2048, 4); opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    sx = torch.randn(1024, 2048, device=dev)
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True); m(sx).pow(2).mean().backward(); opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph(); opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        sl = m(sx).pow(2).mean(); sl.backward(); opt.step()
    for i in range(5):
        sx.copy_(torch.randn(1024, 2048, device=dev)); g.replay()
    torch.cuda.synchronize()
    snap("dev46_cudagraph_train_5replays")
    del g; torch.cuda.synchronize()
    snap("dev46_cudagraph_deleted")
except Exception as e:
    print("cudagraph FAILED", repr(e), flush=True)
torch.cuda.memory._record_memory_history(enabled=None)
torch.cuda.empty_cache()
torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=200000)
try:
    pool = torch.cuda.MemPool()
    keep = []
    with torch.cuda.use_mem_pool(pool):
        for i in range(6):
            t = torch.empty(64 << 20, dtype=torch.uint8, device=dev)
            if i % 2 == 0:
                keep.append(t)
            del t
    outside = torch.empty(32 << 20, dtype=torch.uint8, device=dev)
    torch.cuda.synchronize()
    snap("dev46_mempool_keep3")
except Exception as e:
    print("mempool FAILED", repr(e), flush=True)
torch.cuda.memory._record_memory_history(enabled=None)
