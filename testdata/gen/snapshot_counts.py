#!/usr/bin/env python3
"""Count what each snapshot holds, with CPython's own pickle (an independent
reader), for parse/pytorch's tests: segments, blocks, trace entries per
device, actions, distinct frames and stacks, bytes in active blocks.
Usage: snapshot_counts.py FILE... > pytorch/counts.json"""
import collections, gzip, json, os, pickle, sys

def frames_of(d):
    fr = d.get("frames")
    if fr is None and "history" in d and d["history"]:
        fr = d["history"][0].get("frames")
    return tuple((f.get("filename", ""), f.get("line", 0), f.get("name", "")) for f in (fr or []))

out = {}
for path in sys.argv[1:]:
    raw = (gzip.open if path.endswith(".gz") else open)(path, "rb").read()
    s = pickle.loads(raw)
    segs = s if isinstance(s, list) else s.get("segments", [])
    traces = [] if isinstance(s, list) else s.get("device_traces", [])
    frames, stacks = set(), set()
    def note(d):
        st = frames_of(d)
        if st:
            stacks.add(st)
            frames.update(st)
    blocks = active = active_bytes = 0
    for sg in segs:
        note(sg)
        for b in sg.get("blocks", []):
            blocks += 1
            note(b)
            if b.get("state") == "active_allocated":
                active += 1
                active_bytes += b["size"]
    actions = collections.Counter()
    for t in traces:
        for e in t:
            actions[e["action"]] += 1
            note(e)
    out[os.path.basename(path)] = {
        "segments": len(segs), "blocks": blocks, "active_blocks": active, "active_bytes": active_bytes,
        "reserved_bytes": sum(sg["total_size"] for sg in segs),
        "trace_entries": [len(t) for t in traces], "actions": dict(sorted(actions.items())),
        "frames": len(frames), "stacks": len(stacks), "protocol": raw[1] if raw[0] == 0x80 else 0,
    }
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
