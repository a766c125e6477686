#!/usr/bin/env python3
"""Session 46 (h46c): a snapshot whose live memory lies partly in private pools.

Hand-made (standard library only), in the layout of
torch.cuda.memory._snapshot() (segments with blocks, device_traces), as
testdata/gen/synthetic.py writes it. No real snapshot recorded with CUDA graphs
was found in the stores searched (issues: "memory snapshot segment_pool_id CUDA
graph private pool"), so the ids follow PyTorch's numbering: (N, 0) is the pool
CUDAGraph::capture_begin makes for itself when given none, (0, N) one from
torch.cuda.graph_pool_handle() or a torch.cuda.MemPool.

The program: weights (64 MiB, default pool) made before the loop; a graph
captured in the first of 8 iterations, its static output (32 MiB) allocated in
the capture's own pool (1, 0), a 256 MiB segment; a decode buffer (16 MiB) in
a shared pool (0, 1), a 64 MiB segment; every iteration allocates and frees a
4 MiB batch in the default pool.
Usage: python3 testdata/gen/h46c_cuda_graph_pool.py   (writes testdata/pytorch/)"""
import os, pickle
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pytorch') + '/'
MiB = 1 << 20
T0 = 1_796_500_000_000_000


def fr(file, line, name):
    return [{'name': name, 'filename': '/home/u/' + file, 'line': line}]


ev = []
t = T0


def add(action, addr, size, frames):
    global t
    t += 1000
    ev.append({'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': t, 'frames': frames})


DEF, GRAPH, SHARED = 0x7f0000000000, 0x7f1000000000, 0x7f2000000000
W = fr('model.py', 12, '__init__')
OUT = fr('serve.py', 40, 'capture_graph')
BUF = fr('serve.py', 55, 'decode_buffers')
BATCH = fr('serve.py', 30, 'step')
add('segment_alloc', DEF, 128 * MiB, W)
add('alloc', DEF, 64 * MiB, W)
for it in range(8):
    add('alloc', DEF + 64 * MiB, 4 * MiB, BATCH)
    if it == 0:
        add('segment_alloc', GRAPH, 256 * MiB, OUT)
        add('alloc', GRAPH, 32 * MiB, OUT)
        add('segment_alloc', SHARED, 64 * MiB, BUF)
        add('alloc', SHARED, 16 * MiB, BUF)
    add('free_requested', DEF + 64 * MiB, 4 * MiB, BATCH)
    add('free_completed', DEF + 64 * MiB, 4 * MiB, BATCH)


def blk(addr, size, state, frames):
    return {'address': addr, 'size': size, 'requested_size': size, 'state': state, 'frames': frames}


def seg(addr, total, pool, blocks):
    used = sum(b['size'] for b in blocks if b['state'] == 'active_allocated')
    return {'device': 0, 'address': addr, 'total_size': total, 'allocated_size': used, 'active_size': used,
            'requested_size': used, 'stream': 0, 'segment_type': 'large', 'segment_pool_id': pool,
            'is_expandable': False, 'frames': blocks[0]['frames'], 'blocks': blocks}


segments = [
    seg(DEF, 128 * MiB, (0, 0), [blk(DEF, 64 * MiB, 'active_allocated', W), blk(DEF + 64 * MiB, 64 * MiB, 'inactive', [])]),
    seg(GRAPH, 256 * MiB, (1, 0), [blk(GRAPH, 32 * MiB, 'active_allocated', OUT), blk(GRAPH + 32 * MiB, 224 * MiB, 'inactive', [])]),
    seg(SHARED, 64 * MiB, (0, 1), [blk(SHARED, 16 * MiB, 'active_allocated', BUF), blk(SHARED + 16 * MiB, 48 * MiB, 'inactive', [])]),
]
with open(D + 'h46c_cuda_graph_private_pools.pickle', 'wb') as f:
    pickle.dump({'segments': segments, 'device_traces': [ev]}, f)
