# Scenarios recorded for gpuleak (branch hv2, 2026-12-01): runs unlike the fixtures and unlike hv's.
# Usage: RECOUT=DIR python3 rec.py CASE   (one case per process; run.sh runs them all)
# Every planted leak is a line marked "# LEAK"; the truth of each case is in its docstring and
# in the NOTE lines it prints (kept blocks and their bytes), which run.sh keeps in driver.log.
import gc, os, sys, time
import torch, torch.nn as nn

OUT = os.environ.get("RECOUT", "/tmp/rec")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)


def start(max_entries=50000):
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python",
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


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=4, n_head=4, n_embd=256, vocab_size=1000, n_positions=1024)
    return GPT2LMHeadModel(cfg).cuda().eval()


def case_generate_clean():
    """A tiny GPT-2 (4 layers, n_embd 256, built from a config) answers 6 prompts with
    generate(max_new_tokens=12, greedy): the KV cache grows token by token within a call
    and is freed when the call returns; each answer goes to the CPU. Clean: no leak."""
    m = gpt2()
    answers = []
    start()
    with torch.no_grad():
        for i in range(6):
            prompt = torch.randint(0, 1000, (1, 32), device="cuda")
            out = m.generate(prompt, max_new_tokens=12, do_sample=False, pad_token_id=0)
            answers.append(out.cpu())
    dump("generate_clean.pickle")
    note("answers", len(answers))


def case_chat_kv_leak():
    """A chat loop of 24 turns over the same GPT-2: each turn feeds 32 new tokens with the
    past_key_values of all earlier turns and keeps the returned cache (never trimmed): the
    cache grows by 4 layers x 2 (K, V) x 32 tokens x 256 x 4 B = 262,144 B per turn, each
    layer's K and V reallocated bigger (torch.cat) every turn: a leak of the conversation's
    history, 24 x 32 = 768 tokens, 6 MiB at the end (8 blocks of 786,432 B)."""
    m = gpt2()
    past = None
    start()
    with torch.no_grad():
        for turn in range(24):
            ids = torch.randint(0, 1000, (1, 32), device="cuda")
            out = m(ids, past_key_values=past, use_cache=True)
            past = out.past_key_values  # LEAK chat: the cache of every turn kept
            reply = int(out.logits[0, -1].argmax())
    dump("chat_kv_leak.pickle")
    note("turns", 24, "cache tokens", 24 * 32, "bytes", 24 * 262144, "reply", reply)


