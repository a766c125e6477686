import sys,os,copy,torch as T,torch.nn as nn
O=os.environ.get('OUT','/tmp');n=sys.argv[1];D='cuda';F=nn.functional
def M(d=1024):return nn.Sequential(nn.Linear(d,4*d),nn.GELU(),nn.Linear(4*d,d)).to(D)
def X(b=64,d=1024):return T.randn(b,d,device=D)
def accum(leak):
 m=M();o=T.optim.AdamW(m.parameters());L=[];K=[]
 for s in range(30):
  for k in range(4):
   y=m(X());l=(y**2).mean()/4;l.backward()
   L.append(l if leak else l.item())
  o.step();o.zero_grad()
  if leak:K.append(y.detach().clone())
def ga_clean():accum(0)
def ga_leak():accum(1)
def amp_ema():
 m=M();e=copy.deepcopy(m);o=T.optim.SGD(m.parameters(),lr=.1,momentum=.9);sc=T.amp.GradScaler();sh=T.optim.lr_scheduler.CosineAnnealingLR(o,50)
 for s in range(50):
  with T.autocast('cuda',dtype=T.float16):l=(m(X())**2).mean()
  sc.scale(l).backward();sc.step(o);sc.update();o.zero_grad();sh.step()
  with T.no_grad():
   for a,b in zip(e.parameters(),m.parameters()):a.mul_(.99).add_(b,alpha=.01)
def metrics():
 m=M();o=T.optim.Adam(m.parameters());A=[];B=[]
 for s in range(80):
  x=X();t=T.randint(0,1024,(64,),device=D);y=m(x);l=F.cross_entropy(y,t)
  o.zero_grad();l.backward();o.step()
  A.append(l);B.append((y.argmax(1)==t).float().mean())
metrics_all=metrics
def shape_cache():
 m=nn.Linear(256,256).to(D);o=T.optim.SGD(m.parameters(),lr=.01);C={};g=T.Generator().manual_seed(0)
 for s in range(120):
  L=256*(1+int(T.randint(0,4,(1,),generator=g)))
  if L not in C:C[L]=T.triu(T.full((L,L),-1e9,device=D),1)
  h=m(T.randn(8,L,256,device=D));a=(h@h.transpose(1,2))/16+C[L];l=a.softmax(-1).mean()
  o.zero_grad();l.backward();o.step()
def comp(leak):
 m=M();c=T.compile(m);o=T.optim.Adam(m.parameters());K=[]
 for s in range(40):
  y=c(X());l=(y**2).mean();o.zero_grad();l.backward();o.step()
  if leak:K.append(y.detach())
def comp_clean():comp(0)
def comp_leak():comp(1)
def pin_dl():
 ds=T.utils.data.TensorDataset(T.randn(4096,1024),T.randn(4096,1024))
 dl=T.utils.data.DataLoader(ds,batch_size=64,shuffle=True,pin_memory=True,num_workers=2)
 m=M();o=T.optim.Adam(m.parameters())
 for ep in range(2):
  for x,t in dl:
   x=x.cuda(non_blocking=True);t=t.cuda(non_blocking=True);l=F.mse_loss(m(x),t);o.zero_grad();l.backward();o.step()
def step(m,o):
 y=m(X());l=(y**2).mean();o.zero_grad();l.backward();o.step();return y
def val_saw():
 m=M();o=T.optim.Adam(m.parameters())
 for s in range(100):
  step(m,o)
  if s%10==9:
   P=[]
   with T.no_grad():
    for v in range(5):P.append(m(X()))
   r=T.cat(P).mean().item();del P
def epoch_leak():
 m=M();o=T.optim.Adam(m.parameters());K=[]
 for ep in range(3):
  for s in range(30):
   y=step(m,o)
   if ep==2:K.append(y.detach())
def ring():
 m=M();o=T.optim.Adam(m.parameters());K=[]
 for s in range(200):K.append(step(m,o).detach())
def graph(leak):
 m=M().eval();si=X();K=[]
 with T.no_grad():
  s=T.cuda.Stream();s.wait_stream(T.cuda.current_stream())
  with T.cuda.stream(s):
   for _ in range(3):m(si)
  T.cuda.current_stream().wait_stream(s)
  g=T.cuda.CUDAGraph()
  with T.cuda.graph(g):so=m(si)
  for i in range(100):
   si.copy_(X());g.replay()
   if leak:K.append(so.clone())
   else:r=so.sum().item()
def graph_clean():graph(0)
def graph_leak():graph(1)
def kv(leak):
 d=512;W=[T.randn(d,3*d,device=D)/30 for _ in range(4)];S=[]
 with T.no_grad():
  for r in range(12):
   h=T.randn(1,32,d,device=D);C=[None]*4
   for t in range(32):
    for i in range(4):
     q,k,v=(h@W[i]).chunk(3,-1)
     C[i]=(k,v) if C[i] is None else (T.cat([C[i][0],k],1),T.cat([C[i][1],v],1))
     h=T.softmax(q@C[i][0].transpose(1,2)/22,-1)@C[i][1]
    h=h[:,-1:]
   if leak:S.append(C)
def kv_clean():kv(0)
def kv_leak():kv(1)
def gan():
 G=M();Dm=nn.Sequential(nn.Linear(1024,256),nn.ReLU(),nn.Linear(256,1)).to(D);og=T.optim.Adam(G.parameters());od=T.optim.Adam(Dm.parameters())
 for s in range(60):
  f=G(X());ld=Dm(X()).mean()-Dm(f.detach()).mean();od.zero_grad();ld.backward();od.step()
  lg=-Dm(f).mean();og.zero_grad();lg.backward();og.step()
def val_graph():
 m=M();o=T.optim.Adam(m.parameters());V=[]
 for s in range(60):
  step(m,o)
  if s%5==4:V.append((m(X())**2).mean())
def eval_collect():
 m=M();o=T.optim.Adam(m.parameters())
 for s in range(40):step(m,o)
 P=[]
 with T.no_grad():
  for v in range(40):P.append(m(X()))
 a=T.cat(P).mean().item();del P
if n=='metrics_all':T.cuda.memory._record_memory_history(max_entries=100000)
else:T.cuda.memory._record_memory_history(max_entries=3000 if n=='ring' else 200000,stacks='python')
globals()[n]();T.cuda.synchronize()
T.cuda.memory._dump_snapshot(f'{O}/{n}.pickle');print(n,'ok',T.__version__)
