# s39: real recordings of runs no other recording covers: variable sequence
# lengths padded per batch (a late batch longer than all before), torch.compile
# with dynamic shapes, a transformers Trainer with a callback, an inference
# server with a response cache, cudnn.benchmark over varying input shapes, and
# the same runs recorded with other options (context="state", context="alloc",
# stacks="all", the legacy _record_memory_history(True, ...)).
# Usage: python record.py OUTDIR [CASE...]   (one child process per case,
# PAR at a time). Each case records context="all", stacks="python",
# max_entries=100000 unless its name says otherwise. The truth of each case is
# in its comment; NOTE lines print what each run kept, counted by the script.
import os, subprocess, sys

D = 256
V = 1000


def start(**kw):
    if CASE.startswith("legacy_ctx_"):
        # the pre-2.1 API: a bool first; trace entries with their frames
        torch.cuda.memory._record_memory_history(True, trace_alloc_max_entries=100000,
                                                 trace_alloc_record_context=True)
    elif CASE.startswith("legacy_"):
        # the pre-2.1 API as most posts show it: blocks carry frames, the trace
        # entries do not (trace_alloc_record_context defaults to False)
        torch.cuda.memory._record_memory_history(True, trace_alloc_max_entries=100000)
    elif CASE.startswith("state_"):
        torch.cuda.memory._record_memory_history(max_entries=100000, context="state", stacks="python")
    elif CASE.startswith("alloc_"):
        torch.cuda.memory._record_memory_history(max_entries=100000, context="alloc", stacks="python")
    elif CASE.startswith("all_"):
        torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="all")
    else:
        torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="python")


def note(*a):
    print("NOTE", CASE, *a, flush=True)


def held(ts):
    # distinct storages (blocks) the kept tensors hold, and their bytes
    seen = {}
    for t in ts:
        s = t.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
    return len(seen), sum(seen.values())


# --- variable sequence lengths ------------------------------------------------

def varlen(keep):
    # 40 AdamW steps of 16 sequences padded to the batch's longest; lengths
    # drawn from 16..128 (random.Random(3)), step 30's batch 320 long (longer
    # than all before), then lengths 16..128 again. The step's activations grow
    # with the longest sequence and are freed by backward: memory rises with
    # the longest batch, NOT a leak. keep=True appends the last position's
    # logits (16 x 1000 fp32 = 64,000 B) each step (LINE keep): a leak of 40
    # blocks, 2,560,000 B.
    import random
    rng = random.Random(3)
    model = nn.Sequential(nn.Embedding(V, D), nn.Linear(D, 4 * D), nn.GELU(),
                          nn.Linear(4 * D, D), nn.Linear(D, V)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    start()
    kept = []
    longest = 0
    for step in range(40):
        lens = [320 if (step == 30 and i == 0) else rng.randint(16, 128) for i in range(16)]
        L = max(lens)
        longest = max(longest, L)
        ids = torch.zeros(16, L, dtype=torch.long)
        labels = torch.full((16, L), -100, dtype=torch.long)
        for i, n in enumerate(lens):
            seq = torch.randint(1, V, (n,))
            ids[i, :n] = seq
            labels[i, :n - 1] = seq[1:]
        ids = ids.cuda(non_blocking=True)  # LINE ids
        labels = labels.cuda(non_blocking=True)
        logits = model(ids)  # LINE forward
        loss = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if keep:
            kept.append(logits[:, -1].detach().clone())  # LINE keep
    note("longest", longest, "kept", *held(kept))
    return kept


def case_varlen_clean():
    return varlen(False)


def case_varlen_leak():
    return varlen(True)


def case_state_varlen_clean():
    return varlen(False)


def case_all_varlen_leak():
    return varlen(True)


# --- torch.compile with dynamic shapes ------------------------------------------

def compile_dyn(keep):
    # torch.compile (default: the second shape recompiles with dynamic shapes),
    # 30 AdamW steps on batches of 8 x L x 256, L drawn from 8..64
    # (random.Random(5)), step 20 at L=96; history on before the first compiled
    # call. No leak. keep=True appends out.detach() each step (LINE ckeep,
    # 8 x L x 256 fp32: sizes vary with L): a leak of 30 blocks.
    import random
    rng = random.Random(5)
    model = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D)).cuda()
    cm = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    start()
    kept = []
    for step in range(30):
        L = 96 if step == 20 else rng.randint(8, 64)
        x = torch.randn(8, L, D, device="cuda")  # LINE cbatch
        out = cm(x)  # LINE cforward
        loss = out.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if keep:
            kept.append(out.detach())  # LINE ckeep
    note("kept", *held(kept))
    return kept


def case_compile_dyn_clean():
    return compile_dyn(False)


def case_compile_dyn_leak():
    return compile_dyn(True)


# --- transformers Trainer ---------------------------------------------------------

