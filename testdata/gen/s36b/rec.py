# s36b recorder (truths: testdata/README.md, section s36b). RECOUT=DIR python3 rec.py CASE
import os, sys, random, collections
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
OUT = os.environ.get('RECOUT', '/tmp/rec')
os.makedirs(OUT, exist_ok=True)

def start(max_entries=30000, stacks='python', context='all'):
    torch.cuda.memory._record_memory_history(enabled='all', context=context, stacks=stacks, max_entries=max_entries)

def dump(name):
    torch.cuda.synchronize()
    path = os.path.join(OUT, name)
    torch.cuda.memory._dump_snapshot(path)
    print('wrote', name, os.path.getsize(path), flush=True)
    torch.cuda.memory._record_memory_history(enabled=None)

def note(*a):
    print('NOTE', *a, flush=True)

class MLP(nn.Module):

    def __init__(s, d=512, h=2048):
        super().__init__()
        s.net = nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d))

    def forward(s, x):
        return s.net(x)

def batch(n=64, d=512):
    return torch.randn(n, d, device='cuda')

def train_step(m, opt, x):
    out = m(x)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return out

def case_wrap(leak):
    start(max_entries=1500)
    m = MLP().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    kept = []
    for step in range(400):
        out = train_step(m, opt, batch())
        if leak:
            kept.append(torch.cat([out, out], 1).detach())
    dump('wrap_%s.pickle' % ('leak' if leak else 'clean'))
    note('kept', len(kept), 'blocks of', 262144)

def case_wrap_sparse_leak():
    start(max_entries=2500)
    m = MLP().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    kept = []
    for step in range(600):
        out = train_step(m, opt, batch())
        if step % 20 == 19:
            kept.append(out.detach())
    dump('wrap_sparse_leak.pickle')
    note('kept', len(kept), 'blocks of', 131072)

def case_ga(leak):
    m = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.001, momentum=0.9)
    losses = []
    total = 0.0
    start()
    for step in range(25):
        for micro in range(8):
            x = batch()
            y = torch.randint(0, 10, (64,), device='cuda')
            loss = F.cross_entropy(m(x), y) / 8
            loss.backward()
            if leak:
                losses.append(loss)
            else:
                total += loss.item()
        opt.step()
        opt.zero_grad(set_to_none=True)
    dump('ga_%s.pickle' % ('leak' if leak else 'clean'))
    note('kept', len(losses), 'losses')

def case_amp_tx_clean():
    layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
    m = nn.TransformerEncoder(layer, 2).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    scaler = torch.amp.GradScaler('cuda')
    start()
    for step in range(40):
        x = torch.randn(32, 64, 256, device='cuda')
        with torch.autocast('cuda', dtype=torch.float16):
            loss = m(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    dump('amp_tx_clean.pickle')

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
    m = Blocks(reentrant).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    start()
    for step in range(40):
        x = batch(128).requires_grad_(reentrant)
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    dump('ckpt_%s_clean.pickle' % ('reentrant' if reentrant else 'nonreentrant'))

def case_streams_clean():
    a = MLP().cuda()
    b = MLP().cuda()
    oa = torch.optim.AdamW(a.parameters(), lr=0.0001)
    ob = torch.optim.AdamW(b.parameters(), lr=0.0001)
    sa, sb, sc = (torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream())
    main = torch.cuda.current_stream()
    host = [torch.randn(64, 512).pin_memory() for _ in range(4)]
    start()
    with torch.cuda.stream(sc):
        nxt = host[0].to('cuda', non_blocking=True)
    for step in range(40):
        main.wait_stream(sc)
        x = nxt
        with torch.cuda.stream(sc):
            nxt = host[(step + 1) % 4].to('cuda', non_blocking=True)
        for s, m, o in ((sa, a, oa), (sb, b, ob)):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                x.record_stream(s)
                train_step(m, o, x)
        main.wait_stream(sa)
        main.wait_stream(sb)
        del x
    torch.cuda.synchronize()
    dump('streams_clean.pickle')

def case_compile_ro_clean():
    m = MLP().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    cm = torch.compile(m, mode='reduce-overhead')
    start(max_entries=60000)
    for step in range(30):
        torch.compiler.cudagraph_mark_step_begin()
        loss = cm(batch()).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    dump('compile_ro_clean.pickle')

def case_graph_step_clean():
    m = MLP().cuda()
    opt = torch.optim.Adam(m.parameters(), lr=0.0001, capturable=True)
    sx = batch()
    start()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            m(sx).pow(2).mean().backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    pool = torch.cuda.graph_pool_handle()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g, pool=pool):
        sloss = m(sx).pow(2).mean()
        sloss.backward()
        opt.step()
    tot = 0.0
    for step in range(60):
        sx.copy_(batch())
        g.replay()
        tot += float(sloss)
    dump('graph_step_clean.pickle')

