#!/usr/bin/env python3
"""Cut a real PyTorch memory snapshot's trace as another recording would have it.

Usage: cut_trace.py IN.pickle OUT.pickle [--head FRAC] [--tail FRAC] [--lose-frees FILE:LINE]

--tail FRAC: the snapshot is taken after the first FRAC of each device's trace
  (an OOM or a _dump_snapshot in the middle of the run): the trace stops there
  (after the entry that completes the allocator's call: a segment_alloc's
  alloc, a free_requested's free_completed)
  and the segments and blocks are those of that moment, rebuilt by undoing the
  entries after it (an allocation made later is not there, a block freed later
  is still active_allocated with its allocation's frames, a segment allocated
  later does not exist, one freed later still does).
--head FRAC: the first FRAC of each device's trace is dropped (a ring buffer,
  max_entries, that wrapped: the oldest entries are lost); the segments and
  blocks, the state at the snapshot, are unchanged.
--lose-frees FILE:LINE: the free_requested and free_completed entries whose
  frames hold FILE (its base name) at LINE are dropped, as a recording that lost
  those frees would have them; the blocks are unchanged.
Only the Python standard library is used; the pickle is data only.
"""
import argparse, pickle

ap = argparse.ArgumentParser()
ap.add_argument("src"); ap.add_argument("dst")
ap.add_argument("--head", type=float, default=0.0)
ap.add_argument("--tail", type=float, default=1.0)
ap.add_argument("--lose-frees", default="")
a = ap.parse_args()

with open(a.src, "rb") as f:
    snap = pickle.load(f)


def cut_tail(dev, trace, n):
    """Rebuild device dev's segments as they were after trace[:n]."""
    later = trace[n:]
    segs = {s["address"]: s for s in snap["segments"] if s["device"] == dev}
    live = {}  # address -> (size, frames, stream) of blocks active after trace[:n]
    for s in segs.values():
        for b in s["blocks"]:
            if b["state"].startswith("active"):
                live[b["address"]] = (b["size"], b.get("requested_size", b["size"]), b.get("frames", []))
    for e in reversed(later):
        act, addr = e["action"], e["addr"]
        if act == "alloc":
            live.pop(addr, None)
        elif act == "free_completed":
            live[addr] = (e["size"], e["size"], e.get("frames", []))
        elif act == "segment_alloc":
            segs.pop(addr, None)
        elif act == "segment_free":
            segs[addr] = {"device": dev, "address": addr, "total_size": e["size"], "stream": e.get("stream", 0),
                          "segment_type": "large" if e["size"] > (1 << 20) * 2 else "small",
                          "segment_pool_id": (0, 0), "is_expandable": False, "frames": e.get("frames", [])}
    out = []
    for addr in sorted(segs):
        s = dict(segs[addr])
        end = addr + s["total_size"]
        blocks, at = [], addr
        for b in sorted(x for x in live if addr <= x < end):
            size, req, frames = live[b]
            if b > at:
                blocks.append({"address": at, "size": b - at, "requested_size": 0, "state": "inactive", "frames": []})
            blocks.append({"address": b, "size": size, "requested_size": req, "state": "active_allocated", "frames": frames})
            at = b + size
        if at < end:
            blocks.append({"address": at, "size": end - at, "requested_size": 0, "state": "inactive", "frames": []})
        s["blocks"] = blocks
        used = sum(b["size"] for b in blocks if b["state"] != "inactive")
        s["allocated_size"] = s["active_size"] = used
        s["requested_size"] = sum(b["requested_size"] for b in blocks if b["state"] != "inactive")
        out.append(s)
    return out


segments = [s for s in snap["segments"]]
for dev, trace in enumerate(snap["device_traces"]):
    lo = int(len(trace) * a.head)
    hi = int(len(trace) * a.tail)
    # One call of the allocator writes a segment_alloc and its alloc, or a
    # free_requested and its free_completed: no snapshot falls between them.
    while 0 < hi < len(trace) and (trace[hi - 1]["action"] in ("segment_alloc", "free_requested")
                                   and trace[hi]["action"] in ("alloc", "free_completed")):
        hi += 1
    if hi < len(trace):
        segments = [s for s in segments if s["device"] != dev] + cut_tail(dev, trace, hi)
    snap["device_traces"][dev] = trace[lo:hi]
snap["segments"] = segments
if a.lose_frees:
    file, line = a.lose_frees.rsplit(":", 1)

    def lost(e):
        return e["action"] in ("free_requested", "free_completed") and any(
            f["filename"].endswith("/" + file) and f["line"] == int(line) for f in e.get("frames", []))
    snap["device_traces"] = [[e for e in t if not lost(e)] for t in snap["device_traces"]]
with open(a.dst, "wb") as f:
    pickle.dump(snap, f, protocol=4)
