# Snapshot variants the shared fixtures lack, each from a small real workload:
# C++ stacks, a wrapped ring buffer, no trace, state-only, alloc-only context,
# protocol 5 + gzip, CUDA-graph private pools, the public list-of-segments API,
# a side stream, and memory_stats/summary. Writes into $FIXOUT.
import gzip, json, os, pickle, sys, time, traceback
import torch, torch.nn as nn

OUT = os.environ.get("FIXOUT", "/tmp/fix")
os.makedirs(OUT, exist_ok=True)

def stop():
    torch.cuda.memory._record_memory_history(enabled=None)

def dump(name, protocol=None, gz=False, snap=None):
    s = torch.cuda.memory._snapshot() if snap is None else snap
    path = os.path.join(OUT, name)
    opener = gzip.open if gz else open
    with opener(path, "wb") as f:
        pickle.dump(s, f, protocol=protocol if protocol is not None else pickle.DEFAULT_PROTOCOL)
    print("wrote", path, os.path.getsize(path), flush=True)

def loop(steps, keep_every, d=512, sleep=0.01, stream=None):
    model = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    kept = []
    for step in range(steps):
        x = torch.randn(128, d, device="cuda")
        y = model(x)
        y.square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % keep_every == 0:
            kept.append(y.detach())   # the planted leak
        time.sleep(sleep)
    return model, kept

def variant(name, fn):
    print("==", name, flush=True)
    try:
        fn()
    except Exception:
        traceback.print_exc()
    finally:
        stop()
        torch.cuda.empty_cache()

def stacks_all():
    torch.cuda.memory._record_memory_history(context="all", stacks="all", max_entries=100000)
    m, k = loop(30, 5)
    dump("stacks_all.pickle")

def wrapped():
    torch.cuda.memory._record_memory_history(max_entries=400)
    m, k = loop(80, 4)
    dump("wrapped_ring.pickle")

def no_trace():
    a = torch.randn(1024, 1024, device="cuda")
    b = [torch.empty(3 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]
    dump("no_trace.pickle")
    with open(os.path.join(OUT, "memory_snapshot_list.pickle"), "wb") as f:
        pickle.dump(torch.cuda.memory_snapshot(), f)   # public API: a bare list of segments

def state_only():
    torch.cuda.memory._record_memory_history(enabled="state")
    m, k = loop(20, 5)
    dump("state_only.pickle")

def alloc_ctx():
    torch.cuda.memory._record_memory_history(context="alloc", max_entries=100000)
    m, k = loop(30, 5)
    dump("context_alloc.pickle")

def proto5_gz():
    torch.cuda.memory._record_memory_history(max_entries=100000)
    m, k = loop(30, 3)
    dump("protocol5.pickle.gz", protocol=5, gz=True)

def graphs():
    torch.cuda.memory._record_memory_history(max_entries=100000)
    model = nn.Linear(256, 256).cuda()
    static_x = torch.randn(64, 256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = model(static_x).relu()
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    dump("cuda_graph_pool.pickle")

def side_stream():
    torch.cuda.memory._record_memory_history(max_entries=100000)
    s = torch.cuda.Stream()
    kept = []
    for i in range(20):
        with torch.cuda.stream(s):
            t = torch.randn(256, 1024, device="cuda")
        t.record_stream(torch.cuda.current_stream())
        u = t * 2
        if i % 4 == 0:
            kept.append(u)
        del t
        time.sleep(0.01)
    torch.cuda.synchronize()
    dump("side_stream.pickle")

def stats():
    torch.cuda.memory._record_memory_history(max_entries=100000)
    m, k = loop(25, 5)
    with open(os.path.join(OUT, "memory_stats_2.json"), "w") as f:
        json.dump(torch.cuda.memory_stats(), f, indent=1)
    with open(os.path.join(OUT, "memory_summary_2.txt"), "w") as f:
        f.write(torch.cuda.memory_summary())

if __name__ == "__main__":
    print(torch.__version__, sys.version, flush=True)
    for n, f in [("stacks_all", stacks_all), ("wrapped", wrapped), ("no_trace", no_trace),
                 ("state_only", state_only), ("alloc_ctx", alloc_ctx), ("proto5_gz", proto5_gz),
                 ("graphs", graphs), ("side_stream", side_stream), ("stats", stats)]:
        variant(n, f)
