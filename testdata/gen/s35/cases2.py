from gen import *
import sys
N=int(sys.argv[1]); MB=1<<20
TF='/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py'
# e: keep first then temps
b=B()
for i in range(N):
    k=b.alloc(1*MB,[fr('step',22)]); t=b.alloc(4*MB,[fr('step',23)]); b.free(t)
b.dump(f'e_keep_first_{N}.pickle')
# g: pure append with each step 2 allocs same line (e.g. list of 2)
b=B()
for i in range(N):
    b.alloc(1*MB,[fr('collect',30)]); b.alloc(1*MB,[fr('collect',30)])
b.dump(f'g_append_pairs_{N}.pickle')
# h: temps only inside module forward, kept from user line (eval loop storing outputs)
b=B()
for i in range(N):
    a=b.alloc(8*MB,[fr('forward',125,TF),fr('_call_impl',1750,'/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py'),fr('evaluate',50)])
    o=b.alloc(1*MB,[fr('forward',125,TF),fr('_call_impl',1750,'/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py'),fr('evaluate',50)])
    b.free(a)
b.dump(f'h_eval_outputs_{N}.pickle')
# i: pure append with growing size (cat)
b=B()
for i in range(N):
    b.alloc((i+1)*MB,[fr('collect',30)])
b.dump(f'i_append_grow_{N}.pickle')
# j: pure append, varying sizes per step but unfreed (e.g. variable batch)
b=B(); import random; random.seed(1)
for i in range(N):
    b.alloc(random.choice([1,2,3])*MB,[fr('collect',30)])
b.dump(f'j_append_var_{N}.pickle')
