# Issue 10. An OOM caused by another process: a holder process (this script, argument "hold")
# takes all free memory but 12 GiB, then this process loads 2 GiB shards until CUDA refuses.
# Writes the observer snapshot, error, traceback, memory_summary and nvidia-smi's process list.
import os, subprocess, sys, time
import torch
from rc import start, stop, dump, save_oom, smi_apps

if len(sys.argv) > 1 and sys.argv[1] == "hold":
    free, total = torch.cuda.mem_get_info()
    hold = torch.empty(free - (12 << 30), dtype=torch.uint8, device="cuda")  # SITE holder
    print("holding", hold.numel(), flush=True)
    time.sleep(float(sys.argv[2]))
    sys.exit(0)

holder = subprocess.Popen([sys.executable, __file__, "hold", "60"], stdout=subprocess.PIPE, text=True)
print("holder pid", holder.pid, holder.stdout.readline().strip(), flush=True)


def on_oom(device, alloc, device_alloc, device_free):
    print("observer: device", device, "alloc", alloc, "device_alloc", device_alloc, "device_free", device_free, flush=True)
    dump("oom_other_process.pickle")


start()
torch._C._cuda_attach_out_of_memory_observer(on_oom)
shards = []
try:
    while True:
        shards.append(torch.empty(2 << 30, dtype=torch.uint8, device="cuda"))  # SITE shard: 2 GiB each
        time.sleep(0.05)
except torch.OutOfMemoryError as e:
    print("pid", os.getpid(), "loaded", len(shards), "shards", flush=True)
    save_oom("oom_other_process", e)
    smi_apps("oom_other_process_nvidia_smi_apps.csv")
stop()
holder.kill()
holder.wait()
