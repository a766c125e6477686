# s40: an eval loop whose batch size changes every step (a tester found
# passes of different sizes weak in s39). Usage: python record.py OUTDIR
# [CASE...] (one child process per case); context="all", stacks="python".
import os, subprocess, sys

# 24 steps, 24 different batch sizes: every kept output has its own size.
SIZES = [64, 16, 128, 40, 96, 8, 72, 112, 24, 56, 120, 32,
         88, 48, 104, 80, 12, 60, 100, 36, 68, 20, 116, 44]


def run(keep):
    # model.eval() under no_grad; each step makes a batch (LINE vbatch,
    # n x 1024 fp32, freed in the step) and runs Linear-ReLU-Linear on it.
    # With keep, each step's output (LINE vkeep, n x 1024 fp32 = n x 4 KiB)
    # is appended to a list: a LEAK of 24 blocks of 24 different sizes,
    # 1,544 x 4 KiB = 6,324,224 B, one per step. Without keep, the output's
    # sum is read and the output freed: no leak.
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024)).cuda().eval()
    torch.cuda.synchronize()
    start()
    outs, tot = [], 0.0
    with torch.no_grad():
        for n in SIZES:
            x = torch.randn(n, 1024, device="cuda")  # LINE vbatch
            if keep:
                outs.append(model(x))  # LINE vkeep
            else:
                tot += float(model(x).sum())  # LINE vsum
    note("kept", len(outs), "outputs,", sum(o.numel() * 4 for o in outs), "bytes")
    return outs


def case_eval_varbatch_leak():
    return run(True)


def case_eval_varbatch_clean():
    return run(False)


def start():
    torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="python")


def note(*a):
    print("NOTE", CASE, *a, flush=True)


CASES = ["eval_varbatch_leak", "eval_varbatch_clean"]

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] in CASES and os.environ.get("S40_CHILD"):
        import torch, torch.nn as nn
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
    env = dict(os.environ, S40_CHILD="1")
    for c in sys.argv[2:] or CASES:
        subprocess.run([sys.executable, __file__, sys.argv[1], c], check=True, env=env)
