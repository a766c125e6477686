# Scenarios recorded for gpuleak (branch hv, 2026-12-01): how real runs differ from the fixtures.
# Usage: RECOUT=DIR python3 rec.py CASE   (one case per process; run.sh runs them all)
# Every planted leak is a line marked "# LEAK"; the truth of each case is in its docstring and
# in the notes it prints (kept blocks and their bytes), which run.sh keeps in driver.log.
import os, sys, time, traceback
import torch, torch.nn as nn

OUT = os.environ.get("RECOUT", "/tmp/rec")
os.makedirs(OUT, exist_ok=True)


def start(max_entries=50000, stacks="python", context="all"):
    torch.cuda.memory._record_memory_history(enabled="all", context=context, stacks=stacks,
                                             max_entries=max_entries)


def stop():
    torch.cuda.memory._record_memory_history(enabled=None)


def dump(name):
    torch.cuda.synchronize()
    path = os.path.join(OUT, name)
    torch.cuda.memory._dump_snapshot(path)
    print("wrote", name, os.path.getsize(path), flush=True)


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


def case_grad_accum_leak(leak=True):
    """30 optimizer steps, 4 micro-batches each (loss / 4, backward per micro-batch, one
    AdamW step). Leak: once per optimizer step the last micro-batch's output is kept
    (64 x 512 fp32 = 131,072 B), 30 blocks. Clean: nothing kept."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    start()
    for step in range(30):
        for micro in range(4):
            x = batch()
            out = m(x)
            loss = out.pow(2).mean() / 4
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if leak:
            kept.append(out.detach().clone())  # LEAK grad_accum: 131072 B per optimizer step
    dump("grad_accum_leak.pickle" if leak else "grad_accum_clean.pickle")
    note("kept", len(kept), "blocks of", 131072)
    stop()


def case_grad_accum_clean():
    case_grad_accum_leak(leak=False)


preds = []


def evaluate(m, n=5):
    m.eval()
    with torch.no_grad():
        for i in range(n):
            out = m(batch())
            preds.append(out)  # LEAK eval: 131072 B per eval batch, never cleared
    m.train()


def case_eval_leak():
    """40 training steps (AdamW); after every 10th step an evaluation of 5 batches under
    no_grad whose outputs are appended to a module-level list that is never cleared:
    4 evaluations x 5 = 20 blocks of 131,072 B (2.5 MiB). The training itself is clean."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    start()
    for step in range(40):
        loss = m(batch()).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        if step % 10 == 9:
            evaluate(m)
    dump("eval_leak.pickle")
    note("kept", len(preds), "blocks of", 131072)
    stop()


def case_compile_clean():
    """torch.compile'd MLP (default mode), 30 AdamW steps, history recorded from before the
    first call (compilation included); nothing kept: no leak."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    cm = torch.compile(m)
    start()
    for step in range(30):
        loss = cm(batch()).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("compile_clean.pickle")
    stop()


def case_cudagraph_clean():
    """An MLP's forward captured in a torch.cuda.CUDAGraph (history on before the capture),
    replayed 50 times: each step makes a new input, copies it into the static input,
    replays, and reduces the static output to a float. Clean: the graph's private pool is
    allocated once at capture."""
    m = MLP().cuda().eval()
    static_x = batch()
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(s):
        for _ in range(3):
            m(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    start()
    with torch.no_grad():
        with torch.cuda.graph(g):
            static_y = m(static_x)
        total = 0.0
        for step in range(50):
            x = batch()
            static_x.copy_(x)
            g.replay()
            total += float(static_y.float().sum())
    dump("cudagraph_clean.pickle")
    stop()


def case_expandable_leak():
    """Run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. 40 AdamW steps of an MLP
    (d 1024, h 4096, batch 256); each step keeps its hidden activation (256 x 4096 fp32 =
    4 MiB): 40 blocks, 160 MiB, a leak."""
    m = MLP(1024, 4096).cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    kept = []
    start()
    for step in range(40):
        x = batch(256, 1024)
        h = m.net[1](m.net[0](x))
        loss = m.net[2](h).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        kept.append(h.detach())  # LEAK expandable: 4 MiB per step (the activation itself)
    dump("expandable_leak.pickle")
    note("kept", len(kept), "blocks of", 4 << 20, "conf", os.environ.get("PYTORCH_CUDA_ALLOC_CONF"))
    stop()


def case_val_graph_stacks_all():
    """stacks="all", context="alloc" (frees carry no frames). 10 AdamW training steps, then a
    validation loop of 30 batches WITHOUT torch.no_grad() whose losses are appended to a
    list: each kept loss keeps its autograd graph and the activations saved for backward:
    per batch the input (x, 131,072 B), the first Linear's output (524,288 B, saved by
    GELU), the GELU output (524,288 B, saved by the second Linear) and the output (131,072 B,
    saved by pow): 1,310,720 B per batch, 30 batches, a leak. Iterations: the validation
    batches (30) beside the training steps (10)."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    start(stacks="all", context="alloc")
    for step in range(10):
        loss = m(batch()).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    val_losses = []
    for i in range(30):
        x = batch()  # LEAK val input (saved for backward)
        vloss = m(x).pow(2).mean()  # LEAK val activations via the graph
        val_losses.append(vloss)  # the reference that keeps the graph
    dump("val_graph_stacks_all.pickle")
    note("kept", len(val_losses), "graphs")
    stop()


