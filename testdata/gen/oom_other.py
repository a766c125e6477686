# An OOM caused by another process: a holder takes most of the GPU, then this
# process allocates 2 GiB at a time until CUDA refuses. Writes the error text,
# the traceback, and the snapshot written by an OOM observer.
import os, pickle, subprocess, sys, time, traceback, torch
OUT = os.environ.get("FIXOUT", "/tmp/fix")
if len(sys.argv) > 1 and sys.argv[1] == "hold":
    free, total = torch.cuda.mem_get_info()
    hold = torch.empty(free - (12 << 30), dtype=torch.uint8, device="cuda")
    print("holding", hold.numel(), flush=True)
    time.sleep(float(sys.argv[2]))
    sys.exit(0)
holder = subprocess.Popen([sys.executable, __file__, "hold", "40"], stdout=subprocess.PIPE, text=True)
print(holder.stdout.readline().strip(), flush=True)
def on_oom(device, alloc, device_alloc, device_free):
    with open(os.path.join(OUT, "oom_other_process.pickle"), "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)
torch.cuda.memory._record_memory_history(max_entries=100000)
torch._C._cuda_attach_out_of_memory_observer(on_oom)
def load_shards():
    shards = []
    while True:
        shards.append(torch.empty(2 << 30, dtype=torch.uint8, device="cuda"))
        time.sleep(0.05)
try:
    load_shards()
except torch.cuda.OutOfMemoryError as e:
    with open(os.path.join(OUT, "oom_other_process_error.txt"), "w") as f:
        f.write(str(e) + "\n")
    with open(os.path.join(OUT, "oom_other_process_traceback.txt"), "w") as f:
        traceback.print_exc(file=f)
torch.cuda.memory._record_memory_history(enabled=None)
holder.kill(); holder.wait()
print("oom_other done", flush=True)
