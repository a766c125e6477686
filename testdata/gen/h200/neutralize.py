#!/usr/bin/env python3
"""Rewrite machine-specific paths in recorded files to neutral ones: this folder (where the
scripts ran) -> /home/user/train, the Python environment (sys.prefix, when it is a venv)
-> /opt/venv. Pickles are loaded and dumped again with the protocol they had (string
lengths are part of the format); data-only snapshot pickles, so loading runs nothing.
Usage: neutralize.py SRC_DIR FILE...   (rewrites in place)
"""
import gzip, os, pickle, sys

src = os.path.realpath(sys.argv[1])
SUBS = [(src, "/home/user/train"), (os.path.abspath(sys.argv[1]), "/home/user/train")]
if sys.prefix != sys.base_prefix:
    SUBS += [(sys.prefix, "/opt/venv"), (os.path.realpath(sys.prefix), "/opt/venv")]


def fix(s):
    for a, b in SUBS:
        s = s.replace(a, b)
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
    elif isinstance(o, tuple):
        return tuple(walk(v, seen) for v in o)
    elif isinstance(o, str):
        return fix(o)
    return o


for path in sys.argv[2:]:
    try:
        gz = path.endswith(".gz")
        raw = (gzip.open if gz else open)(path, "rb").read()
        if path.endswith((".pickle", ".pickle.gz")):
            proto = raw[1] if raw[0] == 0x80 else 0
            out = pickle.dumps(walk(pickle.loads(raw), set()), protocol=proto)
        else:
            out = fix(raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if out != raw:
            with (gzip.open if gz else open)(path, "wb") as f:
                f.write(out)
        print(path, len(raw), "->", len(out))
    except Exception as e:
        print("neutralize failed", path, repr(e))