def case_wrapped_leak():
    """max_entries=2000; 300 SGD steps of a small MLP (d 256, h 1024, batch 32); every step
    keeps a 65,536 B tensor (32 x 512 fp32). The ring buffer wraps: the trace holds only the
    last steps; all 300 blocks are held at the end, most older than the trace."""
    m = MLP(256, 1024).cuda(); opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    kept = []
    start(max_entries=2000)
    for step in range(300):
        out = m(batch(32, 256))
        loss = out.pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        kept.append(torch.cat([out.detach(), out.detach()], 1))  # LEAK wrapped: 65536 B per step
    dump("wrapped_leak.pickle")
    note("kept", len(kept), "blocks of", 65536)
    stop()


def case_two_streams_clean():
    """40 steps: the main stream runs model A; a side stream runs model B on the same input
    (side.wait_stream(main), x.record_stream(side)), the main stream waits for the side
    stream and sums both outputs; each step's tensors are dropped. Clean: no leak."""
    a = MLP().cuda(); b = MLP().cuda()
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()
    start()
    with torch.no_grad():
        acc = torch.zeros((), device="cuda")
        for step in range(40):
            x = batch()
            side.wait_stream(main)
            with torch.cuda.stream(side):
                x.record_stream(side)
                yb = b(x)
            ya = a(x)
            main.wait_stream(side)
            yb.record_stream(main)
            acc = acc + (ya + yb).sum()
            del x, ya, yb
    float(acc)
    dump("two_streams_clean.pickle")
    stop()


def case_amp_clean():
    """40 steps of fp16 autocast training with a GradScaler (AdamW), nothing kept. Clean:
    autocast's weight cast cache is freed at each exit from autocast; optimizer state and the
    scaler's tensors are made once."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    start()
    for step in range(40):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = m(batch()).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt); scaler.update(); opt.zero_grad(set_to_none=True)
    dump("amp_clean.pickle")
    stop()


def case_hook_leak():
    """30 AdamW steps; a tensor hook on the hidden activation appends its gradient to a list
    (grads.append(g)): the gradient was allocated by autograd's engine (no frame of the
    program on its stack), 64 x 2048 fp32 = 524,288 B per step, 30 blocks, a leak."""
    m = MLP().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    grads = []
    start()
    for step in range(30):
        x = batch()
        h = m.net[0](x)
        h.register_hook(lambda g: grads.append(g))  # LEAK hook: the gradient of h, 524288 B
        loss = m.net[2](m.net[1](h)).pow(2).mean()
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    dump("hook_leak.pickle")
    note("kept", len(grads), "blocks of", grads[0].numel() * 4)
    stop()


def case_oom_peak():
    """No leak: an OOM from one step's own demand. Under set_per_process_memory_fraction
    (2 GiB of the device), AdamW training of an MLP (d 1024, h 8192: 64 MiB of weights,
    128 MiB of Adam state) whose batch grows by 2048 rows a step (a batch-size search);
    the step that does not fit raises torch.OutOfMemoryError, caught: the message goes to
    oom_peak_train.log (among the step lines) and oom_peak_error.txt, memory_summary() to
    oom_peak_memory_summary.txt, and the snapshot is dumped right after, in the except
    block (the failed step's activations still held by the traceback)."""
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((2 << 30) / total)
    m = MLP(1024, 8192).cuda(); opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    log = open(os.path.join(OUT, "oom_peak_train.log"), "w")
    start()
    for step in range(100):
        rows = 2048 * (step + 1)
        try:
            x = torch.randn(rows, 1024, device="cuda")
            loss = m(x).pow(2).mean()
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
            print(f"step {step} rows {rows} loss {float(loss):.4f} "
                  f"allocated {torch.cuda.memory_allocated() >> 20} MiB", file=log, flush=True)
        except torch.OutOfMemoryError as e:
            print(f"step {step} rows {rows}: {e}", file=log, flush=True)
            with open(os.path.join(OUT, "oom_peak_error.txt"), "w") as f:
                f.write(str(e) + "\n")
            with open(os.path.join(OUT, "oom_peak_memory_summary.txt"), "w") as f:
                f.write(torch.cuda.memory_summary())
            dump("oom_peak.pickle")
            note("oom at step", step, "rows", rows)
            break
    log.close()
    stop()


if __name__ == "__main__":
    print("torch", torch.__version__, "case", sys.argv[1], flush=True)
    t = time.time()
    globals()["case_" + sys.argv[1]]()
    print("case", sys.argv[1], "took %.1fs" % (time.time() - t), flush=True)
