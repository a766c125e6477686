# %%
# No GPU where this notebook was recorded: OutOfMemoryError below stands
# for torch.OutOfMemoryError, raised with the text PyTorch printed for a
# real OOM (testdata/pytorch/oom_traceback.txt); the traceback is IPython's.
class OutOfMemoryError(RuntimeError):
    pass


MESSAGE = open("../../pytorch/oom_error.txt").read().strip()


def allocate(n_bytes):
    raise OutOfMemoryError(MESSAGE)
# %%
def grow(steps):
    kept = []
    for step in range(steps):
        kept.append(allocate(512 << 20))
        print(f"step {step}: {len(kept)} blocks kept", end="\n" if step % 2 else ", ")
    return kept
# %%
print("starting", end=" ")
print("the loop")
blocks = grow(100)
