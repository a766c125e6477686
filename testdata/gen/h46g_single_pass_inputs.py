# Does one forward pass show several "input" rises in export_memory_timeline? (session 46, h46g)
# Run on the H200 (PyTorch 2.11.0+cu130) with OUT set; wrote
# testdata/kineto/h46g_single_pass_layer_masks_memory_timeline.json(.gz). Printed, per category
# column c (1 parameter ... 8 unknown): the number of rises and the most it held.
# Result: one forward pass of 8 layers, each building a mask with torch.ones, shows 8 equal
# 32 MiB "input" rises, one between each layer's activations; one pass over three inputs, 2-3.
import os,json,torch,torch.nn as nn
from torch.profiler import profile,ProfilerActivity
OUT=os.environ["OUT"];dev="cuda"
class L(nn.Module):
    def __init__(s,w):super().__init__();s.l=nn.Linear(w,w)
    def forward(s,x):
        mask=torch.ones(x.shape[0],x.shape[1],device=x.device)
        return torch.relu(s.l(x))*mask
def rec(name,body):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU,ProfilerActivity.CUDA],profile_memory=True,record_shapes=True,with_stack=True) as prof:
        body();torch.cuda.synchronize()
    p=os.path.join(OUT,name+"_memory_timeline.json")
    prof.export_memory_timeline(p,device="cuda:0")
    t,rows=json.load(open(p))
    for c in range(1,9):
        s=[r[c] for r in rows];print(name,"cat",c,"rises",sum(1 for a,b in zip(s,s[1:]) if b>a),"max MiB",max(s)>>20)
def masks():
    m=nn.Sequential(*[L(4096) for _ in range(8)]).to(dev)
    x=torch.randn(2048,4096,device=dev);out=m(x)
def three():
    m=nn.Linear(4096,4096).to(dev)
    a,b,c=(torch.randn(2048,4096,device=dev) for _ in range(3));out=m(a)+m(b)*c
rec("h46g_single_pass_layer_masks",masks)
rec("h46g_single_pass_three_inputs",three)
