import json
C=["parameter","optimizer_state","input","temporary","activation","gradient","autograd_detail","unknown"]
MB=1<<20
class T:
    def __init__(s): s.cur=[0]*8; s.rows=[]; s.ts=[]; s.t=1796090514872316
    def a(s,cat,mb):
        s.cur[C.index(cat)]+=int(mb*MB); s.t+=1000; s.ts.append(s.t); s.rows.append([0]+list(s.cur))
    def dump(s,name): json.dump([s.ts,s.rows],open(name,'w'))
L=12; P=[80]*L
def train(name, steps=10, leak=0, leakcat="activation", accum=1, ckpt=False, opt=True):
    t=T(); 
    for p in P: t.a("parameter",p)
    for st in range(steps):
        for mb in range(accum):
            t.a("input",64)
            saved=[]
            for l in range(L):
                if ckpt and l%4!=0: 
                    t.a("temporary",100); t.a("temporary",-100); continue
                t.a("activation",100); t.a("temporary",60); t.a("temporary",-60); saved.append(l)
            t.a("activation",20)  # logits/loss
            if leak: t.a(leakcat,leak)
            # backward
            t.a("activation",-20)
            for l in reversed(range(L)):
                if ckpt and l%4==3:
                    t.a("activation",300)  # recompute segment
                if ckpt and l%4!=0:
                    pass
                t.a("temporary",50); t.a("temporary",-50)
                if st==0 and mb==0 or (mb==0): t.a("gradient",P[l])  # grads created (set_to_none) at first microbatch
                if ckpt and l%4==1: t.a("activation",-300)
                if l in saved: t.a("activation",-100)
            t.a("input",-64)
        if opt:
            if st==0: t.a("optimizer_state",2*sum(P))
            t.a("temporary",sum(P)); t.a("temporary",-sum(P))
        t.a("gradient",-sum(P))  # zero_grad(set_to_none=True)
    t.dump(name)
def infer(name, steps=20, leak=0, leakcat="activation", midcat="temporary"):
    t=T()
    for p in P: t.a("parameter",p)
    for st in range(steps):
        t.a("input",64)
        prev=None
        for l in range(L):
            t.a(midcat,100)
            if prev: t.a(midcat,-100)
            prev=1
        t.a(midcat,-100)
        t.a(leakcat if leak else midcat, 20)   # output
        if not leak: t.a(midcat,-20)
        t.a("input",-64)
    t.dump(name)
train("tr_clean.json"); train("tr_leak_act.json",leak=50); train("tr_leak_unknown.json",leak=50,leakcat="unknown")
train("tr_accum4_clean.json",accum=4); train("tr_accum4_leak.json",accum=4,leak=50)
train("tr_ckpt_clean.json",ckpt=True); train("tr_ckpt_leak.json",ckpt=True,leak=50)
infer("inf_clean.json"); infer("inf_leak_act.json",leak=1); infer("inf_leak_unknown.json",leak=1,leakcat="unknown")
infer("inf_clean_unk.json",midcat="unknown"); infer("inf_leak_unk_unk.json",leak=1,leakcat="unknown",midcat="unknown")
infer("inf_clean_actmid.json",midcat="activation"); infer("inf_leak_actmid.json",leak=1,midcat="activation")
infer("inf_leak_unk_tmpmid.json",leak=1,leakcat="unknown",midcat="temporary")
def infer2(name, steps=20, leak=0, ws=1000, trainlike=False):
    t=T()
    for p in P: t.a("parameter",p)
    for st in range(steps):
        t.a("input",64)
        for l in range(L):
            t.a("unknown",100); t.a("temporary",ws); t.a("temporary",-ws)
            if l: t.a("unknown",-100)
        if leak: t.a("unknown",20)  # outputs appended to a list
        t.a("unknown",-100)
        t.a("input",-64)
    t.dump(name)
infer2("inf2_ws_clean.json"); infer2("inf2_ws_leak.json",leak=1)
infer2("inf2_ws300_leak.json",leak=1,ws=300)
def train2(name, steps=10, leak=0, ws=3000):
    t=T()
    for p in P: t.a("parameter",p)
    for st in range(steps):
        t.a("input",64)
        for l in range(L):
            t.a("activation",100); t.a("temporary",ws); t.a("temporary",-ws)
        if leak: t.a("activation",leak)
        for l in reversed(range(L)):
            t.a("temporary",ws); t.a("temporary",-ws)
            t.a("gradient",P[l]); t.a("activation",-100)
        t.a("input",-64)
        if st==0: t.a("optimizer_state",2*sum(P))
        t.a("temporary",sum(P)); t.a("temporary",-sum(P))
        t.a("gradient",-sum(P))
    t.dump(name)
for ws in (1000,3000,6000): train2(f"tr2_ws{ws}_leak.json",leak=50,ws=ws); train2(f"tr2_ws{ws}_clean.json",ws=ws)
