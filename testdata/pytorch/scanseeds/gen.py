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
