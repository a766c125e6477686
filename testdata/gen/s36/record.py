# s36: real recordings of loops whose step is hard to see in a snapshot.
# Usage: python record.py OUTDIR   (one child process per case, so that each
# snapshot holds only its case's trace). Run on an NVIDIA H200 with PyTorch.
# Every tensor is a few MiB; every loop runs STEPS passes.
import os, subprocess, sys, time

STEPS = 24


def case_eval_keep_outputs():
    # An eval loop over batches already on the GPU keeping each output: all
    # of a pass's allocations are made inside the model's call. LEAK: 512 KiB
    # (256 x 512 fp32) kept per pass.
    model, data, _ = setup()
    outs = []
    start()
    with torch.no_grad():
        for i in range(STEPS):
            outs.append(model(data[i]))  # LINE eval_keep
    return outs


def case_eval_keep_cpu():
    # The same loop keeping a host copy: the output is freed every pass. No leak.
    model, data, _ = setup()
    outs = []
    start()
    with torch.no_grad():
        for i in range(STEPS):
            outs.append(model(data[i]).detach().cpu())
    return outs


def case_eval_keep_graph():
    # An evaluation without no_grad keeping each loss: every pass's graph,
    # with the activations it saved, stays alive. LEAK: the saved activations.
    model, data, tgt = setup()
    crit = nn.MSELoss()
    losses = []
    start()
    for i in range(STEPS):
        losses.append(crit(model(data[i]), tgt[i]))
    return losses


def case_train_keep_loss():
    # A training loop (data on the GPU) keeping each loss tensor: backward freed
    # the saved activations; the leak is what each loss holds: on PyTorch 2.11
    # a 524,288 B block made inside mse_loss per step (testdata/README.md).
    model, data, tgt = setup()
    model.train()
    crit = nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    losses = []
    start()
    for i in range(STEPS):
        opt.zero_grad()
        out = model(data[i])
        loss = crit(out, tgt[i])
        loss.backward()
        opt.step()
        losses.append(loss)
    return losses


def case_append_tight():
    # A for loop whose only work is the 4 MiB tensor it keeps. LEAK in
    # intent (a list that grows every pass), back to back in time.
    keep = []
    start()
    for _ in range(STEPS):
        keep.append(torch.empty(1 << 20, device="cuda"))
    return keep


def case_listcomp():
    # One statement: a list comprehension of 4 MiB tensors. No leak.
    start()
    keep = [torch.empty(1 << 20, device="cuda") for _ in range(STEPS)]
    return keep


def case_genexpr():
    # One statement through a generator expression (a <genexpr> frame). No leak.
    start()
    keep = list(torch.empty(1 << 20, device="cuda") for _ in range(STEPS))
    return keep


def case_mlp_forward():
    # One training-mode forward of an MLP of 12 identical (Linear, ReLU) pairs
    # ending in a Linear of the same width: its allocations repeat exactly with
    # the period of one pair. No leak: backward would free the saved activations.
    layers = []
    for _ in range(12):
        layers += [nn.Linear(1024, 1024), nn.ReLU()]
    layers.append(nn.Linear(1024, 1024))
    model = nn.Sequential(*layers).cuda()
    x = torch.randn(256, 1024, device="cuda")
    torch.cuda.synchronize()
    start()
    y = model(x)
    return y


def setup():
    model = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 512)).cuda().eval()
    data = torch.randn(STEPS, 256, 1024, device="cuda")
    tgt = torch.randn(STEPS, 256, 512, device="cuda")
    torch.cuda.synchronize()
    return model, data, tgt


def start():
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks=STACKS)


def gaps(path):
    # The times between successive allocations, for the README.
    import pickle
    s = pickle.load(open(path, "rb"))
    t = [e["time_us"] for e in s["device_traces"][0] if e["action"] == "alloc"]
    d = [b - a for a, b in zip(t, t[1:])]
    return sorted(d)


if __name__ == "__main__":
    if len(sys.argv) == 3:  # child: OUTDIR CASE[:stacks]
        import torch, torch.nn as nn
        name, _, STACKS = sys.argv[2].partition(":")
        STACKS = STACKS or "python"
        keep = globals()["case_" + name]()
        torch.cuda.synchronize()
        suffix = "" if STACKS == "python" else "_" + STACKS
        path = os.path.join(sys.argv[1], name + suffix + ".pickle")
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)
        d = gaps(path)
        print(name + suffix, "allocs", len(d) + 1, "alloc gaps us min/med/max", d[0] if d else None,
              d[len(d) // 2] if d else None, d[-1] if d else None, flush=True)
        sys.exit(0)
    import platform, torch
    print("python", platform.python_version(), "torch", torch.__version__, torch.cuda.get_device_name(0), flush=True)
    for c in ["eval_keep_outputs", "eval_keep_outputs:all", "eval_keep_cpu", "eval_keep_graph",
              "train_keep_loss", "append_tight", "listcomp", "genexpr", "mlp_forward"]:
        subprocess.run([sys.executable, __file__, sys.argv[1], c], check=True)