def train_sched(keep_graph):
    m = MLP(1024, 4096).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=80)
    logs = []
    start()
    for step in range(80):
        x = batch(128, 1024)
        loss = m(x).pow(2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step(); sched.step(); opt.zero_grad(set_to_none=True)
        if keep_graph:
            logs.append(loss)  # LEAK logs: the loss tensor (512 B block) kept each step
        else:
            logs.append(loss.item())
    return logs


def case_sched_clip_clean():
    """80 AdamW steps of an MLP (d 1024, h 4096, batch 128) with a OneCycleLR scheduler and
    clip_grad_norm_; the loss is logged with loss.item(). Clean: no leak."""
    logs = train_sched(False)
    dump("sched_clip_clean.pickle")
    note("logged", len(logs), "floats")


def case_loss_list_leak():
    """The same 80 steps logging logs.append(loss): the loss tensor (a 0-d fp32, one 512 B
    block allocated by .mean() at the loss line) is kept each step; its graph's saved tensors
    were freed by backward(). A small leak: 80 blocks of 512 B (40 KiB)."""
    logs = train_sched(True)
    dump("loss_list_leak.pickle")
    note("kept", len(logs), "blocks of", 512)


def reload_loop(free_old):
    m = MLP(1024, 4096).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    old = []
    start()
    for step in range(60):
        if step % 10 == 0 and step > 0:
            if free_old:
                del m, opt
                gc.collect(); torch.cuda.empty_cache()
            else:
                old.append((m, opt))  # LEAK reload: the old model and its AdamW state kept
            m = MLP(1024, 4096).cuda()
            opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        loss = m(batch(128, 1024)).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    return old


def case_reload_leak():
    """60 AdamW steps of an MLP (d 1024, h 4096: 4 parameters, 33,574,912 B, Adam state
    twice that); every 10 steps (steps 10..50) a fresh model and optimizer are made and the
    old pair appended to a list: 5 old models (5 x 4 parameters) and their Adam states
    (5 x 8 tensors) kept: a leak of whole models, ~96 MiB every 10 steps, 5 times. The
    model made before recording and its state made at step 0 are retained."""
    old = reload_loop(False)
    dump("reload_leak.pickle")
    note("kept models", len(old), "param bytes each", 33574912)


def case_reload_clean():
    """The same loop deleting the old model and optimizer (del, gc.collect, empty_cache)
    before making the new one. Clean: no leak (the live model is the last one made)."""
    reload_loop(True)
    dump("reload_clean.pickle")


def case_pinned_loader_clean():
    """A DataLoader (pin_memory=True, batch 256 of a 10,240 x 1024 CPU TensorDataset) feeding
    40 AdamW steps with x.cuda(non_blocking=True). Pinned buffers are host memory (not in the
    snapshot). Clean: no leak."""
    from torch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(torch.randn(10240, 1024), torch.randn(10240, 1024))
    dl = DataLoader(ds, batch_size=256, shuffle=True, pin_memory=True, num_workers=0)
    m = MLP(1024, 4096).cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    start()
    for x, y in dl:
        x = x.cuda(non_blocking=True); y = y.cuda(non_blocking=True)
        loss = (m(x) - y).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("pinned_loader_clean.pickle")


def case_checkpoint_clean():
    """4 MLP blocks (d 512, h 2048) run under torch.utils.checkpoint (use_reentrant=False)
    for 40 AdamW steps, batch 256: activations recomputed in backward. Clean: no leak."""
    from torch.utils.checkpoint import checkpoint
    blocks = nn.ModuleList([MLP() for _ in range(4)]).cuda()
    opt = torch.optim.AdamW(blocks.parameters(), lr=1e-4)
    start()
    for step in range(40):
        h = batch(256)
        for b in blocks:
            h = checkpoint(b, h, use_reentrant=False)
        loss = h.pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("checkpoint_clean.pickle")


def case_late_leak():
    """3 epochs of 20 AdamW steps (60 in all); from the third epoch on (steps 40..59) a bug
    keeps each step's output (64 x 512 fp32, 131,072 B): a leak that starts late, 20 blocks
    (2.5 MiB), growing in the last 20 of 60 steps."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    start()
    for epoch in range(3):
        for i in range(20):
            out = m(batch())
            loss = out.pow(2).mean()
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
            if epoch >= 2:
                kept.append(out.detach())  # LEAK late: 131072 B per step in epoch 3
    dump("late_leak.pickle")
    note("kept", len(kept), "blocks of", 131072)


def case_capped_cache():
    """60 AdamW steps; inputs come in 15 distinct lengths (step % 15); a per-length
    memo of a positional table (length x 512 fp32, 64..120 rows) is filled on first sight
    and reused after: it grows in steps 0..14 and never again: 15 blocks retained, bounded,
    NOT a leak at the end (it grew in the first quarter of the run only)."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    memo = {}
    start()
    for step in range(60):
        n = 64 + 4 * (step % 15)
        if n not in memo:
            memo[n] = torch.randn(n, 512, device="cuda")  # cache, capped by its keys
        loss = (m(batch(n)) + memo[n]).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("capped_cache.pickle")
    note("memo", len(memo), "bytes", sum(t.numel() * 4 for t in memo.values()))


def case_slow_leak():
    """200 steps, each allocating 1 GiB of activations (a 2^28-float buffer, freed each step)
    and keeping one 4 KiB tensor (1024 fp32) in a list: a slow leak, 200 x 4,096 B = 800 KiB
    beside 1 GiB of steady per-step memory."""
    kept = []
    w = torch.randn(1024, device="cuda")
    start()
    for step in range(200):
        act = torch.randn(1 << 28, device="cuda")
        s = act.view(-1, 1024)[:4].sum(0) * w
        kept.append(s.clone())  # LEAK slow: 4096 B per step
        del act, s
    dump("slow_leak.pickle")
    note("kept", len(kept), "blocks of", 4096)


def gan(leak):
    G = MLP(128, 1024).cuda(); D = nn.Sequential(nn.Linear(128, 512), nn.LeakyReLU(0.2), nn.Linear(512, 1)).cuda()
    og = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    od = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    samples = []
    start()
    for step in range(50):
        real = torch.randn(256, 128, device="cuda")
        z = torch.randn(256, 128, device="cuda")
        fake = G(z)
        d_loss = bce(D(real), torch.ones(256, 1, device="cuda")) + bce(D(fake.detach()), torch.zeros(256, 1, device="cuda"))
        od.zero_grad(set_to_none=True); d_loss.backward(); od.step()
        g_loss = bce(D(fake), torch.ones(256, 1, device="cuda"))
        og.zero_grad(set_to_none=True); g_loss.backward(); og.step()
        if leak:
            samples.append(fake.detach())  # LEAK gan: the generator's batch, 131072 B per step
    return samples


def case_gan_clean():
    """50 GAN steps: a discriminator step (real and detached fake) then a generator step,
    two Adam optimizers, batch 256, latent 128. Clean: no leak."""
    gan(False)
    dump("gan_clean.pickle")


def case_gan_leak():
    """The same 50 GAN steps keeping each step's generated batch (256 x 128 fp32 = 131,072 B)
    in a list: a leak in the generator's half, 50 blocks (6.25 MiB)."""
    s = gan(True)
    dump("gan_leak.pickle")
    note("kept", len(s), "blocks of", 131072)


def case_frag_oom():
    """A fragmentation OOM under set_per_process_memory_fraction (1 GiB of the device): a
    loop allocates tensors of odd sizes (1.1 to 9.7 MiB, seeded) until about 880 MiB are
    held, then frees every other one (about 440 MiB free but in holes of < 10 MiB inside
    segments still in use), then asks for 300 MiB: torch.OutOfMemoryError with most of the
    reserved memory unallocated. Caught: the message goes to frag_oom_train.log (among step
    lines) and frag_oom_error.txt, memory_summary() to frag_oom_memory_summary.txt, and the
    snapshot is dumped in the except block. Truth: fragmentation, not a leak, not demand."""
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((1 << 30) / total)
    g = torch.Generator().manual_seed(1)
    log = open(os.path.join(OUT, "frag_oom_train.log"), "w")
    held = []
    start()
    try:
        while sum(t.numel() * 4 for t in held) < 880 << 20:
            mib = 1.1 + 8.6 * float(torch.rand(1, generator=g))
            held.append(torch.empty(int(mib * (1 << 18)), device="cuda"))
        print(f"filled {len(held)} tensors, allocated {torch.cuda.memory_allocated() >> 20} MiB", file=log, flush=True)
        held = held[::2]
        print(f"kept {len(held)} tensors, allocated {torch.cuda.memory_allocated() >> 20} MiB, "
              f"reserved {torch.cuda.memory_reserved() >> 20} MiB", file=log, flush=True)
        big = torch.empty(300 << 18, device="cuda")
        print("no OOM", file=log, flush=True)
    except torch.OutOfMemoryError as e:
        print(f"step big: {e}", file=log, flush=True)
        with open(os.path.join(OUT, "frag_oom_error.txt"), "w") as f:
            f.write(str(e) + "\n")
        with open(os.path.join(OUT, "frag_oom_memory_summary.txt"), "w") as f:
            f.write(torch.cuda.memory_summary())
        dump("frag_oom.pickle")
        note("oom: allocated", torch.cuda.memory_allocated(), "reserved", torch.cuda.memory_reserved())
    log.close()


if __name__ == "__main__":
    print("torch", torch.__version__, "case", sys.argv[1], flush=True)
    t = time.time()
    globals()["case_" + sys.argv[1]]()
    print("case", sys.argv[1], "took %.1fs" % (time.time() - t), flush=True)
