# Issue 11. 20 iterations: a 64 MiB tensor made on the default stream is used on a side
# stream behind long matmuls, record_stream()ed, then deleted while the side stream still
# runs. The snapshot is dumped WITHOUT synchronizing, so those blocks are in state
# active_pending_free; a second snapshot after synchronize() (and one allocation, which
# lets the allocator process the finished events) for contrast.
import json
import torch
from rc import start, stop, dump, write, block_states

torch.backends.cuda.matmul.allow_tf32 = False
side = torch.cuda.Stream()
a = torch.randn(8192, 8192, device="cuda")  # 256 MiB operand, made before history starts
torch.cuda.synchronize()
start()
for i in range(20):
    buf = torch.ones(64 << 20, dtype=torch.uint8, device="cuda")  # SITE staging: 64 MiB, default stream
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            c = a @ a  # long kernels queued on the side stream (8192^3 fp32)
        buf.add_(1)
    buf.record_stream(side)
    del buf, c
p1 = dump("side_stream_pending.pickle")
n1 = block_states(p1)
print("before sync: active_pending_free =", n1["states"].get("active_pending_free", 0), n1, flush=True)
torch.cuda.synchronize()
tiny = torch.empty(512, device="cuda")  # SITE tiny: lets the allocator process finished events
p2 = dump("side_stream_synced.pickle")
stop()
n2 = block_states(p2)
print("after sync: active_pending_free =", n2["states"].get("active_pending_free", 0), n2, flush=True)
write("side_stream_counts.json", json.dumps({"pending": n1, "synced": n2}, indent=1))
