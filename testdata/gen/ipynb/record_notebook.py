"""Runs notebook cells in IPython, as a Jupyter kernel does, and writes the
notebook (.ipynb, nbformat 4) with each cell's outputs: stdout as a "stream"
output, an exception as an "error" output whose "traceback" is the list of
ANSI-coloured strings IPython's ultratb makes (what ipykernel's
ZMQInteractiveShell._showtraceback sends, and Jupyter saves).

Usage: python3 record_notebook.py OUT.ipynb CELLS.py
CELLS.py holds the cells, each starting with a line "# %%".
Needs IPython (Debian's python3-ipython 8.5.0 and its dependencies, unpacked
onto PYTHONPATH) and, for a CUDA OOM, PyTorch and a GPU.
"""
import io
import json
import sys
from contextlib import redirect_stdout

from IPython.core.interactiveshell import InteractiveShell

out_path, cells_path = sys.argv[1], sys.argv[2]
cells = [c.strip("\n") for c in open(cells_path).read().split("# %%\n") if c.strip()]


class Shell(InteractiveShell):
    """InteractiveShell whose tracebacks are kept, as ipykernel's are."""

    error = None

    def _showtraceback(self, etype, evalue, stb):
        Shell.error = {"output_type": "error", "ename": str(etype.__name__), "evalue": str(evalue), "traceback": stb}


shell = Shell.instance(colors="Linux")
nb_cells = []
for n, src in enumerate(cells, 1):
    Shell.error = None
    buf = io.StringIO()
    with redirect_stdout(buf):
        shell.run_cell(src, store_history=True)
    outputs = []
    if buf.getvalue():
        outputs.append({"output_type": "stream", "name": "stdout", "text": buf.getvalue().splitlines(keepends=True)})
    if Shell.error:
        outputs.append(Shell.error)
    nb_cells.append({"cell_type": "code", "execution_count": n, "id": "cell%d" % n, "metadata": {},
                     "outputs": outputs, "source": src.splitlines(keepends=True)})
    if Shell.error:
        break  # "Run All" stops at the first error

nb = {"cells": nb_cells,
      "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python", "version": sys.version.split()[0]}},
      "nbformat": 4, "nbformat_minor": 5}
with open(out_path, "w") as f:
    json.dump(nb, f, indent=1, ensure_ascii=True)
    f.write("\n")
