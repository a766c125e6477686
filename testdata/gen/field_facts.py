#!/usr/bin/env python3
"""Facts about the public snapshots in ../shared/field/snapshots, read with Python's pickle,
for cmd/field_test.go. Usage (from the repository root):
    python3 testdata/gen/field_facts.py ../shared/field/snapshots > testdata/field_facts.json
Per file and device: the blocks in state active_allocated and active_pending_free (count,
bytes), the segments (count, total_size), the trace entries, the allocations among them and
whether they carry time_us; the trace's peak of allocated bytes where it stands above the end
(peak_bytes, reached at entry peak_seq; 0 and -1 otherwise; see peak below). A device is listed when it has segments or a trace entry other
than 'snapshot' (_dump_snapshot records one on the current device). These snapshots were
committed by other people; none was made with a planted leak."""
import json, os, pickle, sys

def block(size):
    """The caching allocator's block for a request: 512 bytes at least, a multiple of 512."""
    return max(512, (size + 511) // 512 * 512)

def peak(trace):
    """Walk one device's trace: an allocation adds its block, and ends at its free_requested
    (or at a free_completed with no free_requested before it); a free of an address the trace
    never saw allocated removes a block older than the trace; an address allocated again before
    its free removes the old block. Returns the highest running sum less the sum at the end
    (what stood above the end, 0 when nothing did) and the entry that reached it."""
    live, pending = {}, set()
    cur = top = 0
    at = -1
    for i, e in enumerate(trace):
        a, addr, size = e.get('action'), e.get('addr'), e.get('size', 0)
        if a == 'alloc':
            if addr in live:
                cur -= block(live.pop(addr))
            live[addr] = size
            cur += block(size)
            if cur > top:
                top, at = cur, i
        elif a == 'free_requested':
            pending.add(addr)
            cur -= block(live.pop(addr) if addr in live else size)
        elif a == 'free_completed':
            if addr in pending:
                pending.discard(addr)
                continue
            cur -= block(live.pop(addr) if addr in live else size)
    if top <= cur:
        return 0, -1
    return top - cur, at

def facts(path):
    with open(path, 'rb') as f:
        s = pickle.load(f)
    segs = s if isinstance(s, list) else s.get('segments', [])
    traces = [] if isinstance(s, list) else s.get('device_traces', [])
    devs = {}
    def dev(d):
        return devs.setdefault(d, dict(active_bytes=0, active_blocks=0, pending_bytes=0, pending_blocks=0,
                                       segments=0, reserved_bytes=0, trace_entries=0, allocs=0, timed=False,
                                       peak_bytes=0, peak_seq=-1))
    for seg in segs:
        d = dev(seg['device'])
        d['segments'] += 1
        d['reserved_bytes'] += seg['total_size']
        for b in seg.get('blocks', []):
            if b['state'] == 'active_allocated':
                d['active_bytes'] += b['size']; d['active_blocks'] += 1
            elif b['state'] == 'active_pending_free':
                d['pending_bytes'] += b['size']; d['pending_blocks'] += 1
    for i, tr in enumerate(traces):
        if not tr or (i not in devs and all(e.get('action') == 'snapshot' for e in tr)):
            continue
        d = dev(i)
        d['trace_entries'] = len(tr)
        d['allocs'] = sum(1 for e in tr if e.get('action') == 'alloc')
        d['timed'] = any('time_us' in e for e in tr)
        above, d['peak_seq'] = peak(tr)
        if above > 0:
            d['peak_bytes'] = above  # the end's active bytes are added below
    for d in devs.values():
        if d['peak_bytes'] > 0:
            d['peak_bytes'] += d['active_bytes']
    return {str(k): v for k, v in sorted(devs.items())}

root = sys.argv[1]
out = {name: facts(os.path.join(root, name)) for name in sorted(os.listdir(root))}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
