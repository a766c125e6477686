# hM: real torch.profiler recordings (Kineto Chrome traces with profile_memory=True, and
# export_memory_timeline JSON) of small training/eval loops whose truth is known.
# Usage: python3 record.py OUTDIR [CASE...]   (one child process per case, PAR at a time;
# traces go to OUTDIR/traces/, each case's NOTE lines to OUTDIR/traces/CASE.log).
#
# Model (all cases): Linear(1024,2048) -> ReLU -> Linear(2048,1024), fp32, batch 256:
# an input x is 256x1024 fp32 = 1,048,576 B (1 MiB), the hidden 2 MiB, the output 1 MiB.
# Weights 16 MiB (+ Adam state 32 MiB once the first step ran) are allocated before the
# profiler starts, so no trace names them.
#
# Schedules: "s3" = schedule(wait=1, warmup=1, active=3, repeat=1): 3 ProfilerStep#N spans
# (#2..#4) in the trace; a correct analysis says 3 steps are too few to judge growth.
# "s8" = schedule(wait=1, warmup=1, active=8, repeat=1): 8 spans (#2..#9).
# The loop runs wait+warmup+active+1 steps; on_trace_ready writes the trace
# (prof.export_chrome_trace(NAME.trace.json.gz), or tensorboard_trace_handler for "tb_").
#
# keep modes, what a correct analysis finds over the active steps:
#   clean     nothing kept: no leak; allocations of each step are freed in that step.
#   loss      losses.append(loss) after loss.backward(), no .item(): backward freed the
#             graph's saved tensors, so each step keeps only the 0-dim loss: one 512 B block
#             (the caching allocator's smallest) per step, at aten::mean.
#   valloss   an extra forward without no_grad (validation) whose loss is kept, no backward:
#             the graph keeps its saved tensors: x (1 MiB, aten::randn), the ReLU output
#             (2 MiB, aten::relu / clamp_min), the output (1 MiB, aten::addmm) and the loss
#             (512 B, aten::mean): 4 MiB + 512 B per step.
#   act       acts.append(out.detach()): one 1 MiB block per step at aten::addmm (the 2nd
#             Linear's output), 1,048,576 B per step.
# Option suffixes: "_stack" with_stack=True, "_shapes" record_shapes=True.
# Other cases:
#   eval_s8_keep    under torch.no_grad(): outs.append(model(x)): 1 MiB per step (leak).
#   eval_s8_clean   under torch.no_grad(): total += model(x).sum().item(): clean.
#   compile_s8_clean  torch.compile(model) trained 11 steps (compiled before profiling): clean.
#   cudagraph_s8_clean  whole train step (fwd+bwd+SGD) captured in a CUDA graph, replayed;
#                   input copied from a pre-made batch: no CUDA allocation during the trace
#                   (maybe none at all): clean, nothing to judge growth from.
#   cudagraph_s8_randn_clean  the same, but each step makes its batch with torch.randn
#                   (1 MiB allocated and freed per step): clean.
#   timeline_keep / timeline_clean  no schedule, 6 steps with prof.step(), record_shapes,
#                   with_stack, profile_memory; keep = act (1 MiB per step, 6 steps);
#                   export_chrome_trace + export_memory_timeline(.json and .raw.json.gz).
import os, subprocess, sys, time, json

B, D, H = 256, 1024, 2048
PAR = 8


def note(*a):
    print("NOTE", CASE, *a, flush=True)


def build(opt="adam"):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, D)).cuda()
    o = torch.optim.Adam(m.parameters(), lr=1e-4) if opt == "adam" else torch.optim.SGD(m.parameters(), lr=1e-4)
    return m, o


def sched_of(name):
    active = 3 if "_s3" in name else 8
    return schedule(wait=1, warmup=1, active=active, repeat=1), 1 + 1 + active + 1


def handler_of(outdir, name):
    if name.startswith("tb_"):
        return tensorboard_trace_handler(outdir, worker_name=name, use_gzip=True)

    def h(p):
        p.export_chrome_trace(os.path.join(outdir, name + ".trace.json.gz"))
        note("trace written")
    return h


