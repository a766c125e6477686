package pytorchtext

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// A Jupyter notebook saved with an OOM in an error output: its traceback
// is IPython's list of ANSI-coloured strings (testdata/README.md says how
// the two notebooks were made from the real pastes beside them). Read as
// text lines (before notebook.go) the escaped strings hid the frames: the
// OOM came without where it was asked (TestIPythonOldTraceback's 10
// frames), and the message twice (the output's "evalue" and the
// traceback's last string). Now: the same message and frames as the
// plain paste, once, on the line of the traceback's last string.
func TestNotebookErrorTraceback(t *testing.T) {
	for _, c := range []struct {
		notebook, paste string
		line            int64
	}{
		{"pastes/jupyter_ipynb_ipykernel7_kaggle.ipynb", "pastes/jupyter_ipykernel_old_tb_kaggle.txt", 26},
		{"pastes/jupyter_ipynb_ipython8_replica.ipynb", "pastes/jupyter_ipython8_replica_alloc_conf.txt", 23},
	} {
		nb, txt := readFile(t, c.notebook, false), readFile(t, c.paste, false)
		if len(nb.msgs) != 1 || len(txt.msgs) != 1 {
			t.Fatalf("%s: %d messages, the paste %d", c.notebook, len(nb.msgs), len(txt.msgs))
		}
		m, want := nb.msgs[0], txt.msgs[0]
		if m.line != c.line || m.gen != want.gen || m.exception != want.exception || !reflect.DeepEqual(m.sizes, want.sizes) || m.text != want.text {
			t.Errorf("%s: %+v\nwant as the paste's %+v", c.notebook, m, want)
		}
		if f := nb.frames[m.id]; len(f) == 0 || !reflect.DeepEqual(f, txt.frames[want.id]) {
			t.Errorf("%s: frames %+v\nwant %+v", c.notebook, f, txt.frames[want.id])
		}
		if nb.meta.Warnings.Len() != 0 {
			t.Errorf("%s: warnings %v", c.notebook, nb.meta.Warnings.Strings())
		}
	}
	// A notebook IPython 8.5 itself wrote (gen/ipynb/record_notebook.py):
	// its ultratb colours every token of the source lines and marks the
	// failing expression; the message is oom_error.txt's. The frames are
	// the three cells', innermost first; the message is on line 62.
	nb, txt := readFile(t, "pastes/jupyter_ipynb_ipython85_recorded.ipynb", false), readFile(t, "oom_error.txt", false)
	if len(nb.msgs) != 1 || nb.msgs[0].line != 62 || nb.msgs[0].exception != "OutOfMemoryError" || !reflect.DeepEqual(nb.msgs[0].sizes, txt.msgs[0].sizes) {
		t.Fatalf("%+v", nb.msgs)
	}
	if f := nb.frames[nb.msgs[0].id]; !reflect.DeepEqual(f, []tbFrame{{"Cell In [1]", 12, "allocate"}, {"Cell In [2]", 4, "grow"}, {"Cell In [3]", 3, "<module>"}}) {
		t.Errorf("frames %+v", f)
	}
}

// notebookOf writes a notebook (nbformat 4, one string a line as Jupyter
// saves it) of the given cells.
func notebookOf(cells ...string) string {
	return "{\n \"cells\": [\n" + strings.Join(cells, ",\n") + "\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
}

const nbOOM = `CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 15.44 MiB free; 6.62 GiB reserved in total by PyTorch)`

