# Issue 11. 200 training steps of a small MLP. An LRU cache (OrderedDict) keeps the
# last 40 step outputs (96 KiB each, the oldest evicted after 40): bounded, not a leak.
# Beside it a real leak: every 5 steps one 1 MiB tensor is appended to a list forever.
import time
from collections import OrderedDict
import torch, torch.nn as nn
from rc import start, stop, dump, write, block_states
import json

CACHE_SIZE = 40
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 384)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
cache = OrderedDict()
seen_batches = []


def remember(step, y):
    cache[step] = y.detach().clone()  # SITE cache_put: 64x384 fp32 = 98304 B, bounded at 40
    if len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def log_batch(step):
    seen_batches.append(torch.zeros(1 << 20, dtype=torch.uint8, device="cuda"))  # SITE leak: 1 MiB every 5 steps


def train_step(step):
    x = torch.randn(64, 512, device="cuda")
    y = model(x)
    y.square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    remember(step, y)
    if step % 5 == 0:
        log_batch(step)


start()
for step in range(200):
    train_step(step)
    time.sleep(0.002)
torch.cuda.synchronize()
p = dump("bounded_cache_leak.pickle")
stop()
info = block_states(p)
info.update(cache_len=len(cache), leaked=len(seen_batches))
write("bounded_cache_leak_counts.json", json.dumps(info, indent=1))
