"""Session 46 (h46c): memory timelines of loops that keep most of each step.

Synthetic, in export_memory_timeline's .json layout ([times_us, [[device,
parameter, optimizer_state, input, temporary, activation, gradient,
autograd_detail, unknown], ...]]), one point a millisecond, in the style of
x45b_timelines.py. Categories as PyTorch's memory profiler can class them
(torch/profiler/_memory_profiler.py): gradients, inputs and activations only
where a backward pass ran; a forward-only region's tensors are "unknown"
but for parameters (Python tracer) and temporaries (freed in their op).

train: 10 training steps; 8 layers of 11 MiB weights loaded first; a step
reads a 16 MiB batch, saves 12 MiB per layer, keeps 824 MiB of outputs with
their graph (activation), makes 88 MiB of gradients in backward, frees its
activations, batch and (zero_grad, set_to_none) gradients: it holds 1 GiB
and frees 200 MiB. Adam's state (176 MiB) is made at the first step.

forward: the same model, 10 evaluation batches run with grad enabled, each
keeping 824 MiB (loss summed without .item(), its graph alive) and freeing
its 16 MiB batch and 184 MiB of intermediates: 1 GiB held, 200 MiB freed,
all "unknown".
"""
import json, sys
C = ["parameter", "optimizer_state", "input", "temporary", "activation", "gradient", "autograd_detail", "unknown"]
MB = 1 << 20


class T:
    def __init__(s):
        s.cur = [0] * 8; s.rows = []; s.ts = []; s.t = 1796400000000000

    def a(s, cat, mb):
        s.cur[C.index(cat)] += int(mb * MB); s.t += 1000
        s.ts.append(s.t); s.rows.append([0] + list(s.cur))

    def dump(s, name):
        with open(name, "w") as f:
            json.dump([s.ts, s.rows], f)


def train(name, steps=10):
    t = T()
    for _ in range(8):
        t.a("parameter", 11)
    for st in range(steps):
        t.a("input", 16)
        for _ in range(8):
            t.a("temporary", 22); t.a("temporary", -22)
            t.a("activation", 12)
        t.a("activation", 824)  # outputs kept with their graph
        for _ in range(8):
            t.a("temporary", 11); t.a("temporary", -11)
            t.a("gradient", 11); t.a("activation", -12)
        t.a("input", -16)
        if st == 0:
            t.a("optimizer_state", 176)
        t.a("temporary", 88); t.a("temporary", -88)
        t.a("gradient", -88)
    t.dump(name)


def forward(name, steps=10):
    t = T()
    for _ in range(8):
        t.a("parameter", 11)
    for st in range(steps):
        t.a("unknown", 16)
        for _ in range(8):
            t.a("temporary", 22); t.a("temporary", -22)
            t.a("unknown", 23)  # intermediates, freed at the batch's end
        t.a("unknown", 824)
        t.a("unknown", -16)
        t.a("unknown", -184)
    t.dump(name)


out = sys.argv[1] if len(sys.argv) > 1 else "."
train(f"{out}/h46c_synthetic_train_keeps_80pct_memory_timeline.json")
forward(f"{out}/h46c_synthetic_forward_keeps_80pct_memory_timeline.json")
