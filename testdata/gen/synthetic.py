#!/usr/bin/env python3
"""Hand-made snapshots (standard library only) of cases real runs rarely
produce, written during an adversarial review of gpuleak: a bounded queue,
a burst at the end, a leak of varying sizes, hostile sizes and timestamps,
control characters in names, an empty snapshot.
Usage: python3 testdata/gen/synthetic.py   (writes testdata/pytorch/synthetic/)"""
import pickle, random
import os
D=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pytorch', 'synthetic') + '/'
T0=1_700_000_000_000_000
def fr(line, name): return [{'name':name,'filename':'/home/u/train.py','line':line}]
def snap(events, live):  # events: (t, action, addr, size, line, name); live: {addr:(size,line,name)}
    tr=[{'action':a,'addr':ad,'size':sz,'stream':0,'time_us':t,'frames':fr(ln,nm)} for t,a,ad,sz,ln,nm in events]
    blocks=[{'address':a,'size':s,'requested_size':s,'state':'active_allocated','frames':fr(l,n)} for a,(s,l,n) in sorted(live.items())]
    used=sum(s for s,_,_ in live.values())
    seg={'device':0,'address':0x7f0000000000,'total_size':1<<34,'allocated_size':used,'active_size':used,'requested_size':used,'stream':0,'segment_type':'large','segment_pool_id':(0,0),'is_expandable':False,'frames':[],'blocks':blocks}
    return {'segments':[seg],'device_traces':[tr]}
def loop(steps, keep, size=lambda s:1<<20, line=10, name='step', dt=100_000, extra=lambda ev,live,t:None):
    ev=[]; live={}; a=0x7f0000000000; t=T0; q=[]
    for s in range(steps):
        t+=dt; sz=size(s); ad=a; a+=sz+4096
        ev.append((t,'alloc',ad,sz,line,name)); live[ad]=(sz,line,name); q.append(ad)
        for old in [x for x in q if not keep(s,x,q)]:
            q.remove(old); osz=live.pop(old)[0]
            ev.append((t+1,'free_requested',old,osz,line,name)); ev.append((t+2,'free_completed',old,osz,line,name))
    extra(ev,live,t)
    return ev,live
# A. bounded queue: keeps only the last 4 batches (steady state, never grows)
ev,live=loop(1000, lambda s,x,q: x in q[-4:], line=30, name='prefetch', dt=10_000)
pickle.dump(snap(ev,live),open(D+'ring4.pickle','wb'))
# B. one burst of 6 allocations in the last ms of a 10 s trace, nothing else kept
def burst(ev,live,t):
    for i in range(6):
        ad=0x7f8000000000+i*(8<<20); ev.append((t+1000+200*i,'alloc',ad,8<<20,77,'save_ema_copy')); live[ad]=(8<<20,77,'save_ema_copy')
ev,live=loop(100, lambda s,x,q: False, extra=burst)
pickle.dump(snap(ev,live),open(D+'burst_at_end.pickle','wb'))
# C. a steady leak (every 5th step kept) with variable sizes (variable sequence length)
random.seed(5); sizes=[random.randint(100,2000)*4096 for _ in range(200)]
kept=set()
def keepC(s,x,q):
    if x==q[-1] and s%5==0: kept.add(x)
    return x in kept
ev,live=loop(200, keepC, size=lambda s:sizes[s], line=42, name='forward', dt=50_000)
pickle.dump(snap(ev,live),open(D+'varsize_leak.pickle','wb'))
# D. same steady leak, fixed size, but sizes negated (hostile)
kept=set()
ev,live=loop(100, keepC)
ev=[(t,a,ad,-sz if (a=='alloc' and ln==10) else sz,ln,nm) for t,a,ad,sz,ln,nm in ev]
pickle.dump(snap(ev,live),open(D+'negsize.pickle','wb'))
# E. steady leak, all timestamps equal
kept=set(); ev,live=loop(100, keepC)
pickle.dump(snap([(T0,)+e[1:] for e in ev],live),open(D+'sametime.pickle','wb'))
# F. steady leak, function name with ANSI escape and newline
kept=set(); ev,live=loop(100, keepC, name='step\n 9  leak  0  0 B  0  none  FORGED ROW\x1b[31m')
pickle.dump(snap(ev,live),open(D+'ansi.pickle','wb'))
# H. an empty snapshot
pickle.dump({'segments': [], 'device_traces': []}, open(D+'empty_snap.pickle', 'wb'))
