# s40: record.py's eval loop over batches already on the GPU: every
# allocation of a pass is made inside the model's call, and the passes
# differ in size. Usage: python record_gpu.py OUTDIR [CASE...]
import os, subprocess, sys

SIZES = [64, 16, 128, 40, 96, 8, 72, 112, 24, 56, 120, 32,
         88, 48, 104, 80, 12, 60, 100, 36, 68, 20, 116, 44]


def run(keep):
    # The 24 batches (n x 1024 fp32) made before recording starts. With
    # keep, each output (LINE gkeep, n x 4 KiB) is appended to a list: a
    # LEAK of 24 blocks of 24 sizes, 6,324,224 B. Without, each output
    # replaces the one before (LINE glast): no leak. The function then
    # returns and frees its locals outside the model's calls.
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024)).cuda().eval()
    data = [torch.randn(n, 1024, device="cuda") for n in SIZES]
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="python")
    outs, last = [], None
    with torch.no_grad():
        for x in data:
            if keep:
                outs.append(model(x))  # LINE gkeep
            else:
                last = model(x)  # LINE glast
    print("NOTE", CASE, "kept", len(outs), sum(o.numel() * 4 for o in outs), flush=True)
    return outs


CASES = {"eval_gpu_varbatch_leak": True, "eval_gpu_varbatch_clean": False}

if __name__ == "__main__":
    if len(sys.argv) == 3 and os.environ.get("S40_CHILD"):
        import torch, torch.nn as nn
        torch.manual_seed(0)
        CASE = sys.argv[2]
        keep = run(CASES[CASE])
        torch.cuda.synchronize()
        path = os.path.join(sys.argv[1], CASE + ".pickle")
        torch.cuda.memory._dump_snapshot(path)
        print("wrote", path, os.path.getsize(path), flush=True)
        sys.exit(0)
    env = dict(os.environ, S40_CHILD="1")
    for c in sys.argv[2:] or CASES:
        subprocess.run([sys.executable, __file__, sys.argv[1], c], check=True, env=env)