def mem_line(step):
    torch.cuda.synchronize()
    note("step", step, "memory_allocated", torch.cuda.memory_allocated(), "reserved", torch.cuda.memory_reserved())


def train_case(outdir, name):
    keep = "clean"
    for k in ("valloss", "loss", "act"):
        if "_" + k in name:
            keep = k
            break
    m, o = build()
    # first optimizer step before profiling: Adam's state exists before the trace
    x = torch.randn(B, D, device="cuda"); m(x).pow(2).mean().backward(); o.step(); o.zero_grad(set_to_none=True)
    del x
    sch, steps = sched_of(name)
    kept = []
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                 on_trace_ready=handler_of(outdir, name), profile_memory=True,
                 with_stack="_stack" in name, record_shapes="_shapes" in name) as prof:
        for step in range(steps):
            x = torch.randn(B, D, device="cuda")
            out = m(x)
            loss = out.pow(2).mean()
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)
            if keep == "loss":
                kept.append(loss)  # KEEP loss: 512 B block per step
            elif keep == "act":
                kept.append(out.detach())  # KEEP act: 1 MiB per step
            elif keep == "valloss":
                xv = torch.randn(B, D, device="cuda")
                kept.append(m(xv).pow(2).mean())  # KEEP valloss: graph, ~4 MiB + 512 B per step
            del x, out, loss
            mem_line(step)
            prof.step()
    note("kept", len(kept), "steps", steps)


def eval_case(outdir, name):
    m, _ = build()
    m.eval()
    sch, steps = sched_of(name)
    outs, total = [], 0.0
    mem_line("before")
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                                  on_trace_ready=handler_of(outdir, name), profile_memory=True) as prof:
        for step in range(steps):
            x = torch.randn(B, D, device="cuda")
            y = m(x)
            if "keep" in name:
                outs.append(y)  # KEEP: 1 MiB per step
            else:
                total += y.sum().item()
            del x, y
            mem_line(step)
            prof.step()
    note("kept", len(outs), "steps", steps)


def compile_case(outdir, name):
    m, o = build()
    cm = torch.compile(m)
    for _ in range(2):  # compile (fwd and bwd) before profiling
        x = torch.randn(B, D, device="cuda"); cm(x).pow(2).mean().backward(); o.step(); o.zero_grad(set_to_none=True)
    del x
    sch, steps = sched_of(name)
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                 on_trace_ready=handler_of(outdir, name), profile_memory=True) as prof:
        for step in range(steps):
            x = torch.randn(B, D, device="cuda")
            loss = cm(x).pow(2).mean()
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)
            del x, loss
            mem_line(step)
            prof.step()


def cudagraph_case(outdir, name):
    m, o = build("sgd")
    static_x = torch.randn(B, D, device="cuda")
    batches = [torch.randn(B, D, device="cuda") for _ in range(4)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            o.zero_grad(set_to_none=True)
            m(static_x).pow(2).mean().backward()
            o.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    o.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = m(static_x).pow(2).mean()
        static_loss.backward()
        o.step()
    sch, steps = sched_of(name)
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                 on_trace_ready=handler_of(outdir, name), profile_memory=True) as prof:
        for step in range(steps):
            if "randn" in name:
                x = torch.randn(B, D, device="cuda")
                static_x.copy_(x)
                del x
            else:
                static_x.copy_(batches[step % 4])
            g.replay()
            mem_line(step)
            prof.step()


def timeline_case(outdir, name):
    m, o = build()
    x = torch.randn(B, D, device="cuda"); m(x).pow(2).mean().backward(); o.step(); o.zero_grad(set_to_none=True)
    del x
    kept = []
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
                 record_shapes=True, with_stack=True) as prof:
        for step in range(6):
            x = torch.randn(B, D, device="cuda")
            out = m(x)
            loss = out.pow(2).mean()
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)
            if "keep" in name:
                kept.append(out.detach())  # KEEP act: 1 MiB per step
            del x, out, loss
            mem_line(step)
            prof.step()
    prof.export_chrome_trace(os.path.join(outdir, name + ".trace.json.gz"))
    for suf in (".timeline.json", ".timeline.raw.json.gz"):
        try:
            prof.export_memory_timeline(os.path.join(outdir, name + suf), device="cuda:0")
            note("timeline written", suf)
        except Exception as e:
            note("timeline failed", suf, repr(e))


