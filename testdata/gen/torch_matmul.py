# Issue 13. A PyTorch program that multiplies matrices on the GPU (a few sizes, fp32 and bf16)
# and exits, for compute-sanitizer --leak-check full.
import torch
for dtype in (torch.float32, torch.bfloat16):
    for n in (64, 256, 1000):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        c = torch.matmul(a, b)
        print(dtype, n, float(c.float().abs().sum()), flush=True)
