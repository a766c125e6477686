# Snapshots of PyTorch training kinds no earlier recording covers (tester s36b, 2026-12-02).
# Usage: RECOUT=DIR python3 rec.py CASE   (one case per process; run.sh runs them all)
# Every planted leak is a line marked "# LEAK"; each case's truth is in its docstring and in
# the NOTE lines it prints (kept blocks, their bytes), which run.sh keeps in driver.log.
import os, sys, random, collections
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

OUT = os.environ.get("RECOUT", "/tmp/rec")
os.makedirs(OUT, exist_ok=True)


def start(max_entries=30000, stacks="python", context="all"):
    torch.cuda.memory._record_memory_history(enabled="all", context=context, stacks=stacks,
                                             max_entries=max_entries)


def dump(name):
    torch.cuda.synchronize()
    path = os.path.join(OUT, name)
    torch.cuda.memory._dump_snapshot(path)
    print("wrote", name, os.path.getsize(path), flush=True)
    torch.cuda.memory._record_memory_history(enabled=None)


def note(*a):
    print("NOTE", *a, flush=True)


class MLP(nn.Module):
    def __init__(s, d=512, h=2048):
        super().__init__()
        s.net = nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d))

    def forward(s, x):
        return s.net(x)


def batch(n=64, d=512):
    return torch.randn(n, d, device="cuda")


def train_step(m, opt, x):
    out = m(x)
    loss = out.pow(2).mean()
    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    return out


def case_wrap(leak):
    """History on before the model is built; max_entries=1500 while 400 AdamW steps run,
    so the ring buffer wraps: the trace starts mid-run, and the weights, Adam state and
    (leak) most kept blocks were allocated before it. Leak: each step keeps
    torch.cat([out, out], 1).detach() (64 x 1024 fp32 = 262,144 B): 400 blocks, 100 MiB.
    Clean: nothing kept."""
    start(max_entries=1500)
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    for step in range(400):
        out = train_step(m, opt, batch())
        if leak:
            kept.append(torch.cat([out, out], 1).detach())  # LEAK wrap: 262,144 B per step
    dump("wrap_%s.pickle" % ("leak" if leak else "clean"))
    note("kept", len(kept), "blocks of", 262144)


def case_wrap_sparse_leak():
    """max_entries=2500, 600 AdamW steps; every 20th step keeps out.detach() (131,072 B):
    30 blocks kept, the trace (its last ~70 steps) sees about 3 of them made. A leak."""
    start(max_entries=2500)
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    for step in range(600):
        out = train_step(m, opt, batch())
        if step % 20 == 19:
            kept.append(out.detach())  # LEAK wrap_sparse: 131,072 B every 20th step
    dump("wrap_sparse_leak.pickle")
    note("kept", len(kept), "blocks of", 131072)


def case_ga(leak):
    """25 optimizer steps of 8 micro-batches (200 micro-batches), cross-entropy / 8,
    backward per micro-batch, SGD with momentum. Leak: losses.append(loss) after backward
    keeps each micro-batch's 0-d loss (512 B block), 200 blocks. Clean: loss.item()."""
    m = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
    losses = []; total = 0.0
    start()
    for step in range(25):
        for micro in range(8):
            x = batch(); y = torch.randint(0, 10, (64,), device="cuda")
            loss = F.cross_entropy(m(x), y) / 8
            loss.backward()
            if leak:
                losses.append(loss)  # LEAK ga: the 0-d loss, 512 B per micro-batch
            else:
                total += loss.item()
        opt.step(); opt.zero_grad(set_to_none=True)
    dump("ga_%s.pickle" % ("leak" if leak else "clean"))
    note("kept", len(losses), "losses")


