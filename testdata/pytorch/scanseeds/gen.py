# Writes small snapshot-shaped pickles with Python's own pickler, as seeds for
# FuzzRecordScanDifferential (parse/pytorch): the record scan must take their
# trace entries, so the fuzzer mutates the shapes it reads. Run: python3 gen.py
import pickle

def snapshot(n, frames_every=3):
    f1 = {"filename": "train.py", "line": 10, "name": "step"}
    f2 = {"filename": "model.py", "line": 42, "name": "forward"}
    stacks = [[], [f1], [f2, f1]]
    entries = []
    for i in range(n):
        entries.append({
            "action": ["alloc", "free_requested", "free_completed", "segment_alloc"][i % 4],
            "addr": 139703418552320 + 512 * (i // 3),
            "size": [0, 255, 40000, 98304, 2 ** 33][i % 5],
            "stream": 0 if i % 7 else 94244608,
            "time_us": 1796089300106246 + i,
            "compile_context": "N/A",
            "user_metadata": "",
            "frames": list(stacks[i % frames_every]),
        })
    seg = {"device": 0, "address": 139703418552320, "total_size": 2097152, "allocated_size": 512,
           "active_size": 512, "requested_size": 500, "stream": 0, "segment_type": "small",
           "segment_pool_id": (0, 0), "is_expandable": False, "frames": [f1],
           "blocks": [{"address": 139703418552320, "size": 512, "requested_size": 500,
                       "state": "active_allocated", "frames": [f1]}]}
    return {"segments": [seg], "device_traces": [entries], "allocator_settings": {}}

for proto in (2, 4, 5):
    with open(f"entries_p{proto}.pickle", "wb") as f:
        pickle.dump(snapshot(12), f, protocol=proto)
with open("two_devices_p4.pickle", "wb") as f:
    s = snapshot(6)
    s["device_traces"].append(snapshot(5, frames_every=2)["device_traces"][0])
    pickle.dump(s, f, protocol=4)

# Segments appended 2 at a time (Python's pickler appends 1,000 at a time),
# so that the blocks of later batches hold frames already converted: the
# block scan takes them. Only the segments list is batched so (the pure-
# Python pickler's _batch_appends, written out with a batch size of its
# own: a nested list's saving would otherwise change a shared one).
class SmallBatches(pickle._Pickler):
    def _batch_appends(self, items, *rest):
        items = list(items)
        size = 2 if items and isinstance(items[0], dict) and "blocks" in items[0] else 1000
        for i in range(0, len(items), size):
            batch = items[i:i + size]
            if len(batch) > 1:
                self.write(pickle.MARK)
                for x in batch:
                    self.save(x)
                self.write(pickle.APPENDS)
            else:
                self.save(batch[0])
                self.write(pickle.APPEND)

f1 = {"filename": "train.py", "line": 10, "name": "step"}
f2 = {"filename": "model.py", "line": 42, "name": "forward"}
segs = []
for i in range(5):
    fl = [f2, f1] if i % 2 else [f1]
    blocks = [{"address": 4096 * (8 * i + j), "size": 4096, "requested_size": 4000,
               "state": "active_allocated" if j == 0 else "inactive", "frames": list(fl) if j == 0 else []}
              for j in range(2)]
    segs.append({"device": 0, "address": 4096 * 8 * i, "total_size": 8192, "allocated_size": 4096,
                 "active_size": 4096, "requested_size": 4000, "stream": 0, "segment_type": "small",
                 "segment_pool_id": (0, 0), "is_expandable": False,
                 "frames": blocks[0]["frames"] if i % 2 else [f1, f2], "blocks": blocks})
with open("segments_batched_p4.pickle", "wb") as f:
    SmallBatches(f, protocol=4).dump({"segments": segs, "device_traces": [[
        {"action": "alloc", "addr": 4096 * 8, "size": 4096, "stream": 0, "time_us": 1, "frames": segs[1]["blocks"][0]["frames"]}]],
        "allocator_settings": {}})

# PyTorch 2.0's shape: no frames in segments or blocks, a block's stack is
# the frames of the first entry of its "history", and every history entry
# and trace entry carries frame dicts of its own (the record scan reads
# those of a first history entry, Reader.scannedFrame). One frame dict is
# the same object in two blocks' stacks and one frames list is shared
# with a trace entry, so the pickle names them again by memo gets.
def history_snapshot(shared_block_frames=False):
    def fr(name, line):
        return {"filename": "/opt/app/model.py", "name": name, "line": line}
    shared = fr("shared", 7)
    segs = []
    for i in range(4):
        blocks = []
        for j in range(3):
            frames = [fr("forward", 10 * i + j), fr("layer", 3), fr("<module>", 1)]
            if j == 1:
                frames.append(shared)
            hist = [{"addr": 4096 * (8 * i + j), "real_size": 4000 + j, "frames": frames}]
            if j == 2:
                hist.append({"addr": 4096 * (8 * i + j), "real_size": 100, "frames": [fr("later", 99)]})
            b = {"size": 4096, "state": "active_allocated" if j < 2 else "inactive", "history": hist}
            if shared_block_frames and j == 0:
                b["frames"] = [fr("own", 5)]
            blocks.append(b)
        segs.append({"device": 0, "address": 4096 * 8 * i, "total_size": 16384, "allocated_size": 8192,
                     "active_size": 8192, "stream": 0, "segment_type": "small", "blocks": blocks})
    trace = [{"action": "alloc", "addr": 4096 * 8, "size": 4096, "stream": 0,
              "frames": segs[1]["blocks"][0]["history"][0]["frames"]},
             {"action": "alloc", "addr": 4096 * 9, "size": 4096, "stream": 0, "frames": [fr("step", 4), shared]}]
    return {"segments": segs, "device_traces": [trace]}

with open("history_p4.pickle", "wb") as f:
    pickle.dump(history_snapshot(), f, protocol=4)
with open("history_p2.pickle", "wb") as f:
    pickle.dump(history_snapshot(), f, protocol=2)
with open("history_block_frames_p4.pickle", "wb") as f:
    pickle.dump(history_snapshot(shared_block_frames=True), f, protocol=4)
