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

# Edges where the block scan once differed from the general path (a
# tester's reproducers): TestBlockScanEdges reads them both ways.
seg = lambda addr, blocks: {"device": 0, "address": addr, "total_size": 8192, "allocated_size": 0,
                            "active_size": 0, "stream": 0, "blocks": blocks}
# An empty frames list that the next segment has as its "blocks".
e = []
with open("edge_empty_frames_as_blocks.pickle", "wb") as f:
    pickle.dump({"segments": [seg(0, [{"address": 0, "size": 4096, "state": "inactive", "frames": e}]), seg(8192, e)],
                 "device_traces": []}, f, protocol=4)
# A block's frames list that the next segment has as its "device".
fr = {"filename": "a.py", "line": 1, "name": "f"}
fl = [fr]
with open("edge_list_as_device.pickle", "wb") as f:
    pickle.dump({"device_traces": [[{"action": "alloc", "addr": 0, "size": 1, "frames": [fr]}]],
                 "segments": [seg(0, [{"address": 0, "size": 4096, "state": "active_allocated", "frames": fl}]),
                              dict(seg(8192, []), device=fl)]}, f, protocol=4)
# One segment of 10 blocks of 40 frames each: past a limit of 300 values
# held while the segment is read.
F = [{"filename": "a.py", "line": k, "name": "f"} for k in range(5)]
with open("edge_values_held.pickle", "wb") as f:
    pickle.dump({"device_traces": [[{"action": "alloc", "addr": 0, "size": 1, "frames": list(F)}]],
                 "segments": [seg(0, [{"address": 4096 * j, "size": 4096, "state": "active_allocated",
                                       "frames": [F[(j + k) % 5] for k in range(40)]} for j in range(10)])]},
                f, protocol=4)
# Two segments whose blocks' frames lists repeat, the second's being the
# first's again: their stacks are interned when the second is read, so
# the block scan converts them at once; they count against the limit
# until the second segment is appended all the same (past 300 values
# there, not in the first).
blk = lambda addr, j: {"address": addr + 4096 * j, "size": 4096, "state": "active_allocated",
                       "frames": [F[(j + k) % 5] for k in range(40)]}  # list j % 5
with open("edge_values_held_again.pickle", "wb") as f:
    pickle.dump({"device_traces": [[{"action": "alloc", "addr": 0, "size": 1, "frames": list(F)}]],
                 "segments": [dict(seg(0, [blk(0, j) for j in range(5)]), total_size=5 * 4096),
                              dict(seg(1 << 20, [blk(1 << 20, j) for j in range(10)]), total_size=10 * 4096)]},
                f, protocol=4)

# The same segment dict twice, apart ([s0, s1, s0]: Python's pickler
# writes the second as a memo get), and two segments sharing one blocks
# list: a segment is read, and released, when the next begins, so the
# second use is a reference to what was released, refused either way.
s0 = seg(0, [{"address": 0, "size": 4096, "state": "active_allocated", "frames": []}])
with open("edge_segment_twice.pickle", "wb") as f:
    pickle.dump({"segments": [s0, seg(8192, []), s0], "device_traces": []}, f, protocol=4)
shared = [{"address": 0, "size": 4096, "state": "inactive", "frames": []}]
with open("edge_shared_blocks.pickle", "wb") as f:
    pickle.dump({"segments": [seg(0, shared), seg(0, shared)], "device_traces": []}, f, protocol=4)

# A trace entry's frames list memoized at two indices (hand-assembled: no
# pickler writes it), then used again through the first index by later
# entries: the decoder once reused the list's container after converting
# it, as only the second index was known to yield it. pickletools.dis
# shows it whole.
with open("edge_list_memoized_twice.pickle", "wb") as f:
    f.write(bytes.fromhex(
    "80047d94288c0d6465766963655f747261636573945d94285d94287d94288c06616374696f6e"
    "948c05616c6c6f63948c0461646472944b008c0473697a65944b018c066672616d6573945d94"
    "710b287d94288c0866696c656e616d65948c04612e7079948c046c696e65944b018c046e616d"
    "65948c016694757d9428680d8c04622e707994680f4b0268108c01679475658c0178947d9475"
    "7d94286805680668074b0168084b0168095d942868126568157d94757d94286805680668074b"
    "0268084b016809680a68157d94757d94286805680668074b0368084b016809680a7565658c08"
    "7365676d656e7473945d94752e"))

