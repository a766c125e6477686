import sys,torch as T,torch.nn as nn
F=nn.functional;n=sys.argv[1];D='cuda'
def M(d=1024):return nn.Sequential(nn.Linear(d,4*d),nn.GELU(),nn.Linear(4*d,d)).to(D)
def f1(leak):
 m=nn.Linear(256,256).to(D);o=T.optim.SGD(m.parameters(),lr=.01);C={};g=T.Generator().manual_seed(0)
 for s in range(120):
  L=256*(1+int(T.randint(0,4,(1,),generator=g)));k=(L,s) if leak else L
  if k not in C:C[k]=T.triu(T.full((L,L),-1e9,device=D),1)
  h=m(T.randn(8,L,256,device=D));a=(h@h.transpose(1,2))/16+C[k];l=a.softmax(-1).mean()
  o.zero_grad();l.backward();o.step()
 return locals()
def f2(leak):
 m=M();o=T.optim.Adam(m.parameters());H=[]
 for s in range(100):
  l=F.mse_loss(m(T.randn(64,1024,device=D)),T.randn(64,1024,device=D))
  o.zero_grad();l.backward();o.step()
  H.append(l if leak else l.item())
 return locals()
def f3(steps):
 m=M();o=T.optim.Adam(m.parameters());K=[]
 for s in range(steps):
  x=T.randn(64,1024,device=D)
  y=m(x);l=(y**2).mean();o.zero_grad();l.backward();o.step();K.append(y.detach())
fn,a={'oneline_cache':(f1,0),'oneline_cache_leak':(f1,1),'oneline_loss_leak':(f2,1),'oneline_clean':(f2,0),'freed100':(f3,100),'freed200':(f3,200)}[n]
T.cuda.memory._record_memory_history(max_entries=200000,stacks='python')
r=fn(a);T.cuda.synchronize()
T.cuda.memory._dump_snapshot(f'/tmp/q/{n}.pickle');print(n,'ok')
