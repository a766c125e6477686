# Issue 11. 3 steps of Adam on a ~50M-parameter model (12 x Linear(2048, 2048) = 50.36M params,
# 201 MB fp32), history started before step 1. Step 1 allocates grads (201 MB) and Adam's
# exp_avg + exp_avg_sq (2 x 201 MB); steps 2 and 3 reuse. No leak.
import json
import torch, torch.nn as nn
from rc import start, stop, dump, write, block_states

model = nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(12)]).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
torch.cuda.synchronize()
start()
for step in range(3):
    x = torch.randn(512, 2048, device="cuda")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print("step", step, "allocated", torch.cuda.memory_allocated(), flush=True)
p = dump("adam_few_steps.pickle")
stop()
info = block_states(p)
info.update(params=sum(q.numel() for q in model.parameters()), allocated=torch.cuda.memory_allocated())
write("adam_few_steps_counts.json", json.dumps(info, indent=1))
