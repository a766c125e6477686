# s38: real recordings of three shapes a tester found weak in s37: an LRU cache
# of GPU tensors that fills late and then rarely misses, a CUDA-graph replay
# loop followed by a long teardown, and blocks allocated during CUDA graph
# capture (the trace gives them no Python frames).
# Usage: python record.py OUTDIR [CASE...]   (one child process per case).
# Every case records context="all", stacks="python"; the truths are in the
# comments and in testdata/README.md.
import os, subprocess, sys

STEPS = 30


def case_lru_late_rare():
    # 30 steps; each makes a batch (LINE batch, 256 KiB, freed in the step)
    # and reads one feature block (LINE feat, 1 MiB) through an LRU of 16.
    # KEYS: steps 0-18 miss except 4, 9, 14 (16 misses: full in step 18);
    # steps 19-29 hit except 22 and 26, each a miss that evicts the least
    # recently used entry (one 1 MiB block freed, one made). The cache's live
    # memory rises in 16 steps, the last in step 18, and stays at 16 MiB for
    # the last 11 steps while it kept allocating: RETAINED (bounded, 16 blocks,
    # 2 of them made after the fill), not a leak and not a leak that stopped.
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024)).cuda()
    torch.cuda.synchronize()
    keys = [0, 1, 2, 3, 0, 4, 5, 6, 7, 1, 8, 9, 10, 11, 2, 12, 13, 14, 15, 3,
            4, 5, 100, 6, 7, 8, 101, 9, 10, 11]
    cache = collections.OrderedDict()
    start()
    tot = 0.0
    with torch.no_grad():
        for step in range(STEPS):
            x = torch.randn(64, 1024, device="cuda")  # LINE batch
            k = keys[step]
            if k in cache:
                cache.move_to_end(k)
            else:
                if len(cache) == 16:
                    cache.popitem(last=False)
                cache[k] = feature(k)
            tot += float(model(x + cache[k][:64]).sum())
    note("cache holds", len(cache), "blocks")
    return cache


def feature(k):
    return torch.randn(256, 1024, device="cuda")  # LINE feat


def graph_model():
    layers = []
    for _ in range(16):
        layers += [nn.Linear(512, 512), nn.ReLU()]
    model = nn.Sequential(*layers).cuda()
    sx = torch.randn(256, 512, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            model(sx)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    return model, sx


def graph_teardown(leak):
    # A 16-layer MLP's inference captured in a torch.cuda.CUDAGraph (history on
    # before the capture: its 32 allocations of 512 KiB, made in the graph's
    # private pool, carry no frames), replayed 30 times, each with a new batch
    # copied in (LINE gbatch, 512 KiB, freed in the step) and the output's sum
    # read. With leak, each replay keeps sy.clone() (LINE gkeep, 512 KiB): a
    # LEAK of 30 blocks, 15 MiB, one per replay. Then a teardown longer than
    # the loop in allocator entries: the graph deleted, the state dict cloned
    # (32 blocks in one statement), the model deleted, empty_cache, 64
    # buffers made in one statement and freed, the clones concatenated (gcat,
    # 16 x (512 x 512 + 512) fp32 = 16,809,984 B) and freed. The replay loop is
    # the run's repeating step (30 passes); no other leak (gcat is made once).
    model, sx = graph_model()
    start()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        sy = model(sx)
    kept = []
    tot = 0.0
    for step in range(STEPS):
        sx.copy_(torch.randn(256, 512, device="cuda"))  # LINE gbatch
        g.replay()
        tot += float(sy.sum())
        if leak:
            kept.append(sy.clone())  # LINE gkeep
    del g
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    del model
    torch.cuda.empty_cache()
    parts = [torch.empty(n * 1024, device="cuda") for n in range(1, 65)]
    del parts
    final = torch.cat([t.flatten() for t in sd.values()])  # LINE gcat
    del sd, final
    note("kept", len(kept), "blocks")
    return kept, sy


def case_graph_teardown_leak():
    return graph_teardown(True)


def case_graph_teardown_clean():
    # The same without the clone: no leak.
    return graph_teardown(False)


def case_graph_recapture_leak():
    # Every step copies a new batch in (LINE rbatch, 1 MiB, freed), captures
    # a new CUDA graph of relu(sx @ W) in its own private pool and keeps it
    # with its output (a list of graphs: LEAK). The capture's two 1 MiB
    # allocations carry no frames; the matmul's output is freed inside the
    # capture, the relu's (1 MiB) is kept: 30 blocks, 30 MiB allocated, each
    # graph's pool a segment of its own. Where they were allocated in Python
    # the snapshot cannot say.
    W = torch.randn(1024, 1024, device="cuda")
    sx = torch.randn(256, 1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.relu(sx @ W)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    start()
    graphs = []
    tot = 0.0
    for step in range(STEPS):
        sx.copy_(torch.randn(256, 1024, device="cuda"))  # LINE rbatch
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = torch.relu(sx @ W)
        g.replay()
        tot += float(y.sum())
        graphs.append((g, y))
    note("kept", len(graphs), "graphs")
    return graphs


def start():
    torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="python")


def note(*a):
    print("NOTE", CASE, *a, flush=True)


CASES = ["lru_late_rare", "graph_teardown_leak", "graph_teardown_clean", "graph_recapture_leak"]

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] in CASES and os.environ.get("S38_CHILD"):
        import collections, torch, torch.nn as nn
        torch.manual_seed(0)
        CASE = sys.argv[2]
        keep = globals()["case_" + CASE]()
        torch.cuda.synchronize()
        path = os.path.join(sys.argv[1], CASE + ".pickle")
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)
        print("wrote", path, os.path.getsize(path), flush=True)
        sys.exit(0)
    import platform, torch
    print("python", platform.python_version(), "torch", torch.__version__, torch.cuda.get_device_name(0), flush=True)
    env = dict(os.environ, S38_CHILD="1")
    for c in sys.argv[2:] or CASES:
        subprocess.run([sys.executable, __file__, sys.argv[1], c], check=True, env=env)
