#!/usr/bin/env python3
"""Synthetic snapshot (standard library only) for branch h43b: one segment of
3.3 GiB holding one live block of 512 MiB at its start and one free block
(inactive split) of 2.8 GiB (1433 x 2 MiB) after it. The free memory is one
piece that requests up to 2.8 GiB fit, pinned by the live block: empty_cache()
cannot return it, but it is not fragmented.
Usage: python3 testdata/gen/pinned_split.py  (writes testdata/pytorch/synthetic/pinned_split.pickle)"""
import os
import pickle
T0=1_700_000_000_000_000
fr=[{'name':'step','filename':'/home/u/train.py','line':10}]
base=0x7f0000000000
live=512<<20
free=int(2.8*(1<<30))//(2<<20)*(2<<20)
total=live+free
blocks=[{'address':base,'size':live,'requested_size':live,'state':'active_allocated','frames':fr},
        {'address':base+live,'size':free,'requested_size':0,'state':'inactive','frames':[]}]
seg={'device':0,'address':base,'total_size':total,'allocated_size':live,'active_size':live,'requested_size':live,'stream':0,'segment_type':'large','segment_pool_id':(0,0),'is_expandable':False,'frames':[],'blocks':blocks}
tr=[{'action':'segment_alloc','addr':base,'size':total,'stream':0,'time_us':T0,'frames':fr},
    {'action':'alloc','addr':base,'size':live,'stream':0,'time_us':T0+10,'frames':fr},
    {'action':'alloc','addr':base+live,'size':free,'stream':0,'time_us':T0+20,'frames':fr},
    {'action':'free_requested','addr':base+live,'size':free,'stream':0,'time_us':T0+30,'frames':fr},
    {'action':'free_completed','addr':base+live,'size':free,'stream':0,'time_us':T0+31,'frames':fr}]
pickle.dump({'segments':[seg],'device_traces':[tr]},open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pytorch', 'synthetic', 'pinned_split.pickle'),'wb'))
