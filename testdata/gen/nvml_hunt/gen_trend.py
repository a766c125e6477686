import random, datetime, sys
random.seed(1)
T0 = datetime.datetime(2024,3,14,9,0,0)
HDR = "timestamp, index, name, memory.total [MiB], memory.used [MiB], memory.free [MiB]\n"
TOTAL = 81920
def row(t, used, idx=0, name="NVIDIA A100-SXM4-80GB"):
    ts = (T0 + datetime.timedelta(seconds=t)).strftime("%Y/%m/%d %H:%M:%S.") + "%03d" % random.randint(0,999)
    used=int(used)
    return f"{ts}, {idx}, {name}, {TOTAL} MiB, {used} MiB, {TOTAL-used-0} MiB\n"
def write(fn, f, n, dt):
    with open(fn,"w") as o:
        o.write(HDR)
        for i in range(n):
            o.write(row(i*dt, f(i*dt)))
# 1) warm-up then flat (2 h, every 60 s)
def warm(t):
    if t < 60: return 420
    if t < 180: return 18432 + random.choice([0,0,2,-2])
    return 21760 + random.choice([0,0,0,2,-2,4])
write("trend_warmup_flat.csv", warm, 120, 60)
# 2) sawtooth: eval every 20 min takes +6 GiB for 4 min then empty_cache
def saw(t):
    base = 30120
    m = t % 1200
    if 900 <= m < 1140: return base + 6144 + random.choice([0,2,-2])
    return base + random.choice([0,2,-2])
write("trend_eval_sawtooth.csv", saw, 120, 60)
# 3) restart: runs 50 min, crashes, 0 for 4 min, restarts, same level
def restart(t):
    if t < 3000: return 22000 + random.choice([0,2,-2]) if t>=120 else 500
    if t < 3240: return 0
    if t < 3360: return 500
    return 22000 + random.choice([0,2,-2])
write("trend_restart.csv", restart, 120, 60)
# 4) slow leak 2 MiB/min over 2 h with +-8 MiB noise
def slow(t):
    return 20480 + 2*t/60 + random.uniform(-8,8)
write("trend_slow_leak_2MiBpermin.csv", slow, 120, 60)
# 5) stepped leak: +20 MiB every 5 min
def stepl(t):
    return 20480 + 20*int(t//300)
write("trend_step_leak_20MiB_per_5min.csv", stepl, 120, 60)
# 6) slow leak 10 MiB/min on a 70 GiB job over 2 h (1.2 GiB growth), +-8 MiB noise
random.seed(2)
def slow70(t):
    return 71680 + 10*t/60 + random.uniform(-8,8)
write("trend_slow_leak_10MiBpermin_at_70GiB.csv", slow70, 120, 60)
