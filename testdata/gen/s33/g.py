import os,sys,json
s,O=sys.argv[1:3];P=O+'/'+s
c={'esl':0,'esc':0,'eso':0,'esf':0,'frm':1,'fbm':2,'gcl':3,'gcc':3}.get(s)
if c!=None:os.environ['PYTORCH_CUDA_ALLOC_CONF']=['expandable_segments:True','max_split_size_mb:64','max_split_size_mb:128','garbage_collection_threshold:0.5'][c]
import torch as T
M=T.cuda.memory;d='cuda';G=1<<30;MB=1<<20
def w(n,t):open(P+n,'w').write(t)
T.cuda.init()
T._C._cuda_attach_out_of_memory_observer(lambda *a:M._dump_snapshot(P+'_oom.pickle'))
k=dict(stacks='python',max_entries=100000)
if s[:2]=='rb':k['max_entries']=300
if s=='kal':k['stacks']='all'
if s=='ksl':k['enabled']='state'
if s=='knl':k['context']=None
if s=='kcl':k['context']='state'
M._record_memory_history(**k)
def cap(b):T.cuda.set_per_process_memory_fraction(b/T.cuda.get_device_properties(0).total_memory)
N=T.nn
m=N.Sequential(N.Linear(1024,1024),N.ReLU(),N.Linear(1024,1024)).to(d)
o=T.optim.Adam(m.parameters());K=[]
L=s[-1]=='l'
def E(n):return T.empty(n,dtype=T.uint8,device=d)
def R(*a):return T.randn(*a,device=d)
def step(i):
 x=R(256,1024)
 y=m(x);y.square().mean().backward();o.step();o.zero_grad()
 if L:K.append(y.detach())
def main():
 if s in('esl','esc','rbl','rbc','kal','ksl','knl','kcl'):
  for i in range(60):step(i)
 elif s[:2]=='mp':
  p=T.cuda.MemPool()
  for i in range(60):
   with T.cuda.use_mem_pool(p):step(i)
 elif s[:2]=='cg':
  st=R(256,1024);g=T.cuda.CUDAGraph()
  with T.no_grad():
   z=T.cuda.Stream();z.wait_stream(T.cuda.current_stream())
   with T.cuda.stream(z):
    for _ in range(3):m(st)
   T.cuda.current_stream().wait_stream(z)
   with T.cuda.graph(g):so=m(st)
   for i in range(60):
    st.copy_(R(256,1024));g.replay()
    if L:K.append(so.clone())
 elif s[:2]=='st':
  z=T.cuda.Stream();W=R(4096,4096)
  for i in range(40):
   x=R(1024,1024);z.wait_stream(T.cuda.current_stream())
   with T.cuda.stream(z):
    for _ in range(8):W@W
    y=x*2
   x.record_stream(z);del x,y
  if s=='sts':T.cuda.synchronize();E(9)
 elif s[:2]=='gc':
  cap(G)
  for i in range(60):t=E((i%7+1)*24*MB);step(i);del t
 elif s=='eso':
  cap(2*G)
  for i in range(200):step(i);K.append(R(16*MB))
 elif s in('frn','frm','esf'):
  cap(450*MB);A=[E(6*MB) for _ in range(60)];K.extend(A[::3]);del A;E(100*MB)
 elif s[:2]=='fb':
  cap(600*MB);E(512*MB);A=[E(32*MB) for _ in range(16)];K.extend(A[::2]);del A;E(128*MB)
 elif s=='cap':
  cap(G);n=N.Sequential(*[N.Sequential(N.Linear(2048,2048),N.ReLU()) for _ in range(8)]).to(d)
  for b in(512,512,512,16384):n(R(b,2048)).sum().backward()
 elif s=='hg':E(300*G)
try:main();w('.res',T.__version__+' ok')
except T.OutOfMemoryError as e:
 w('.msg',str(e));w('.sum',T.cuda.memory_summary());w('.json',json.dumps(T.cuda.memory_stats()));w('.res','oom')
M._dump_snapshot(P+'.pickle')
