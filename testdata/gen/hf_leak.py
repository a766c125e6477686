# A transformers model (built from a config; nothing downloaded) trained a few steps;
# every 3rd step's outputs (with the graph) are kept in a list: a leak whose frames run
# through site-packages/transformers before reaching the user's code.
import os, pickle, time, torch
from transformers import GPT2Config, GPT2LMHeadModel
OUT = os.environ.get("FIXOUT", "/tmp/fix")

def make_model():
    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=256, vocab_size=1000, n_positions=128)
    return GPT2LMHeadModel(cfg).cuda()

def train(model, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    history = []
    for step in range(steps):
        ids = torch.randint(0, 1000, (8, 128), device="cuda")
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step(); opt.zero_grad(set_to_none=True)
        if step % 3 == 0:
            history.append(out.logits)   # leak: logits kept every 3rd step
        time.sleep(0.02)
    return history

torch.cuda.memory._record_memory_history(max_entries=200000)
model = make_model()
h = train(model, 45)
with open(os.path.join(OUT, "hf_gpt2_leak.pickle"), "wb") as f:
    pickle.dump(torch.cuda.memory._snapshot(), f)
torch.cuda.memory._record_memory_history(enabled=None)
print("hf done", len(h))
