#!/usr/bin/env python3
"""Write a pickle that spends the decoder's whole string budget, to measure its cost.

Usage: string_budget.py OUT.pickle.gz

The pickle is a dict of four str values of 256 MiB less 16 bytes: 1 GiB of strings,
keys included, the most parse/pickle's default Limits allow (MaxStringBytes). It is not a
snapshot, so gpuleak reads every string and then refuses it (exit 2); its peak memory is
what the string budget costs:

    /usr/bin/time -v gpuleak analyze OUT.pickle.gz   # "Maximum resident set size"

The gzip is about 1 MB. Only the Python standard library is used.
"""
import gzip, struct, sys

with gzip.open(sys.argv[1], "wb") as f:
    f.write(b"\x80\x02}(")  # PROTO 2, EMPTY_DICT, MARK
    for key in b"abcd":
        f.write(b"X\x01\x00\x00\x00" + bytes([key]))  # BINUNICODE key
        f.write(b"X" + struct.pack("<I", (256 << 20) - 16))  # BINUNICODE value
        for _ in range(255):
            f.write(b"a" * (1 << 20))
        f.write(b"a" * ((1 << 20) - 16))
    f.write(b"u.")  # SETITEMS, STOP