# Two devices' traces that are one list (the second a memo reference to
# the first): refused, saying the list is not its own.
trace = []
with open("edge_shared_trace.pickle", "wb") as f:
    pickle.dump({"segments": [], "device_traces": [trace, trace]}, f, protocol=4)

# Segment dicts of every shape PyTorch writes, for the segments' paths
# (fillList on a segment's frames list, the list cache, the blocks table's
# columns): one block (APPEND) or several (MARK ... APPENDS) or none; a
# frames list of the segment's own, its first block's, an earlier
# segment's block's, an empty one or no key; the pool id a tuple shared
# by most segments (memoized once, then memo gets) or one of its own;
# is_expandable True or False; requested_size absent now and then (a
# null); PyTorch 2.0's blocks with a "history" (the general path's) among
# flat ones; 1,300 segments, past the pickler's batch of 1,000 and, at
# protocol 4, past 64 KiB, so that FRAME opcodes fall inside segments.
# Written at protocol 4 (MEMOIZE) and 2 (BINPUT, LONG_BINPUT).
pool = (0, 0)
states = ["active_allocated", "inactive", "active_pending_free"]
segs = []
base = 139703418552320
for i in range(1300):
    addr = base + i * (2 << 20)
    n = 0 if i % 7 == 0 else 1 if i % 3 == 0 else 2 + i % 4
    blocks = []
    for j in range(n):
        st = states[(i + j) % 3]
        b = {"address": addr + j * 4096, "size": 4096, "requested_size": 4000 + j, "state": st,
             "frames": stack(5 * i + j, 1 + (i + j) % 5) if st != "inactive" else []}
        if (i + j) % 17 == 0:
            # PyTorch 2.0: the allocation in a history entry, its frame
            # dicts its own.
            b = {"address": addr + j * 4096, "size": 4096, "state": st,
                 "history": [{"addr": addr + j * 4096, "real_size": 4000 + j,
                              "frames": [dict(f) for f in stack(5 * i + j, 3)]}]}
        elif (i + j) % 23 == 0:
            b["frames"] = None
        elif (i + j) % 29 == 0:
            del b["requested_size"]
        blocks.append(b)
    sg = {"device": 0, "address": addr, "total_size": 2 << 20, "allocated_size": 4096 * n,
           "active_size": 4096 * n, "requested_size": 4000 * n, "stream": i % 2, "segment_type": "large" if i % 5 else "small",
           "segment_pool_id": pool if i % 11 else (1, i), "is_expandable": i % 4 == 0}
    if i % 13 == 0:
        pass  # no frames key: no stack
    elif i % 2 == 0 and blocks and "frames" in blocks[0]:
        sg["frames"] = blocks[0]["frames"]
    elif i % 19 == 1 and segs and segs[-1]["blocks"] and "frames" in segs[-1]["blocks"][0]:
        sg["frames"] = segs[-1]["blocks"][0]["frames"]  # an earlier segment's block's list
    elif i % 6 == 1:
        sg["frames"] = []
    else:
        # A list of its own, whose frames the segments around it repeat
        # (as allocations from one call site do).
        sg["frames"] = stack(11 * (i // 8) + 3, 9)
    if i % 10 == 3:
        del sg["requested_size"]
    sg["blocks"] = blocks
    segs.append(sg)
for proto in (4, 2):
    with open(f"segments_shapes_p{proto}.pickle", "wb") as f:
        pickle.dump({"segments": segs, "device_traces": [[]], "allocator_settings": {}}, f, protocol=proto)

# A segment's blocks list that the next segment has as its frames (a memo
# get of it): refused either way, with the same message.
bl = [{"address": 0, "size": 4096, "state": "inactive", "frames": []}]
with open("edge_blocks_as_frames.pickle", "wb") as f:
    pickle.dump({"segments": [seg(0, bl), dict(seg(8192, []), frames=bl)], "device_traces": []}, f, protocol=4)