def case_amp_tx_clean():
    """40 steps of a 2-layer TransformerEncoder (d 256, 4 heads, batch 32 x 64 tokens)
    under fp16 autocast with torch.amp.GradScaler, unscale_ + clip_grad_norm_, AdamW.
    Nothing kept: no leak."""
    layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
    m = nn.TransformerEncoder(layer, 2).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    start()
    for step in range(40):
        x = torch.randn(32, 64, 256, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = m(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        scaler.step(opt); scaler.update(); opt.zero_grad(set_to_none=True)
    dump("amp_tx_clean.pickle")


class Blocks(nn.Module):
    def __init__(s, reentrant):
        super().__init__()
        s.blocks = nn.ModuleList([MLP(512, 2048) for _ in range(4)])
        s.reentrant = reentrant

    def forward(s, x):
        for b in s.blocks:
            x = checkpoint(b, x, use_reentrant=s.reentrant)
        return x


def case_ckpt(reentrant):
    """40 AdamW steps of 4 MLP blocks each under torch.utils.checkpoint (use_reentrant as
    named; reentrant recomputes the forward inside backward, on autograd's thread, through
    the program's forward frames). Nothing kept: no leak."""
    m = Blocks(reentrant).cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    start()
    for step in range(40):
        x = batch(128).requires_grad_(reentrant)
        loss = m(x).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("ckpt_%s_clean.pickle" % ("reentrant" if reentrant else "nonreentrant"))


def case_streams_clean():
    """40 steps, two models trained at once on two side streams (each its own AdamW), with
    the next batch copied from pinned host memory on a third stream (non_blocking, the
    copy's block recorded on the streams that use it). Nothing kept: no leak."""
    a = MLP().cuda(); b = MLP().cuda()
    oa = torch.optim.AdamW(a.parameters(), lr=1e-4); ob = torch.optim.AdamW(b.parameters(), lr=1e-4)
    sa, sb, sc = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    main = torch.cuda.current_stream()
    host = [torch.randn(64, 512).pin_memory() for _ in range(4)]
    start()
    with torch.cuda.stream(sc):
        nxt = host[0].to("cuda", non_blocking=True)
    for step in range(40):
        main.wait_stream(sc); x = nxt
        with torch.cuda.stream(sc):
            nxt = host[(step + 1) % 4].to("cuda", non_blocking=True)
        for s, m, o in ((sa, a, oa), (sb, b, ob)):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                x.record_stream(s)
                train_step(m, o, x)
        main.wait_stream(sa); main.wait_stream(sb)
        del x
    torch.cuda.synchronize()
    dump("streams_clean.pickle")


def case_compile_ro_clean():
    """torch.compile(mode="reduce-overhead") (CUDA graph trees, a private pool) of an MLP,
    30 AdamW steps, history on before compiling. Nothing kept: no leak."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    cm = torch.compile(m, mode="reduce-overhead")
    start(max_entries=60000)
    for step in range(30):
        torch.compiler.cudagraph_mark_step_begin()
        loss = cm(batch()).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("compile_ro_clean.pickle")


def case_graph_step_clean():
    """A whole training step (forward, backward, Adam with capturable=True) captured in a
    torch.cuda.CUDAGraph with a private pool (graph_pool_handle), after 3 warm-up steps on
    a side stream; replayed 60 times with new data copied into the static input. History on
    before the warm-up. Nothing kept: no leak."""
    m = MLP().cuda(); opt = torch.optim.Adam(m.parameters(), lr=1e-4, capturable=True)
    sx = batch()
    start()
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            m(sx).pow(2).mean().backward(); opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph(); pool = torch.cuda.graph_pool_handle()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g, pool=pool):
        sloss = m(sx).pow(2).mean()
        sloss.backward(); opt.step()
    tot = 0.0
    for step in range(60):
        sx.copy_(batch()); g.replay(); tot += float(sloss)
    dump("graph_step_clean.pickle")


class LRU:
    def __init__(s, cap):
        s.cap, s.d = cap, collections.OrderedDict()

    def get(s, key, make):
        if key in s.d:
            s.d.move_to_end(key); return s.d[key]
        v = make(key)
        s.d[key] = v
        if s.cap and len(s.d) > s.cap:
            s.d.popitem(last=False)
        return v


def case_cache(kind):
    """100 AdamW steps; each step looks up a feature tensor (256 x 512 fp32 = 524,288 B,
    made at the `feat` line) for a key drawn at random (seeded). lru_early: an LRU of 8
    entries over 24 keys: full by about step 10, then evicts; bounded at 8 blocks (4 MiB),
    retained, not a leak. lru_late: an LRU of 48 entries over 400 keys: full at step ~50,
    then a miss and an eviction almost every step; bounded at 48 blocks (24 MiB) from
    halfway, retained, not a leak. dict_leak: a plain dict keyed by the step (always a miss,
    never evicted): 100 blocks, 50 MiB, a leak."""
    rnd = random.Random(1)
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    cap, nkeys = {"lru_early": (8, 24), "lru_late": (48, 400), "dict_leak": (0, None)}[kind]
    cache = LRU(cap)

    def feat(key):
        return torch.full((256, 512), float(key), device="cuda")  # the cached block

    start()
    misses = 0
    for step in range(100):
        key = step if nkeys is None else rnd.randrange(nkeys)
        n0 = len(cache.d)
        f = cache.get(key, feat)
        x = batch() + f[:64]
        train_step(m, opt, x)
        del x, f
    dump("cache_%s.pickle" % kind)
    note("cache holds", len(cache.d), "blocks of", 524288, "cap", cap)


def case_ctx_alloc(leak):
    """context="alloc" (frees carry no frames), stacks="python". 50 AdamW steps. Leak: each
    step keeps out.detach() (131,072 B), 50 blocks. Clean: nothing kept."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    start(context="alloc")
    for step in range(50):
        out = train_step(m, opt, batch())
        if leak:
            kept.append(out.detach())  # LEAK ctx_alloc: 131,072 B per step
    dump("ctx_alloc_%s.pickle" % ("leak" if leak else "clean"))
    note("kept", len(kept), "blocks of", 131072)


def case_stacks_all_amp_leak():
    """stacks="all" (C++ frames too), context="all"; 30 bf16-autocast AdamW steps; each step
    keeps the bf16 output (64 x 512 x 2 = 65,536 B) in a list: 30 blocks, a leak."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    start(stacks="all", max_entries=8000)
    for step in range(30):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = m(batch())
            loss = out.float().pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        kept.append(out.detach())  # LEAK stacks_all_amp: 65,536 B bf16 per step
    dump("stacks_all_amp_leak.pickle")
    note("kept", len(kept), "blocks of", kept[0].numel() * 2)


CASES = {
    "wrap_leak": lambda: case_wrap(True), "wrap_clean": lambda: case_wrap(False),
    "wrap_sparse_leak": case_wrap_sparse_leak,
    "ga_leak": lambda: case_ga(True), "ga_clean": lambda: case_ga(False),
    "amp_tx_clean": case_amp_tx_clean,
    "ckpt_reentrant_clean": lambda: case_ckpt(True), "ckpt_nonreentrant_clean": lambda: case_ckpt(False),
    "streams_clean": case_streams_clean, "compile_ro_clean": case_compile_ro_clean,
    "graph_step_clean": case_graph_step_clean,
    "cache_lru_early": lambda: case_cache("lru_early"), "cache_lru_late": lambda: case_cache("lru_late"),
    "cache_dict_leak": lambda: case_cache("dict_leak"),
    "ctx_alloc_leak": lambda: case_ctx_alloc(True), "ctx_alloc_clean": lambda: case_ctx_alloc(False),
    "stacks_all_amp_leak": case_stacks_all_amp_leak,
}

if __name__ == "__main__":
    torch.manual_seed(0)
    CASES[sys.argv[1]]()
