# Shared helpers for the recording scripts: where outputs go, history on/off, snapshot dump.
import json, os, pickle, subprocess, sys, traceback
import torch

OUT = os.environ.get("RECOUT", "/tmp/rec")
os.makedirs(OUT, exist_ok=True)


def start(max_entries=100000, stacks="python", context="all"):
    torch.cuda.memory._record_memory_history(enabled="all", context=context, stacks=stacks,
                                             max_entries=max_entries)


def stop():
    torch.cuda.memory._record_memory_history(enabled=None)


def dump(name):
    path = os.path.join(OUT, name)
    torch.cuda.memory._dump_snapshot(path)
    print("wrote", name, os.path.getsize(path), flush=True)
    return path


def write(name, text):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)
    print("wrote", name, len(text), flush=True)


def block_states(path):
    """Counts of block states and trace actions in a dumped snapshot."""
    with open(path, "rb") as f:
        s = pickle.load(f)
    states, actions = {}, {}
    for seg in s.get("segments", []):
        for b in seg.get("blocks", []):
            states[b["state"]] = states.get(b["state"], 0) + 1
    for dev in s.get("device_traces", []):
        for e in dev:
            actions[e["action"]] = actions.get(e["action"], 0) + 1
    return {"states": states, "trace_actions": actions}


def save_oom(tag, exc):
    """The error text, the traceback and memory_summary() at the moment an OOM was caught."""
    write(tag + "_error.txt", str(exc) + "\n")
    write(tag + "_traceback.txt", traceback.format_exc())
    try:
        write(tag + "_memory_summary.txt", torch.cuda.memory_summary())
    except Exception as e:  # keep the rest
        print("memory_summary failed:", e, flush=True)


def smi_apps(name):
    try:
        r = subprocess.run(["nvidia-smi", "--query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory",
                            "--format=csv"], capture_output=True, text=True, timeout=20)
        write(name, r.stdout + r.stderr)
    except Exception as e:
        print("nvidia-smi failed:", e, flush=True)
