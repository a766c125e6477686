# s38: a CUDA-graph replay loop followed by a teardown about three times
# as long in allocator entries. Usage: python teardown_long.py OUT.pickle LEAK
# A 16-layer MLP (512 wide) captured after history is on, replayed 30 times
# with a new batch copied in (LINE batch, 512 KiB, freed in the step); with
# LEAK=1 each replay keeps sy.clone() (LINE keep, 512 KiB): a LEAK of 30
# blocks, 15 MiB. The teardown: the graph deleted, the state dict cloned
# (32 blocks in one statement), the model deleted, empty_cache, then four
# statements at four lines each making 64 buffers (4 KiB to 1 MiB) freed
# at once, then a concatenation of the clones made and freed. No loop in
# the teardown; the 30 replays are the run's repeating step.
import sys, torch, torch.nn as nn
LEAK = sys.argv[2] == "1"
L = []
for _ in range(16):
    L += [nn.Linear(512, 512), nn.ReLU()]
m = nn.Sequential(*L).cuda()
sx = torch.randn(256, 512, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s), torch.no_grad():
    for _ in range(3):
        m(sx)
torch.cuda.current_stream().wait_stream(s)
torch.cuda.synchronize()
torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="python")
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g), torch.no_grad():
    sy = m(sx)
kept, tot = [], 0.0
for step in range(30):
    sx.copy_(torch.randn(256, 512, device="cuda"))  # LINE batch
    g.replay()
    tot += float(sy.sum())
    if LEAK:
        kept.append(sy.clone())  # LINE keep
del g
sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
del m
torch.cuda.empty_cache()
a = [torch.empty(n * 1024, device="cuda") for n in range(1, 65)]
del a
b = [torch.empty(n * 1024, device="cuda") for n in range(65, 129)]
del b
c = [torch.empty(n * 1024, device="cuda") for n in range(129, 193)]
del c
d = [torch.empty(n * 1024, device="cuda") for n in range(193, 257)]
del d
final = torch.cat([t.flatten() for t in sd.values()])
del sd, final
torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(sys.argv[1])
print("kept", len(kept), "blocks", flush=True)