def accum_case(outdir, name):
    # Gradient accumulation: 4 micro-batches per optimizer step, prof.step()
    # once per optimizer step (as the PyTorch docs place it). "act" keeps each
    # micro-batch's out.detach(): 4 MiB per ProfilerStep (4 blocks of 1 MiB at
    # aten::linear); with_stack=True, so one stack marks each micro-batch.
    m, o = build()
    x = torch.randn(B, D, device="cuda"); m(x).pow(2).mean().backward(); o.step(); o.zero_grad(set_to_none=True)
    del x
    sch, steps = sched_of(name)
    kept = []
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                 on_trace_ready=handler_of(outdir, name), profile_memory=True, with_stack=True) as prof:
        for step in range(steps):
            for micro in range(4):
                x = torch.randn(B, D, device="cuda")
                out = m(x)
                (out.pow(2).mean() / 4).backward()
                if "_act" in name:
                    kept.append(out.detach())  # KEEP: 1 MiB per micro-batch
                del x, out
            o.step()
            o.zero_grad(set_to_none=True)
            mem_line(step)
            prof.step()
    note("kept", len(kept), "steps", steps)


def pattern_case(outdir, name):
    # s8 training loops whose keeping is not one block a step:
    #   every2: keeps out.detach() on even steps only (0, 2, 4, ...): a leak,
    #           1 MiB every second step.
    #   deque3: keeps the last 3 outputs (collections.deque(maxlen=3)): bounded,
    #           3 MiB held, not a leak.
    #   cpu:    keeps out.detach().cpu() (host memory): no GPU memory kept.
    #   amp:    bf16 autocast, nothing kept: clean (autocast's weight-cast cache
    #           is freed when the autocast region exits).
    import collections
    m, o = build()
    x = torch.randn(B, D, device="cuda"); m(x).pow(2).mean().backward(); o.step(); o.zero_grad(set_to_none=True)
    del x
    sch, steps = sched_of(name)
    kept = collections.deque(maxlen=3) if "deque3" in name else []
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                 on_trace_ready=handler_of(outdir, name), profile_memory=True,
                 with_stack="_stack" in name) as prof:
        for step in range(steps):
            x = torch.randn(B, D, device="cuda")
            if "amp" in name:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = m(x)
                    loss = out.float().pow(2).mean()
            else:
                out = m(x)
                loss = out.pow(2).mean()
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)
            if "every2" in name and step % 2 == 0:
                kept.append(out.detach())  # KEEP every second step
            elif "deque3" in name:
                kept.append(out.detach())  # KEEP last 3 only
            elif "cpu" in name:
                kept.append(out.detach().cpu())  # KEEP on the host
            del x, out, loss
            mem_line(step)
            prof.step()
    note("kept", len(kept), "steps", steps)


def cycles_case(outdir, name):
    # schedule(wait=1, warmup=1, active=3, repeat=2): two cycles, on_trace_ready
    # writes a trace after each (NAME.c1/.c2). "acc" passes acc_events=True, so
    # the second trace holds both cycles' 6 steps (#2..#4, #7..#9). Keeps
    # out.detach() every step (1 MiB a step, also in the steps not profiled).
    m, o = build()
    x = torch.randn(B, D, device="cuda"); m(x).pow(2).mean().backward(); o.step(); o.zero_grad(set_to_none=True)
    del x
    n = [0]

    def h(p):
        n[0] += 1
        p.export_chrome_trace(os.path.join(outdir, "%s.c%d.trace.json.gz" % (name, n[0])))
        note("trace written", n[0])
    kw = {"acc_events": True} if "acc" in name else {}
    kept = []
    mem_line("before")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=2),
                 on_trace_ready=h, profile_memory=True, **kw) as prof:
        for step in range(11):
            x = torch.randn(B, D, device="cuda")
            out = m(x)
            out.pow(2).mean().backward()
            o.step()
            o.zero_grad(set_to_none=True)
            kept.append(out.detach())  # KEEP: 1 MiB per step
            del x, out
            mem_line(step)
            prof.step()
    note("kept", len(kept))