// What a notebook showed is read, what it ran is not: a stream's text
// joined across its strings (a print(end="") goes on in the next string),
// a markdown cell quoting the error, a result's text/plain; not a code
// cell's source that names the message (a string in the code), nor an
// error's "evalue" beside its traceback. An error output without a
// traceback (some front ends save none) gives "ename: evalue". Lines are
// the JSON lines their strings are on.
func TestNotebookOutputs(t *testing.T) {
	text := notebookOf(
		// line 3
		`  {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [
    {"name": "stdout", "output_type": "stream", "text": [
     "step 1\n",
     "RuntimeError: ",
     "`+nbOOM+`\n"
    ]}
   ],
   "source": ["msg = \"RuntimeError: `+nbOOM+`\"\n", "print(msg)"]}`,
		// line 11
		`  {"cell_type": "markdown", "metadata": {}, "source": [
    "The run stopped with:\n",
    "\n",
    "    torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 1.25 MiB is free. Of the allocated memory 38.10 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but unallocated.\n"
   ]}`,
		// line 16
		`  {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [
    {"ename": "OutOfMemoryError", "evalue": "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 1 has a total capacity of 79.11 GiB of which 512.00 MiB is free. Of the allocated memory 77.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.", "output_type": "error", "traceback": []}
   ],
   "source": ["train()"]}`)
	rs, err := readText(t, "nb.ipynb", text, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rs.msgs {
		got = append(got, fmt.Sprintf("%s@%d %s", m.gen, m.line, m.exception))
	}
	// The stream's message starts in its string on line 6 ("RuntimeError: ").
	want := []string{"1.x@6 RuntimeError", "2.x@14 torch.OutOfMemoryError", "2.x@17 OutOfMemoryError"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages %v, want %v", got, want)
	}
	if rs.meta.Warnings.Len() != 0 {
		t.Errorf("warnings %v", rs.meta.Warnings.Strings())
	}
}

// Notebooks saved otherwise: Colab writes "nbformat" first; a tool may
// write the JSON on one line (every position then line 1); a notebook cut
// short (a download that stopped) gives what came before the cut, and a
// warning that names where the JSON breaks off: not a partial read shown
// as whole.
func TestNotebookForms(t *testing.T) {
	tb := `["\u001b[0;31m---------------------------------------------------------------------------\u001b[0m", "\u001b[0;31mOutOfMemoryError\u001b[0m                          Traceback (most recent call last)", "Cell \u001b[0;32mIn[4], line 2\u001b[0m\n\u001b[1;32m      1\u001b[0m x = torch.randn(8, device=\"cuda\")\n\u001b[0;32m----> 2\u001b[0m y = big(x)\n", "Cell \u001b[0;32mIn[3], line 5\u001b[0m, in \u001b[0;36mbig\u001b[0;34m(x)\u001b[0m\n\u001b[0;32m----> 5\u001b[0m     return x.new_empty(1 << 40)\n", "\u001b[0;31mOutOfMemoryError\u001b[0m: ` + nbOOM + `"]`
	colab := `{"nbformat": 4, "nbformat_minor": 0, "metadata": {"colab": {"provenance": []}}, "cells": [{"cell_type": "code", "source": ["y = big(x)"], "metadata": {"id": "a1"}, "execution_count": 4, "outputs": [{"output_type": "error", "ename": "OutOfMemoryError", "evalue": "x", "traceback": ` + tb + `}]}]}`
	rs, err := readText(t, "colab.ipynb", colab, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 || rs.msgs[0].line != 1 || rs.msgs[0].exception != "OutOfMemoryError" {
		t.Fatalf("%+v", rs.msgs)
	}
	if f := rs.frames[rs.msgs[0].id]; !reflect.DeepEqual(f, []tbFrame{{"Cell In[3]", 5, "big"}, {"Cell In[4]", 2, "<module>"}}) {
		t.Errorf("frames %+v", f)
	}
	// Cut inside the traceback's last string: the frames before it are
	// read, no message (it was cut away), and a warning at the cut.
	cut := notebookOf(`  {"cell_type": "code", "metadata": {}, "outputs": [
    {"name": "stdout", "output_type": "stream", "text": ["RuntimeError: ` + nbOOM + `\n"]},
    {"output_type": "error", "ename": "OutOfMemoryError", "evalue": "x", "traceback": ` + tb + `}]}`)
	cut = cut[:strings.LastIndex(cut, `: CUDA out of memory. Tried`)+12]
	rs, err = readText(t, "cut.ipynb", cut, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 || rs.msgs[0].line != 4 {
		t.Errorf("messages %+v", rs.msgs)
	}
	if w := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 5: the notebook's JSON breaks off here") {
		t.Errorf("warnings %q", w)
	}
}

// SniffNotebook knows a notebook by its first key and its cells; a
// memory_stats() dict, a profiler trace, a JSON log are none, and a
// notebook that printed memory_stats() as JSON is not taken for the dict.
func TestSniffNotebook(t *testing.T) {
	for _, c := range []struct {
		head string
		want bool
	}{
		{notebookOf(`  {"cell_type": "code", "metadata": {}, "outputs": [], "source": []}`), true},
		{`{"nbformat": 4, "nbformat_minor": 0, "metadata": {}, "cells": []}`, true},
		{"\ufeff{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\"", true},
		{`{"metadata": {"kernelspec": {}}, "nbformat": 4}`, true},
		{`{"active.all.allocated": 3, "allocated_bytes.all.current": 1024}`, false},
		{`{"traceEvents": [], "cells": 3}`, false},
		{`{"cells": 3, "level": "info"}`, false},
		{`[{"cell_type": "code"}]`, false},
	} {
		if got := SniffNotebook([]byte(c.head)); got != c.want {
			t.Errorf("SniffNotebook(%.40q) = %v", c.head, got)
		}
	}
	stats := notebookOf(`  {"cell_type": "code", "metadata": {}, "outputs": [{"name": "stdout", "output_type": "stream", "text": ["{\"active.all.allocated\": 3, \"allocated_bytes.all.current\": 1024}\n"]}], "source": []}`)
	if SniffStats([]byte(stats)) {
		t.Error("a notebook that printed memory_stats() taken for memory_stats() JSON")
	}
	b, err := os.ReadFile(dir + "memory_stats.json")
	if err != nil {
		t.Fatal(err)
	}
	if SniffNotebook(b) || !SniffStats(b) {
		t.Error("memory_stats.json")
	}
}

// A notebook whose JSON nests deeper than any notebook (brackets alone,
// millions deep) is refused at the bound, at its line, with what came
// before it read, rather than read level by level into memory (5 million
// levels took 800 MB).
func TestNotebookNestingBounded(t *testing.T) {
	n := 5_000_000
	s := "{\"cells\": [{\"cell_type\": \"code\", \"outputs\": [{\"output_type\": \"stream\", \"name\": \"stderr\", \"text\": \"torch.OutOfMemoryError: CUDA out of memory.\"},\n{\"output_type\": \"stream\", \"text\": " + strings.Repeat("[", n) + strings.Repeat("]", n) + "}]}]}"
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	lines, _, err := notebookLines(strings.NewReader(s))
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "line 2: the notebook's JSON nests deeper than") {
		t.Errorf("error %v, want the nesting bound at line 2", err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0].text, "CUDA out of memory") {
		t.Errorf("lines %+v, want the output before the nesting", lines)
	}
	if mb := (m1.TotalAlloc - m0.TotalAlloc) >> 20; mb > 200 {
		t.Errorf("%d MB allocated for a %d MB file", mb, len(s)>>20)
	}
}
