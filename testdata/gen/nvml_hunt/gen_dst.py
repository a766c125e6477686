# A steady leak (+15 MiB per 3-min sample = 5 MiB/min) logged by
#   nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 180
# on a host in Europe/Berlin across the DST fall-back of 2024-10-27 (03:00 CEST -> 02:00 CET).
# nvidia-smi prints local wall-clock time without an offset, so 02:00-02:59 appears twice.
import datetime, zoneinfo
z = zoneinfo.ZoneInfo("Europe/Berlin")
t0 = datetime.datetime(2024,10,26,23,0,tzinfo=datetime.timezone.utc)  # 01:00 CEST
out = ["timestamp, index, memory.used [MiB], memory.total [MiB]"]
for i in range(80):  # 4 h
    t = t0 + datetime.timedelta(seconds=180*i)
    loc = t.astimezone(z)
    out.append(f"{loc.strftime('%Y/%m/%d %H:%M:%S')}.{(37*i)%1000:03d}, 0, {20000 + 15*i} MiB, 81920 MiB")
open("dst_fallback_berlin_steady_leak_5MiBpermin.csv","w").write("\n".join(out)+"\n")
