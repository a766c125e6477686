import pickle, sys
BASE=0x7f0000000000
SEG=1<<30
def fr(name,line,file='/home/user/proj/train.py'):
    return {'name':name,'filename':file,'line':line}
MOD=[fr('<module>',100)]
class B:
    def __init__(s):
        s.t=[]; s.time=1796026006000000; s.next=BASE; s.live={}
        s.t.append({'action':'segment_alloc','addr':BASE,'size':SEG,'stream':0,'time_us':s.time,'frames':MOD})
    def alloc(s,size,frames):
        s.time+=37
        a=s.next; s.next+=((size+511)//512)*512
        s.t.append({'action':'alloc','addr':a,'size':size,'stream':0,'time_us':s.time,'frames':frames+MOD})
        s.live[a]=(size,frames+MOD); return a
    def free(s,a,frames=None):
        size,f=s.live.pop(a)
        s.time+=11
        s.t.append({'action':'free_requested','addr':a,'size':size,'stream':0,'time_us':s.time,'frames':f})
        s.t.append({'action':'free_completed','addr':a,'size':size,'stream':0,'time_us':s.time,'frames':f})
    def dump(s,path):
        blocks=[]; cur=BASE
        for a in sorted(s.live):
            size,f=s.live[a]
            if a>cur: blocks.append({'address':cur,'size':a-cur,'requested_size':a-cur,'state':'inactive','frames':[]})
            bs=((size+511)//512)*512
            blocks.append({'address':a,'size':bs,'requested_size':size,'state':'active_allocated','frames':f})
            cur=a+bs
        if cur<BASE+SEG: blocks.append({'address':cur,'size':BASE+SEG-cur,'requested_size':BASE+SEG-cur,'state':'inactive','frames':[]})
        alloc=sum(((v[0]+511)//512)*512 for v in s.live.values())
        seg={'device':0,'address':BASE,'total_size':SEG,'allocated_size':alloc,'active_size':alloc,'requested_size':sum(v[0] for v in s.live.values()),'stream':0,'segment_type':'large','segment_pool_id':(0,0),'is_expandable':False,'blocks':blocks,'frames':MOD}
        d={'segments':[seg],'device_traces':[s.t],'allocator_settings':{},'external_annotations':[]}
        pickle.dump(d,open(path,'wb'))
