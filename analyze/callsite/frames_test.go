package callsite

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestFrameClasses: the one helper that tells user code from the
// framework, the interpreter and generated code, on Linux, macOS and
// Windows paths and for stacks="all" C frames.
func TestFrameClasses(t *testing.T) {
	cases := []struct {
		fr   Frame
		want Class
	}{
		{Frame{Filename: `D:\Dev\proj\.venv\Lib\site-packages\torch\functional.py`, Line: 373, Name: "einsum"}, Framework},
		{Frame{Filename: `C:\research\DeComFL\.venv\lib\site-packages\torch\nn\modules\module.py`, Line: 1357, Name: "convert"}, Framework},
		{Frame{Filename: `C:\Users\u\AppData\Local\Programs\Python\Python311\Lib\threading.py`, Line: 1045, Name: "_bootstrap_inner"}, Interpreter},
		// uv's Python on Windows (field snapshot ZidongLiu__memory.pickle,
		// whose iterations were anchored at copy.deepcopy), and on Linux.
		{Frame{Filename: `C:\Users\Zidong\AppData\Roaming\uv\python\cpython-3.10.19-windows-x86_64-none\lib\copy.py`, Line: 153, Name: "deepcopy"}, Interpreter},
		{Frame{Filename: "/home/u/.local/share/uv/python/cpython-3.12.7-linux-x86_64-gnu/lib/python3.12/copy.py", Line: 153, Name: "deepcopy"}, Interpreter},
		{Frame{Filename: `C:\Users\u\AppData\Roaming\uv\python\cpython-3.10.19-windows-x86_64-none\lib\site-packages\mylib\train.py`, Line: 9, Name: "step"}, User},
		{Frame{Filename: "", Line: 0, Name: "cfunction_call"}, Interpreter},
		{Frame{Filename: "", Line: 0, Name: "method_vectorcall"}, Interpreter},
		{Frame{Filename: "", Line: 0, Name: "slot_tp_call"}, Interpreter},
		{Frame{Filename: "/usr/local/src/conda/python-3.10.16/Include/cpython/abstract.h", Line: 114, Name: "vectorcall_maybe.constprop.0"}, Interpreter},
		{Frame{Filename: "/usr/local/src/conda/python-3.10.14/Include/internal/pycore_ceval.h", Line: 46, Name: "_PyEval_EvalFrame"}, Interpreter},
		{Frame{Filename: "/usr/local/src/conda/python-3.10.14/Python/ceval.c", Line: 5471, Name: "do_call_core"}, Interpreter},
		{Frame{Filename: "/tmp/torchinductor_user/ab/cabc123.py", Line: 40, Name: "call"}, Generated},
		{Frame{Filename: `C:\Users\u\AppData\Local\Temp\torchinductor_u\xy\cxy.py`, Line: 12, Name: "call"}, Generated},
		{Frame{Filename: "/var/folders/zz/abc/T/torchinductor_me/q1/cq1.py", Line: 7, Name: "call"}, Generated},
		{Frame{Filename: "<eval_with_key>.12", Line: 5, Name: "forward"}, Generated},
		{Frame{Filename: `C:\research\DeComFL\cezo_fl\util\language_utils.py`, Line: 304, Name: "to"}, User},
		{Frame{Filename: "/tmp/ipykernel_114/3105878423.py", Line: 21, Name: "<module>"}, User},
		{Frame{Filename: "/home/u/train.py", Line: 3, Name: "builtin_step"}, User}, // a Python function, whatever its name
	}
	f := DefaultFrameFilter()
	for _, c := range cases {
		if got := ClassOf(c.fr); got != c.want {
			t.Errorf("%+v: class %d, want %d", c.fr, got, c.want)
		}
		if hidden := f.Hidden(c.fr); hidden != (c.want != User) {
			t.Errorf("%+v: hidden = %v", c.fr, hidden)
		}
	}
}

// TestModuleCall: a module call known only by name (a profiler span) is
// treated as the module.py frame a snapshot records for it: hidden, and a
// part of a step. Real module.py and autograd frames are too, on any OS;
// the program's own forward is neither.
func TestModuleCall(t *testing.T) {
	f := DefaultFrameFilter()
	for _, c := range []struct {
		fr   Frame
		want bool
	}{
		{ModuleCall("Linear_1"), true},
		{Frame{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1751, Name: "_call_impl"}, true},
		{Frame{Filename: `C:\venv\Lib\site-packages\torch\nn\modules\module.py`, Line: 1762, Name: "_call_impl"}, true},
		{Frame{Filename: "/usr/lib/python3/dist-packages/torch/autograd/__init__.py", Line: 266, Name: "backward"}, true},
		{Frame{Filename: "/home/u/model.py", Line: 12, Name: "forward"}, false},
	} {
		if got := IsModuleOrBackward(c.fr); got != c.want {
			t.Errorf("IsModuleOrBackward(%+v) = %v, want %v", c.fr, got, c.want)
		}
		if c.want && !f.Hidden(c.fr) {
			t.Errorf("%+v is not hidden", c.fr)
		}
	}
	if m := ModuleCall("Linear_1"); m.Name != "Linear_1" || m.Line != 0 {
		t.Errorf("ModuleCall = %+v", m)
	}
}

