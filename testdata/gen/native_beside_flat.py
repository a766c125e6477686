# Issue 14. PyTorch trains with flat memory (SGD on an MLP, one step every 0.25 s) while, in the
# same process, CuPy's cupy.cuda.runtime.malloc allocates 64 MiB every 0.5 s and never frees
# it (30 x 64 MiB = 1.875 GiB over 15 s). nvidia-smi samples the process meanwhile (driver);
# a PyTorch snapshot is dumped at the end: it does not see the CuPy memory.
import json, time
import torch, torch.nn as nn
import cupy
from rc import start, stop, dump, write, block_states

model = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
native = []
start()
t0 = time.time()
step = 0
while len(native) < 30:
    x = torch.randn(256, 1024, device="cuda")
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    step += 1
    if step % 2 == 0:
        native.append(cupy.cuda.runtime.malloc(64 << 20))  # SITE native: 64 MiB, never freed
        print("t %.3f native %d torch_reserved %d" % (time.time(), len(native), torch.cuda.memory_reserved()), flush=True)
    time.sleep(0.25)
torch.cuda.synchronize()
p = dump("native_beside_flat.pickle")
stop()
free, total = torch.cuda.mem_get_info()
info = block_states(p)
info.update(steps=step, native_allocs=len(native), native_bytes=len(native) * (64 << 20),
            torch_reserved=torch.cuda.memory_reserved(), torch_allocated=torch.cuda.memory_allocated(),
            device_used=total - free)
write("native_beside_flat_counts.json", json.dumps(info, indent=1))
