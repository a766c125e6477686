# Writes a snapshot-shaped pickle of many segments with Python's own
# pickler, for the block scan (parse/pytorch: TestBlockScanTaken and
# TestFastPathsDifferential). Shaped as PyTorch's snapshots are: frame
# dicts shared by every stack that holds them; each block with its own
# frames list, which its segment's frames and its trace entries may share
# (an allocation's block, segment and entries share one traceback); more
# than 1,000 segments, so that the blocks after the pickler's first batch
# hold lists of frames already converted, which the scan takes; inactive
# blocks with no frames; stacks first seen in every batch, so that the
# order in which stacks are interned shows. Run: python3 gen.py
import pickle

frames = [{"filename": f, "line": l, "name": n} for f, l, n in [
    ("train.py", 10, "step"), ("model.py", 42, "forward"), ("layers.py", 7, "linear"),
    ("??", 0, "c10::cuda::CUDACachingAllocator::malloc"), ("optim.py", 99, "update")]]


def stack(n, depth):
    # The frames of n's digits in base 5: stacks seen first in any batch.
    return [frames[n // 5 ** d % 5] for d in range(depth)]


segs, entries = [], []
base = 139703418552320
for i in range(1100):
    addr = base + i * (2 << 20)
    blocks = []
    n = 1 + i % 3
    for j in range(n):
        active = (i + j) % 4 != 3
        fl = stack(3 * i + j, 2 + (i + j) % 4) if active else []
        b = {"address": addr + j * 4096, "size": 4096, "requested_size": 4000 + j,
             "state": "active_allocated" if active else "inactive", "frames": fl}
        if i % 97 == 5 and j == 0:
            b["frames"] = None
        blocks.append(b)
        if active and i % 5 == 0:
            # The allocation's trace entry shares the block's list.
            entries.append({"action": "alloc", "addr": addr + j * 4096, "size": 4096, "stream": 0,
                            "time_us": 1796089300106246 + len(entries), "frames": b["frames"] or []})
    seg = {"device": 0, "address": addr, "total_size": 2 << 20, "allocated_size": 4096 * n,
           "active_size": 4096 * n, "requested_size": 4000 * n, "stream": 0, "segment_type": "small",
           "segment_pool_id": (0, 0), "is_expandable": False,
           # The segment's traceback is its first block's (the same
           # list), or one of its own.
           "frames": blocks[0]["frames"] if i % 2 == 0 else stack(7 * i + 1, 5),
           "blocks": blocks}
    segs.append(seg)
with open("segments_p4.pickle", "wb") as f:
    pickle.dump({"segments": segs, "device_traces": [entries], "allocator_settings": {}}, f, protocol=4)