class LRU:

    def __init__(s, cap):
        s.cap, s.d = (cap, collections.OrderedDict())

    def get(s, key, make):
        if key in s.d:
            s.d.move_to_end(key)
            return s.d[key]
        v = make(key)
        s.d[key] = v
        if s.cap and len(s.d) > s.cap:
            s.d.popitem(last=False)
        return v

def case_cache(kind):
    rnd = random.Random(1)
    m = MLP().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    cap, nkeys = {'lru_early': (8, 24), 'lru_late': (48, 400), 'dict_leak': (0, None)}[kind]
    cache = LRU(cap)

    def feat(key):
        return torch.full((256, 512), float(key), device='cuda')
    start()
    for step in range(100):
        key = step if nkeys is None else rnd.randrange(nkeys)
        f = cache.get(key, feat)
        x = batch() + f[:64]
        train_step(m, opt, x)
        del x, f
    dump('cache_%s.pickle' % kind)
    note('cache holds', len(cache.d), 'blocks of', 524288, 'cap', cap)

def case_ctx_alloc(leak):
    m = MLP().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    kept = []
    start(context='alloc')
    for step in range(50):
        out = train_step(m, opt, batch())
        if leak:
            kept.append(out.detach())
    dump('ctx_alloc_%s.pickle' % ('leak' if leak else 'clean'))
    note('kept', len(kept), 'blocks of', 131072)

def case_stacks_all_amp_leak():
    m = MLP().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=0.0001)
    kept = []
    start(stacks='all', max_entries=8000)
    for step in range(30):
        with torch.autocast('cuda', dtype=torch.bfloat16):
            out = m(batch())
            loss = out.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        kept.append(out.detach())
    dump('stacks_all_amp_leak.pickle')
    note('kept', len(kept), 'blocks of', kept[0].numel() * 2)
CASES = {'wrap_leak': lambda: case_wrap(True), 'wrap_clean': lambda: case_wrap(False), 'wrap_sparse_leak': case_wrap_sparse_leak, 'ga_leak': lambda: case_ga(True), 'ga_clean': lambda: case_ga(False), 'amp_tx_clean': case_amp_tx_clean, 'ckpt_reentrant_clean': lambda: case_ckpt(True), 'ckpt_nonreentrant_clean': lambda: case_ckpt(False), 'streams_clean': case_streams_clean, 'compile_ro_clean': case_compile_ro_clean, 'graph_step_clean': case_graph_step_clean, 'cache_lru_early': lambda: case_cache('lru_early'), 'cache_lru_late': lambda: case_cache('lru_late'), 'cache_dict_leak': lambda: case_cache('dict_leak'), 'ctx_alloc_leak': lambda: case_ctx_alloc(True), 'ctx_alloc_clean': lambda: case_ctx_alloc(False), 'stacks_all_amp_leak': case_stacks_all_amp_leak}
if __name__ == '__main__':
    torch.manual_seed(0)
    CASES[sys.argv[1]]()
