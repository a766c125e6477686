# Issue 10. Under set_per_process_memory_fraction(0.08), a training step with batch 131072
# runs out of memory; the OOM is caught (except torch.OutOfMemoryError), empty_cache() is
# called, and the step is retried with half the batch (halving again if needed); training
# goes on 4 more steps. The snapshot is dumped at the end: its trace holds the oom entry and
# what came after. memory_summary() is written after the empty_cache().
import torch, torch.nn as nn
from rc import start, stop, dump, write, save_oom

torch.cuda.set_per_process_memory_fraction(0.08)
model = nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 4096)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)


def train_step(batch):
    x = torch.randn(batch, 4096, device="cuda")  # SITE input: batch x 16 KiB
    loss = model(x).square().mean()  # SITE forward: activations batch x 16 KiB each
    loss.backward()  # SITE backward
    opt.step()
    opt.zero_grad(set_to_none=True)
    return float(loss)


start()
batch, ooms, done = 131072, 0, 0
while done < 5:
    try:
        loss = train_step(batch)
        print("step", done, "batch", batch, "loss", loss, flush=True)
        done += 1
    except torch.OutOfMemoryError as e:
        ooms += 1
        print("OOM at batch", batch, "->", batch // 2, flush=True)
        if ooms == 1:
            save_oom("oom_caught_retry", e)
        del e
        torch.cuda.empty_cache()
        if ooms == 1:
            write("oom_caught_retry_summary_after_empty_cache.txt", torch.cuda.memory_summary())
        batch //= 2
        if batch < 1024:
            break
print("ooms", ooms, "final batch", batch, flush=True)
torch.cuda.synchronize()
dump("oom_caught_retry.pickle")
stop()
