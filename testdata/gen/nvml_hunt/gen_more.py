import random, datetime
random.seed(5)
T0 = datetime.datetime(2024,5,2,0,0,0)
def ts(s): 
    t=T0+datetime.timedelta(seconds=s); return t.strftime('%Y/%m/%d %H:%M:%S')+".%03d"%random.randint(0,999)
# 2) sawtooth (eval every 20 min, +6 GiB for 4 min) whose floor rises 50 MiB per cycle; every 60 s, 4 h
out=["timestamp, index, memory.used [MiB], memory.total [MiB]"]
for i in range(240):
    s=60*i; m=s%1200; base=30000+50*(s//1200)
    u=base+(6144 if 900<=m<1140 else 0)+random.choice([0,2,-2])
    out.append(f"{ts(s)}, 0, {u} MiB, 81920 MiB")
open("trend_sawtooth_floor_rises_50MiB_per_cycle.csv","w").write("\n".join(out)+"\n")
# 3) 8 GPUs interleaved, GPU 5 leaks 20 MiB/min; every 120 s, 2 h
out=["timestamp, index, memory.used [MiB], memory.total [MiB]"]
for i in range(60):
    s=120*i; t=ts(s)
    for g in range(8):
        u=60000+random.choice([0,2,-2])+(40*i if g==5 else 0)
        out.append(f"{t}, {g}, {u} MiB, 81920 MiB")
open("trend_8gpu_gpu5_leaks_20MiBpermin.csv","w").write("\n".join(out)+"\n")
# 4) job restarts; the second run leaks 30 MiB/min until the log ends (every 60 s, 3 h)
out=["timestamp, index, memory.used [MiB], memory.total [MiB]"]
for i in range(180):
    s=60*i
    if i<80: u=22000+random.choice([0,2,-2])
    elif i<85: u=0
    else: u=22000+30*(i-85)+random.choice([0,2,-2])
    out.append(f"{ts(s)}, 0, {u} MiB, 81920 MiB")
open("trend_restart_then_second_run_leaks_30MiBpermin.csv","w").write("\n".join(out)+"\n")
