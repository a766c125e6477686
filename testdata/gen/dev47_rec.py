# Real recordings for session 47's tests: memory timelines of training loops
# that keep their gradients (zero_grad(set_to_none=False)), and the messages
# real host-memory and device-memory allocation failures print (PyTorch, CuPy,
# a CUDA C program's check macro), each run in its own process.
import os, sys, subprocess, textwrap
OUT = os.environ["OUT"]

def run(name, code, lang="py"):
    if lang == "py":
        cmd = [sys.executable, "-c", textwrap.dedent(code)]
    else:
        cmd = code
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    with open(os.path.join(OUT, name), "w") as f:
        f.write(p.stdout + p.stderr)
    print(name, "rc", p.returncode, len(p.stdout + p.stderr), flush=True)

# Host memory: PyTorch's CPU allocator.
run("torch_cpu_alloc_fail.txt", """
    import torch
    x = torch.empty(2**46, dtype=torch.uint8)
""")
# Host memory: pinned (page-locked) host memory through PyTorch.
run("torch_pinned_alloc_fail.txt", """
    import torch
    print("torch", torch.__version__, flush=True)
    x = torch.empty(2**43, dtype=torch.uint8, pin_memory=True)
""")
# Device memory: CuPy's pool.
run("cupy_device_oom.txt", """
    import cupy
    print("cupy", cupy.__version__, flush=True)
    a = cupy.empty(2**30, dtype=cupy.uint8)
    b = cupy.empty(2**41, dtype=cupy.uint8)
""")
# Host memory: CuPy's pinned memory.
run("cupy_pinned_fail.txt", """
    import cupy
    p = cupy.cuda.alloc_pinned_memory(2**43)
""")
# Numba, if present.
run("numba_device_oom.txt", """
    from numba import cuda
    import numpy as np
    a = cuda.device_array(2**41, dtype=np.uint8)
""")
# A CUDA C program with the samples' checkCudaErrors-style macro: host then device.
src = os.path.join(OUT, "alloc_fail.cu")
open(src, "w").write(r'''
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define checkCuda(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, \
  (int)e, cudaGetErrorName(e), #call, cudaGetErrorString(e)); } } while (0)
int main(int argc, char **argv) {
  size_t n = (size_t)1 << 43;
  void *h = 0, *d = 0;
  if (argc > 1 && argv[1][0] == 'h') checkCuda(cudaMallocHost(&h, n));
  else checkCuda(cudaMalloc(&d, n));
  return 0;
}
''')
exe = os.path.join(OUT, "alloc_fail")
b = subprocess.run(["nvcc", "-o", exe, src], capture_output=True, text=True)
print("nvcc", b.returncode, b.stderr[-500:], flush=True)
if b.returncode == 0:
    run("cuda_mallochost_fail.txt", [exe, "h"], lang="c")
    run("cuda_malloc_fail.txt", [exe, "d"], lang="c")
    os.remove(exe)

# Timelines: training loops with zero_grad(set_to_none=False).
import torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity
print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), flush=True)
dev = "cuda"
def mlp(width=4096, depth=6):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*layers).to(dev)
def timeline(name, body, steps):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, record_shapes=True, with_stack=True) as prof:
        body(steps)
        torch.cuda.synchronize()
    p = os.path.join(OUT, name + "_memory_timeline.json")
    prof.export_memory_timeline(p, device="cuda:0")
    print("wrote", p, os.path.getsize(p), "max_alloc", torch.cuda.max_memory_allocated(), flush=True)
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
def train(steps, keep_every=0, keep_all=False):
    m = mlp(); opt = torch.optim.SGD(m.parameters(), lr=1e-3); store = []
    if keep_every or keep_all:
        # keep_every: every keep_every-th Linear's output; keep_all: every
        # module's output (Linear and GELU: all the step's activations).
        mods = list(m) if keep_all else [l for l in m if isinstance(l, nn.Linear)]
        for j, l in enumerate(mods):
            if keep_all or j % keep_every == 0:
                l.register_forward_hook(lambda mod, inp, out: store.append(out.detach()))
    for i in range(steps):
        x = torch.randn(2048, 4096, device=dev)
        loss = m(x).pow(2).mean(); loss.backward(); opt.step(); opt.zero_grad(set_to_none=False)
    return store
# clean, keeping gradients between steps
timeline("keepgrad_clean", lambda s: train(s), 8)
# keeps one layer's output in six each step (a small leak: 32 MiB a step)
timeline("keepgrad_keep1of6", lambda s: train(s, keep_every=6), 8)
# keeps every layer's output each step (most of each step's activations)
timeline("keepgrad_keepall", lambda s: train(s, keep_all=True), 8)