// TestIsAutogradPython: autograd's own Python files, on any OS, where its
// engine enters Python to run a backward; not module.py, not a C++ frame
// of the engine (told by name in analyze/snapshot), not the program.
func TestIsAutogradPython(t *testing.T) {
	for _, c := range []struct {
		fr   Frame
		want bool
	}{
		{Frame{Filename: "/usr/local/lib/python3.12/dist-packages/torch/autograd/function.py", Line: 317, Name: "apply"}, true},
		{Frame{Filename: `C:\venv\Lib\site-packages\torch\autograd\function.py`, Line: 317, Name: "apply"}, true},
		{Frame{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1751, Name: "_call_impl"}, false},
		{Frame{Filename: "torch/csrc/autograd/engine.cpp", Line: 1, Name: "torch::autograd::Engine::thread_main"}, false},
		{Frame{Filename: "/home/u/autograd/train.py", Line: 3, Name: "step"}, false},
	} {
		if got := IsAutogradPython(c.fr); got != c.want {
			t.Errorf("IsAutogradPython(%+v) = %v, want %v", c.fr, got, c.want)
		}
	}
}

// TestIsLibrary: installed packages' files, on any OS, and compiled
// Cython modules as their traceback frames name them (CuPy 13's OOM
// traceback, testdata/pytorch/pastes/cupy2537_oom_traceback.log): a
// relative .pyx path, and CuPy's relative paths. The program's own files,
// a notebook cell and a .pyx under an absolute path are not.
func TestIsLibrary(t *testing.T) {
	for _, c := range []struct {
		file string
		want bool
	}{
		{"/usr/lib/python3/dist-packages/numpy/core/numeric.py", true},
		{`C:\venv\Lib\site-packages\transformers\trainer.py`, true},
		{"cupy/cuda/memory.pyx", true},
		{"cupy/_core/core.pyx", true},
		{`cupy_backends\cuda\api\runtime.pyx`, true},
		{"cupy/_creation/basic.py", true},
		{"sklearn/utils/_cython_blas.pyx", true},
		{"/home/user/cupy_oom.py", false},
		{"train.py", false},
		{"/home/user/proj/fast.pyx", false},
		{"<ipython-input-3-abc>", false},
		{"cupyish/model.py", false},
	} {
		if got := IsLibrary(Frame{Filename: c.file}); got != c.want {
			t.Errorf("IsLibrary(%q) = %v, want %v", c.file, got, c.want)
		}
	}
}

// isCxxFrameworkName answers as the expression it stands for, on real
// names and on random strings of the pieces that decide a match (return
// types, namespaces, the class's characters, the kinds of white space,
// bytes outside ASCII and invalid ones).
func TestCxxFrameworkNameMatcher(t *testing.T) {
	re := regexp.MustCompile(cxxFrameworkName.String())
	check := func(s string) {
		t.Helper()
		if got, want := isCxxFrameworkName(s), re.MatchString(s); got != want {
			t.Fatalf("isCxxFrameworkName(%q) = %v, the expression says %v", s, got, want)
		}
	}
	for _, s := range []string{"", "at::", "at:", "void torch::autograd::x", "at::Tensor at::_sum_to<c10::SymInt>(...)",
		"my_op(at::Tensor const&)", "std::vector<int> std::x", "int\tstd::x", "a\t b std::x", "a\tb std::x",
		"_ c10::x", "1 at::x", "a  \n at::x", "a<b, c*>& __gnu_cxx::x", "é at::x", "a é at::x", "\xff at::x"} {
		check(s)
	}
	pieces := []string{"a", "Z", "_", "9", ":", "::", "at::", "at", "c10::", "std::", "torch", "__gnu_cxx::",
		"pybind11::", "caffe2::", " ", "\t", "\n", "\f", "\r", "\v", "<", ">", ",", "*", "&", "(", ")", "é", "\xff", "void "}
	rng := rand.New(rand.NewPCG(3, 4))
	matched := 0
	for range 200000 {
		var b strings.Builder
		for range 1 + rng.IntN(7) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		check(s)
		if re.MatchString(s) {
			matched++
		}
	}
	if matched < 10000 {
		t.Errorf("only %d random strings matched", matched)
	}
}

func FuzzCxxFrameworkName(f *testing.F) {
	re := regexp.MustCompile(cxxFrameworkName.String())
	for _, s := range []string{"void torch::x", "at::Tensor at::_sum_to<c10::SymInt>", "f(at::Tensor)", "a\tb std::x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isCxxFrameworkName(s), re.MatchString(s); got != want {
			t.Fatalf("isCxxFrameworkName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
