#!/usr/bin/env python3
"""Re-pickle a snapshot with other protocols, and gzip it, for the test that
every encoding of one snapshot gives the same report. Loading runs nothing:
snapshots are data-only pickles. Usage: repickle.py SRC OUTPREFIX PROTO...
Writes OUTPREFIX.pN.pickle for each protocol N and OUTPREFIX.pickle.gz."""
import gzip, pickle, shutil, sys
src, prefix, protos = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
obj = pickle.load(open(src, "rb"))
for p in protos:
    with open(f"{prefix}.p{p}.pickle", "wb") as f:
        pickle.dump(obj, f, protocol=p)
with open(src, "rb") as f, gzip.open(f"{prefix}.pickle.gz", "wb") as g:
    shutil.copyfileobj(f, g)
