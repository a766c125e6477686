# Issue 11. One forward pass of a 48-layer MLP (width 2048, batch 256, params requiring grad,
# autograd on), history covering only that forward. Each ReLU output (256x2048 fp32 = 2 MiB)
# is saved for backward, so allocated memory rises monotonically by ~48 x 2 MiB. No leak:
# backward would free them.
import json
import torch, torch.nn as nn
from rc import start, stop, dump, write, block_states

LAYERS = 48


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.relu(self.fc(x))  # SITE act: linear out (transient) + relu out (kept), 2 MiB each


model = nn.Sequential(*[Block(2048) for _ in range(LAYERS)]).cuda()
x = torch.randn(256, 2048, device="cuda")
torch.cuda.synchronize()
start()
y = model(x)
torch.cuda.synchronize()
p = dump("forward_many_layers.pickle")
stop()
info = block_states(p)
info.update(layers=LAYERS, allocated=torch.cuda.memory_allocated())
write("forward_many_layers_counts.json", json.dumps(info, indent=1))
