# A flat inference server logged by
#   nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 180
# that starts leaking at row `start` (of 120) at `rate` MiB per sample (3 min), until the log ends.
import random, datetime, sys
def gen(fn, start, rate, n=120):
    random.seed(3)
    T0 = datetime.datetime(2024,5,2,0,0,0)
    out=["timestamp, index, memory.used [MiB], memory.total [MiB]"]
    for i in range(n):
        t=T0+datetime.timedelta(seconds=180*i)
        used = 30000 + random.choice([0,0,2,-2])
        if i >= start: used += rate*(i-start)
        out.append(f"{t.strftime('%Y/%m/%d %H:%M:%S')}.{random.randint(0,999):03d}, 0, {used} MiB, 81920 MiB")
    open(fn,"w").write("\n".join(out)+"\n")
gen("trend_leak_last15pct_rate_far_too_low.csv", 102, 300)      # last 18 rows (54 min): +100 MiB/min
gen("trend_leak_last25pct_rate_wrong.csv", 90, 120)        # last 30 rows (90 min): +40 MiB/min
gen("trend_leak_last50pct_rate_halved.csv", 60, 120)       # last 60 rows (3 h): +40 MiB/min
gen("trend_leak_last10pct_called_step_then_flat.csv", 108, 450)   # last 12 rows (36 min): +150 MiB/min
