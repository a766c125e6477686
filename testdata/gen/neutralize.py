#!/usr/bin/env python3
"""Rewrite machine-specific paths in generated artifacts to neutral ones, as
the shared fixtures did: the checkout's testdata/gen -> /home/user/train,
the device's virtualenv -> /opt/venv. Pickles are loaded and dumped again
(string lengths are part of the format) with the protocol they had, gzip
kept; data-only pickles, so loading them runs nothing.
Usage: neutralize.py FILE...   (rewrites in place)
"""
import gzip, pickle, re, sys

SUBS = [(re.compile(r"/(work|tmp)/[^ \"']*?/testdata/gen"), "/home/user/train"),
        (re.compile(r"/opt/torch/\.venv"), "/opt/venv")]

def fix(s):
    for pat, rep in SUBS:
        s = pat.sub(rep, s)
    return s

def walk(o, seen):
    if id(o) in seen:
        return o
    seen.add(id(o))
    if isinstance(o, dict):
        for k in list(o):
            o[k] = walk(o[k], seen)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            o[i] = walk(v, seen)
    elif isinstance(o, str):
        return fix(o)
    return o

for path in sys.argv[1:]:
    gz = path.endswith(".gz")
    raw = (gzip.open if gz else open)(path, "rb").read()
    if path.endswith((".pickle", ".pickle.gz")):
        proto = raw[1] if raw[0] == 0x80 else 0
        obj = walk(pickle.loads(raw), set())
        out = pickle.dumps(obj, protocol=proto)
    else:
        out = fix(raw.decode()).encode()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(out)
    print(path, len(raw), "->", len(out))
