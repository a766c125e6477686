#!/usr/bin/env python3
"""Write vectors.json: objects pickled by CPython's pickle module with every
protocol (0-5), each with the object's canonical form, or the first refused
opcode when the pickle needs code (bytes before protocol 3, sets before 4).

Canonical form: null, true/false, {"int": "decimal"}, {"float": repr},
{"str": s}, {"bytes": hex}, {"list": [...]}, {"tuple": [...]},
{"dict": [[k, v], ...]} in insertion order, {"set": [...]} and
{"frozenset": [...]} in iteration order (the order the pickler wrote).
Run: python3 gen_vectors.py > vectors.json
"""
import base64, json, pickle, pickletools, sys

CODE = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX",
        "BUILD", "PERSID", "BINPERSID", "EXT1", "EXT2", "EXT4"}

def canon(o):
    if o is None: return None
    if o is True or o is False: return o
    if isinstance(o, int): return {"int": str(o)}
    if isinstance(o, float): return {"float": repr(o)}
    if isinstance(o, str): return {"str": o}
    if isinstance(o, (bytes, bytearray)): return {"bytes": bytes(o).hex()}
    if isinstance(o, list): return {"list": [canon(x) for x in o]}
    if isinstance(o, tuple): return {"tuple": [canon(x) for x in o]}
    if isinstance(o, dict): return {"dict": [[canon(k), canon(v)] for k, v in o.items()]}
    if isinstance(o, frozenset): return {"frozenset": [canon(x) for x in o]}
    if isinstance(o, set): return {"set": [canon(x) for x in o]}
    raise TypeError(type(o))

shared = [1, "two"]
objects = {
    "none": None, "true": True, "false": False,
    "ints": [0, 1, -1, 255, 256, 65535, 65536, -2**31, 2**31 - 1, 2**31, 2**63 - 1, 2**63,
             2**64 - 1, 2**64, -2**63, -2**63 - 1, 140264538636288, 1796025986818471],
    "bigints": [2**200, -(2**100), 10**40],
    "floats": [0.0, -0.0, 1.5, -2.25, 1e308, 5e-324, float("inf"), float("-inf")],
    "strs": ["", "abc", "h\u00e9llo \u2713", "tab\tnl\nquote'\"back\\slash", "\U0001F600"],
    "bytes": [b"", b"\x00\xff", b"abc"],
    "bytearray": bytearray(b"ab\x00"),
    "containers": [[], [1, 2, 3], (), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), {}, {"a": 1}],
    "big_list": list(range(1100)),
    "big_dict": {i: str(i) for i in range(1100)},
    "sets": [set(), {1, 2, 3}, frozenset({4})],
    "shared": [shared, shared, {"k": shared, "t": (shared, shared)}],
    "snapshot_like": {"segments": [{"device": 0, "address": 140264538636288, "segment_pool_id": (0, 0),
                                    "blocks": [{"size": 2097152, "state": "active_allocated",
                                                "frames": [{"filename": "a.py", "line": 1, "name": "f"}]}]}],
                      "device_traces": [[{"action": "alloc", "addr": 1, "size": 2, "time_us": 3}]]},
}

out = []
for name, obj in objects.items():
    for proto in range(0, 6):
        data = pickle.dumps(obj, protocol=proto)
        refused = None
        for op, arg, pos in pickletools.genops(data):
            if op.name in CODE:
                refused = op.name
                break
        out.append({"name": name, "protocol": proto, "pickle": base64.b64encode(data).decode(),
                    "expect": None if refused else canon(obj), "refused": refused})
json.dump({"python": sys.version.split()[0], "vectors": out}, sys.stdout, indent=0)