def hf_trainer(keep):
    # A 2-layer GPT-2 (n_embd 64, vocab 1000) built from a config, trained by
    # transformers.Trainer for 40 steps (batch 8, sequences of 64, an in-memory
    # dataset of 320), no saving, no logging. keep=True: a TrainerCallback's
    # on_step_end appends a clone of the token embedding (1000 x 64 fp32,
    # 256,000 B; LINE hfkeep) each step: a leak of 40 blocks, 10,240,000 B.
    # The clean twin's callback only counts steps: no leak.
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments, TrainerCallback
    transformers.logging.set_verbosity_error()
    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=V, n_positions=128)
    model = GPT2LMHeadModel(cfg)
    g = torch.Generator().manual_seed(0)
    data = []
    for _ in range(320):
        ids = torch.randint(0, V, (64,), generator=g)
        data.append({"input_ids": ids, "labels": ids.clone()})

    class Keep(TrainerCallback):
        def __init__(self):
            self.kept = []
            self.steps = 0

        def on_step_end(self, args, state, control, model=None, **kw):
            self.steps += 1
            if keep:
                self.kept.append(model.transformer.wte.weight.detach().clone())  # LINE hfkeep

    cb = Keep()
    args = TrainingArguments(output_dir="/tmp/s39_hf_" + CASE, per_device_train_batch_size=8,
                             max_steps=40, save_strategy="no", logging_strategy="no",
                             report_to=[], dataloader_num_workers=0, disable_tqdm=True,
                             learning_rate=1e-3)
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[cb])
    start()
    trainer.train()
    note("steps", cb.steps, "kept", *held(cb.kept))
    return trainer, cb


def case_hf_trainer_clean():
    return hf_trainer(False)


def case_hf_trainer_leak():
    return hf_trainer(True)


# --- an inference server ------------------------------------------------------------

def server(evict):
    # 60 batches of requests, sizes 1..32 (random.Random(7)), under
    # torch.inference_mode(); each request's response is out[i], a view of its
    # batch's output (bs x 512 fp32, LINE sforward), stored in a dict keyed by
    # request id. evict=True: entries older than the last 96 requests are
    # evicted, so a batch's output block is freed once all its requests are:
    # bounded, NOT a leak (the blocks held at the end: NOTE). evict=False: the
    # dict keeps every response: all 60 output blocks held, a leak.
    import random
    rng = random.Random(7)
    model = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512)).cuda()
    model.eval()
    start()
    cache = {}
    order = []
    rid = 0
    with torch.inference_mode():
        for b in range(60):
            bs = rng.randint(1, 32)
            x = torch.randn(bs, 512, device="cuda")  # LINE sbatch
            out = model(x)  # LINE sforward
            for i in range(bs):
                cache[rid] = out[i]
                order.append(rid)
                rid += 1
            if evict:
                while len(order) > 96:
                    del cache[order.pop(0)]  # LINE sevict
            torch.cuda.synchronize()
    note("requests", rid, "cached", len(cache), "holding", *held(cache.values()))
    return cache


def case_server_bounded():
    return server(True)


def case_server_leak():
    return server(False)


def case_state_server_leak():
    return server(False)


def case_alloc_server_bounded():
    return server(True)


def case_legacy_server_leak():
    return server(False)


def case_legacy_ctx_server_leak():
    return server(False)


# --- cudnn.benchmark ----------------------------------------------------------------

def case_cudnn_bench_clean():
    # cudnn.benchmark=True; a small conv net trained 40 SGD steps on batches of
    # 8 images whose size is drawn from 4 shapes (random.Random(11)): each new
    # shape autotunes (workspaces tried, then freed; the chosen algorithms'
    # workspaces cached). Nothing kept across steps: NOT a leak.
    import random
    torch.backends.cudnn.benchmark = True
    rng = random.Random(11)
    shapes = [(32, 32), (48, 48), (64, 64), (40, 56)]
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    start()
    seen = set()
    for step in range(40):
        h, w = rng.choice(shapes)
        seen.add((h, w))
        x = torch.randn(8, 3, h, w, device="cuda")  # LINE cudnn_batch
        y = torch.randint(0, 10, (8,), device="cuda")
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    note("shapes", len(seen))
    return model


CASES = ["varlen_clean", "varlen_leak", "compile_dyn_clean", "compile_dyn_leak",
         "hf_trainer_clean", "hf_trainer_leak", "server_bounded", "server_leak",
         "cudnn_bench_clean", "state_server_leak", "state_varlen_clean",
         "alloc_server_bounded", "all_varlen_leak", "legacy_server_leak",
         "legacy_ctx_server_leak"]

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] in CASES and os.environ.get("S39_CHILD"):
        import torch, torch.nn as nn, torch.nn.functional as F
        torch.manual_seed(0)
        CASE = sys.argv[2]
        keep = globals()["case_" + CASE]()
        torch.cuda.synchronize()
        path = os.path.join(sys.argv[1], CASE + ".pickle")
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)
        print("wrote", path, os.path.getsize(path), flush=True)
        sys.exit(0)
    import platform, torch
    from concurrent.futures import ThreadPoolExecutor
    print("python", platform.python_version(), "torch", torch.__version__, torch.cuda.get_device_name(0), flush=True)
    env = dict(os.environ, S39_CHILD="1")
    par = int(os.environ.get("PAR", "5"))

    def one(c):
        r = subprocess.run([sys.executable, __file__, sys.argv[1], c], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return c, r.returncode, r.stdout

    with ThreadPoolExecutor(par) as ex:
        for c, rc, out in ex.map(one, sys.argv[2:] or CASES):
            print("CASE", c, "rc", rc, flush=True)
            print(out[-3000:] if rc else "\n".join(l for l in out.splitlines() if l.startswith(("NOTE", "wrote"))), flush=True)
