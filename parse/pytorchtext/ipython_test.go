package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// IPython's tracebacks (Jupyter, Colab, Kaggle) have no "Traceback (most
// recent call last):" line and no `File "...", line N` frames: before
// ipython.go the OOM was read but where it was asked was not. A Kaggle
// notebook's (ipykernel, IPython 7's "PATH in FUNC(ARGS)" headers with the
// line on the "---> N" arrow, fastai's frames between; some of its
// repeated frames trimmed in the kept paste) gives its 10 frames, innermost
// first as the table keeps them, the outermost the notebook's cell
// (/tmp/ipykernel_56/...).
func TestIPythonOldTraceback(t *testing.T) {
	rs := readFile(t, "pastes/jupyter_ipykernel_old_tb_kaggle.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages", len(rs.msgs))
	}
	f := rs.frames[rs.msgs[0].id]
	if len(f) != 10 {
		t.Fatalf("frames %+v", f)
	}
	if f[9] != (tbFrame{"/tmp/ipykernel_56/2211991504.py", 43, "<module>"}) ||
		f[0] != (tbFrame{"/usr/local/lib/python3.11/dist-packages/torch/nn/functional.py", 2822, "batch_norm"}) ||
		f[2] != (tbFrame{"/tmp/ipykernel_56/350219730.py", 350, "forward"}) {
		t.Errorf("frames %+v", f)
	}
}

// IPython 8's headers: "File PATH:LINE, in FUNC(ARGS)" and "Cell In[N],
// line L, in FUNC(ARGS)" (from a notebook's DataParallel traceback in a
// public repository, search tool find_string id 58363113912; this test
// ends it with the CUDA message its inner traceback ends with, the
// "Caught OutOfMemoryError in replica" block left out). Source lines and
// "[... skipping hidden 1 frame]" go on; the message ends it.
func TestIPython8Traceback(t *testing.T) {
	b, err := os.ReadFile(dir + "pastes/jupyter_ipython8_replica_alloc_conf.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, "OutOfMemoryError: Caught"), strings.Index(text, "torch.OutOfMemoryError: CUDA")
	text = "---------------------------------------------------------------------------\nOutOfMemoryError                          Traceback (most recent call last)\n" +
		strings.Replace(text[:i], "\nFile /opt/conda/lib/python3.10/site-packages/torch/nn/parallel/data_parallel.py:197", "\n[... skipping hidden 1 frame]\n\nFile /opt/conda/lib/python3.10/site-packages/torch/nn/parallel/data_parallel.py:197", 1) + text[j:]
	rs, err := readText(t, "ipython8", text, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages", len(rs.msgs))
	}
	f := rs.frames[rs.msgs[0].id]
	if len(f) != 7 || f[6] != (tbFrame{"Cell In[13]", 105, "extract_embeddings"}) ||
		f[5] != (tbFrame{"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", 1776, "Module._wrapped_call_impl"}) ||
		f[0] != (tbFrame{"/opt/conda/lib/python3.10/site-packages/torch/_utils.py", 775, "ExceptionWrapper.reraise"}) {
		t.Errorf("frames %+v", f)
	}
	// The title alone is no traceback of Python's: prose naming it starts none.
	if _, ok := ipythonTitleAt("See the Traceback (most recent call last) above"); ok {
		t.Error("prose read as an IPython title")
	}
}

// IPython 7.3x's "Input In [N], in <cell line: L>()" and older IPython's
// "<ipython-input-N-HASH> in <module>()" headers (the forms ultratb
// prints, written here around a real 1.x message): the line is the
// arrow's.
func TestIPythonInputHeaders(t *testing.T) {
	const text = `---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Input In [5], in <cell line: 3>()
      1 x = torch.randn(8, 3, 224, 224, device='cuda')
----> 3 y = model(x)

<ipython-input-7-2f6a1c0e9b3d> in forward(self, x)
     10     def forward(self, x):
---> 11         return self.net(x)

RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)
`
	rs, err := readText(t, "ipython7", text, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages", len(rs.msgs))
	}
	f := rs.frames[rs.msgs[0].id]
	if len(f) != 2 || f[1] != (tbFrame{"Input In [5]", 3, "<module>"}) || f[0] != (tbFrame{"<ipython-input-7-2f6a1c0e9b3d>", 11, "forward"}) {
		t.Errorf("frames %+v", f)
	}
}

// An IPython traceback pasted from its middle, without its title line (a
// notebook's output kept as text, session 41): the frame header
// "/tmp/ipykernel_12/1081115243.py in _get_flat_unfold(stack_cpu)" and
// its "---> 72" arrow give the frame where the 7178.44 GiB was asked
// (before: none, "where it was asked is not known"); the arrow line of
// the cell's frame above it, whose header was cut, gives nothing. Prose
// with the words of a header does not start one.
func TestIPythonFromTheMiddle(t *testing.T) {
	rs := readFile(t, "pastes/pt2.3_ipykernel_7178GiB_flat_unfold_notebook.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 12 {
		t.Fatalf("%+v", rs.msgs)
	}
	f := rs.frames[rs.msgs[0].id]
	if len(f) != 1 || f[0] != (tbFrame{"/tmp/ipykernel_12/1081115243.py", 72, "_get_flat_unfold"}) {
		t.Errorf("frames %+v", f)
	}
	for line, want := range map[string]bool{
		"/usr/lib/python3/dist-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)":                       true,
		"> <ipython-input-5-9a1c> in <module>()":                                                                                true,
		"File ~/venv/lib/python3.11/site-packages/torch/nn/modules/module.py:1501, in Module._call_impl(self, *args, **kwargs)": true,
		"Cell In[12], line 3":                       true,
		"I see the error in model.py in forward(x)": false,
		"the crash is in train.py in main()":        false,
		`File "/x/train.py", line 3, in main`:       false,
		"Memory summary in forward(x) after step 3": false,
	} {
		if _, ok := ipythonFrameStart(line); ok != want {
			t.Errorf("%q: a frame header %v, want %v", line, ok, want)
		}
	}
}
