# Issue 11. An Adam training loop of 60 steps. With LEAK=1 (default) one small tensor
# (16x1024 fp32 = 64 KiB) is appended to a global list every 6 steps: a slow leak, 10 tensors.
# With LEAK=0 the same loop has no leak: memory grows only in step 1 (Adam state + grads).
import json, os, sys
import torch, torch.nn as nn
from rc import start, stop, dump, write, block_states

LEAK = os.environ.get("LEAK", "1") == "1"
NAME = "slow_leak_every_k" if LEAK else "first_step_growth"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
history = []

start()
for step in range(60):
    x = torch.randn(256, 1024, device="cuda")
    out = model(x)
    loss = out.square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if LEAK and step % 6 == 0:
        history.append(out[:16].detach().clone())  # SITE slow_leak: 64 KiB every 6 steps
torch.cuda.synchronize()
p = dump(NAME + ".pickle")
stop()
info = block_states(p)
info.update(leaked=len(history), params=sum(q.numel() for q in model.parameters()))
write(NAME + "_counts.json", json.dumps(info, indent=1))
