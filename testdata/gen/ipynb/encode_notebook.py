"""Writes a Jupyter notebook (.ipynb, nbformat 4) whose one code cell ends in
an error output holding a traceback as Jupyter saves it: IPython's list of
strings, one a frame, ANSI-coloured as ultratb colours them. The traceback is
taken from a real one as Jupyter printed it (plain text: the rule of dashes,
the title, frames separated by blank lines, then "Name: message", which may
go on over several lines).

Usage: python3 encode_notebook.py STYLE TRACEBACK.txt OUT.ipynb [ENAME]
STYLE is "7" (IPython 7 and ipykernel on Kaggle and Colab: "PATH in
FUNC(ARGS)" headers, "---> N" arrows) or "8" (IPython 8: "File PATH:LINE, in
FUNC(ARGS)", "Cell In[N], line L"). The colours are those of real notebooks
of each (IPython 7: a Colab notebook with a RuntimeError; IPython 8: notebooks
with "Cell In[29], line 13" and "File c:\\...\\image.py:386, in ..."
headers), the source lines left uncoloured inside them. A paste that starts
at its first frame (the rule and title cut off) is given them back from
ENAME, the exception's name, as IPython prints them.
"""
import json
import re
import sys

R, G, LG, C, B, N = "\x1b[0;31m", "\x1b[0;32m", "\x1b[1;32m", "\x1b[0;36m", "\x1b[0;34m", "\x1b[0m"

style, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(src).read().split("\n")
if len(sys.argv) > 4:
    lines = ["-" * 75, sys.argv[4].ljust(42) + "Traceback (most recent call last)"] + lines
while lines and not lines[0].startswith("-----"):
    lines.pop(0)  # what came before the traceback in the paste
rule, title = lines[0], lines[1]
ename = title.split()[0]
body = lines[2:]
# Frames are blocks separated by blank lines; the exception starts at the
# first line "ename: ".
frames, cur, i = [], [], 0
while i < len(body):
    l = body[i]
    if l.startswith(ename + ": ") and not cur:
        break
    if l.strip() == "":
        if cur:
            frames.append(cur)
        cur = []
    else:
        cur.append(l)
    i += 1
if cur:
    frames.append(cur)
exc = "\n".join(body[i:]).rstrip("\n")


def header(h):
    if style == "7":
        m = re.match(r"^(.*?) in (<[^>]*>|[^\s(]+)(\(.*\))$", h)
        return G + m.group(1) + N + " in " + C + m.group(2) + B + m.group(3) + N
    m = re.match(r"^Cell (In ?\[\d*\], line \d+)(?:, in (\S+?)(\(.*\)))?$", h)
    if m:
        s = "Cell " + G + m.group(1) + N
        if m.group(2):
            s += ", in " + C + m.group(2) + B + m.group(3) + N
        return s
    m = re.match(r"^File (.*?), in (\S+?)(\(.*\))$", h)
    return "File " + LG + m.group(1) + N + ", in " + C + m.group(2) + LG.replace("32", "34") + m.group(3) + N


def source(l):
    m = re.match(r"^(-*> ?\d+|\s*\d+)(.*)$", l)
    if not m:
        return l
    num, code = m.groups()
    if ">" in num:
        return (G + num + R if style == "7" else LG + num + N) + code
    return (LG if style == "7" else G) + num + N + code


stb = [R + rule + N, R + ename + N + title[len(ename):]]
for f in frames:
    stb.append("\n".join([header(f[0])] + [source(l) for l in f[1:]]) + "\n")
msg = exc[len(ename) + 2:]
stb.append(R + ename + N + ": " + msg)
cell_src = [re.sub(r"^(-*> ?)?\s*\d+ ?", "", l) for l in frames[0][1:]]
nb = {
    "cells": [{
        "cell_type": "code", "execution_count": 6, "id": "oom-cell", "metadata": {},
        "outputs": [{"ename": ename, "evalue": msg, "output_type": "error", "traceback": stb}],
        "source": [l + "\n" for l in cell_src[:-1]] + cell_src[-1:],
    }],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 4,
}
with open(out, "w") as fh:
    json.dump(nb, fh, indent=1, ensure_ascii=True)
    fh.write("\n")