def compilero_case(outdir, name):
    # torch.compile(mode="reduce-overhead") (CUDA graph trees), inference under
    # no_grad, compiled and warmed before profiling. "keep" keeps
    # y.clone() each step (1 MiB at aten::clone); "clean" only .item().
    m, _ = build()
    m.eval()
    cm = torch.compile(m, mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(B, D, device="cuda"); cm(x).sum().item()
    sch, steps = sched_of(name)
    kept, total = [], 0.0
    mem_line("before")
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sch,
                                  on_trace_ready=handler_of(outdir, name), profile_memory=True) as prof:
        for step in range(steps):
            x = torch.randn(B, D, device="cuda")
            y = cm(x)
            if "keep" in name:
                kept.append(y.clone())  # KEEP: 1 MiB per step
            else:
                total += y.sum().item()
            del x, y
            mem_line(step)
            prof.step()
    note("kept", len(kept))


CASES = ["train_s3_clean", "train_s3_loss", "train_s3_act", "train_s3_valloss",
         "train_s3_act_stack", "train_s3_act_shapes", "train_s3_clean_stack",
         "train_s8_clean", "train_s8_loss", "train_s8_act", "train_s8_valloss",
         "train_s8_act_stack", "train_s8_act_shapes", "train_s8_clean_stack",
         "train_s8_valloss_stack", "train_s8_clean_shapes", "tb_train_s8_act",
         "eval_s8_keep", "eval_s8_clean", "eval_s3_keep",
         "compile_s8_clean", "cudagraph_s8_clean", "cudagraph_s8_randn_clean",
         "timeline_keep", "timeline_clean"]
# second run (hM): what the first one raised
CASES2 = ["accum_s8_act", "accum_s8_clean", "accum_s3_act",
          "pattern_s8_every2", "pattern_s8_deque3", "pattern_s8_cpu", "pattern_s8_amp_stack",
          "pattern_s8_every2_stack",
          "cycles_rep2", "cycles_rep2_acc", "compilero_s8_keep", "compilero_s8_clean"]


def run_one(outdir, name):
    global torch, nn, profile, ProfilerActivity, schedule, tensorboard_trace_handler, CASE
    CASE = name
    import torch, torch.nn as nn
    from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
    note("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
    kind = name.split("_")[0]
    if kind == "tb":
        kind = "train"
    {"train": train_case, "eval": eval_case, "compile": compile_case,
     "cudagraph": cudagraph_case, "timeline": timeline_case, "accum": accum_case,
     "pattern": pattern_case, "cycles": cycles_case, "compilero": compilero_case}[kind](outdir, name)
    note("done")


def main():
    out = sys.argv[1]
    tdir = os.path.join(out, "traces")
    os.makedirs(tdir, exist_ok=True)
    if len(sys.argv) > 3 and sys.argv[2] == "--one":
        run_one(tdir, sys.argv[3])
        return
    cases = sys.argv[2:] or CASES
    if cases == ["second"]:
        cases = CASES2
    deadline = time.time() + float(os.environ.get("HM_BUDGET", "200"))
    procs = {}
    pending = list(cases)
    # compile first: it takes longest
    pending.sort(key=lambda c: 0 if c.startswith("compile") else 1)
    while pending or procs:
        while pending and len(procs) < PAR:
            c = pending.pop(0)
            log = open(os.path.join(tdir, c + ".log"), "w")
            procs[c] = (subprocess.Popen([sys.executable, __file__, out, "--one", c], stdout=log, stderr=subprocess.STDOUT), log, time.time())
        for c, (p, log, t0) in list(procs.items()):
            if p.poll() is not None:
                log.close(); del procs[c]
                print("case", c, "rc", p.returncode, "s", round(time.time() - t0, 1), flush=True)
            elif time.time() > deadline:
                p.kill(); p.wait(); log.close(); del procs[c]
                print("case", c, "KILLED at deadline", flush=True)
        if time.time() > deadline:
            for c in pending:
                print("case", c, "NOT RUN (deadline)", flush=True)
            pending = []
        time.sleep(0.2)


if __name__ == "__main__":
    main()
