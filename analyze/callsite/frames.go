// Package callsite is what the analyses share about call sites: stack
// frames, the filter that hides framework frames, whose code a frame is
// (ClassOf), the kind of memory a site holds (Kind), the one stack key
// (StackKey) and the one C++ short name (ShortName), and the Interner
// that copies strings out of Arrow buffers. Analyzers take Arrow record
// batches from the parsers (or small typed views of them), return plain
// result structs, and do no I/O.
package callsite

import (
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"regexp"
	"strings"
	"sync"
)

// Frame is one stack frame: a source file, a 1-based line (0 when
// unknown) and a function name.
type Frame struct {
	Filename string
	Line     int64
	Name     string
}

// FrameFilter decides which frames are framework frames, hidden when
// allocations are grouped by call site. A frame is hidden when a hide rule
// matches it and no keep pattern does.
type FrameFilter struct {
	hide []frameRule
	keep []*lazyre.Regexp

	// seen memoises Hidden: a deep stack repeats its frames in every
	// distinct stack, and matching the rules costs about a microsecond.
	mu   sync.Mutex
	seen map[Frame]bool
}

// maxFilterMemo bounds the frames whose verdict Hidden remembers.
const maxFilterMemo = 1 << 16

// frameRule matches a frame's filename or function name, unless except
// matches the filename.
type frameRule struct {
	file, name, except *lazyre.Regexp
	nameFunc           func(string) bool // where set, matches as name does, quicker
}

// matchName says whether r's name rule matches a function name.
func (r *frameRule) matchName(name string) bool {
	if r.nameFunc != nil {
		return r.nameFunc(name)
	}
	return r.name != nil && r.name.MatchString(name)
}

// DefaultHidden describes the frames hidden by default, for help text.
const DefaultHidden = `PyTorch internals (files under torch/, functorch/, c10/, aten/; C++ functions
in the c10::, at::, torch::, caffe2::, pybind11:: and std:: namespaces), the Python
runtime and standard library (files under lib/pythonX.Y/, PythonXY\Lib\ or uv's
cpython-X.Y.Z-*/lib/ outside site-packages,
<frozen ...>, CPython's C sources and functions such as Py*, _PyEval_*, cfunction_call,
method_vectorcall, slot_tp_call, vectorcall_*), Julia's runtime dispatch
(jl_apply_generic, jl_invoke, their ijl_ names), code generated at run time
(torch.compile's torchinductor_* files, FX graph modules), thread start-up frames
and unsymbolized C++ frames (file "??"); Windows paths (backslashes) alike.`

var defaultRules = []frameRule{
	{file: lazyre.NewMemo(`(^|[/\\])(torch|functorch|c10|aten)[/\\]`)},
	// C++ frames PyTorch records (stacks="all"): a name in a framework
	// namespace, after an optional return type ("void torch::...",
	// "at::Tensor at::_sum_to<...>"), but not a user function taking at::Tensor.
	{name: cxxFrameworkName, nameFunc: isCxxFrameworkName},
	{name: lazyre.NewMemo(`^(pthread_|start_thread$|__clone|clone3?$|execute_native_thread_routine)`)},
	// The standard library: lib/python3.X/ (POSIX), Python3XY\Lib\ (the
	// Windows installer) and cpython-3.X.Y-<platform>\lib\ (uv's and
	// python-build-standalone's builds, any OS).
	{file: lazyre.NewMemo(`[/\\]lib[/\\]python3\.[0-9]+t?[/\\]|(?i)[/\\]python3[0-9]*[/\\]lib[/\\]|(?i)[/\\]cpython-3\.[0-9]+[^/\\]*[/\\]lib[/\\]`), except: lazyre.New(`[/\\](site|dist)-packages[/\\]`)},
	{file: lazyre.NewMemo(`^<(frozen [^>]*|string)>$`)},
	{file: lazyre.NewMemo(`(^|[/\\])(Python|Objects|Modules|Include|Parser)[/\\]([^/\\]*[/\\])?[^/\\]*\.[ch]$`)},
	// Julia's runtime dispatch (libjulia's jl_apply_generic, jl_invoke,
	// "ijl_" since Julia 1.8): the interpreter's, as CPython's are.
	{name: lazyre.NewMemo(`^(_?Py[A-Z_]|__libc_start|_start$|unwind::|CapturedTraceback|_?i?jl_(apply_generic|invoke|call[0-9]?|f__apply\w*|f__call_latest|toplevel_eval\w*|interpret_toplevel\w*|fptr_args|repl_entrypoint)$)`)},
	{file: lazyre.NewMemo(`^\?\?$`)},
	// Generated code: torch.compile's output (torchinductor_<user> in the
	// temporary directory of any OS) and FX graph modules.
	{file: generatedFile},
}

// defaultRules[firstInterpreterRule:lastInterpreterRule+1] are the
// Python runtime's rules (standard library, frozen modules, CPython's
// sources and functions).
const firstInterpreterRule, lastInterpreterRule = 3, 6

// cxxFrameworkName matches a C++ function name in a framework namespace,
// after an optional return type ("void torch::...", "at::Tensor
// at::_sum_to<...>"), but not a user function taking at::Tensor.
// isCxxFrameworkName is its matcher: the regexp package ran it at about 17
// ns a byte of C++ names hundreds of bytes long (3% of a field snapshot's
// instructions); TestCxxFrameworkNameMatcher holds the two to one answer.
var cxxFrameworkName = lazyre.NewMemo(`^(?:[A-Za-z_][\w:<>, *&]*\s+)?(c10|at|torch|caffe2|pybind11|std|__gnu_cxx)::`)

// cxxNamespaces are cxxFrameworkName's namespaces, each with its "::".
var cxxNamespaces = []string{"c10::", "at::", "torch::", "caffe2::", "pybind11::", "std::", "__gnu_cxx::"}

// isCxxFrameworkName answers as cxxFrameworkName.MatchString. A match is a
// namespace at position p where p is 0 or s[:p] is a return type: a
// letter or '_', then characters of the class [\w:<>, *&], then one or
// more of \s ([\t\n\f\r ]). The class holds the space, so s[:p]'s
// trailing white space may begin as early as index 1, and the shortest
// class run is the one to test: with k the length of the prefix s[:k] whose
// characters after the first are all of the class, s[:p] is a return type
// when its trailing white space (w characters, at least one) begins at or
// before k. Bytes are tested, not runes: every character of the class and
// of \s is ASCII, and no byte of a multi-byte or invalid sequence is.
func isCxxFrameworkName(s string) bool {
	hasNamespace := func(t string) bool {
		for _, ns := range cxxNamespaces {
			if strings.HasPrefix(t, ns) {
				return true
			}
		}
		return false
	}
	if hasNamespace(s) {
		return true
	}
	if len(s) < 2 || !(s[0] == '_' || 'A' <= s[0] && s[0] <= 'Z' || 'a' <= s[0] && s[0] <= 'z') {
		return false
	}
	k := 1
	for k < len(s) && cxxClass(s[k]) {
		k++
	}
	w := 0 // the white space run ending just before p
	for p := 1; p < len(s); p++ {
		if cxxSpace(s[p-1]) {
			w++
		} else {
			w = 0
		}
		if w == 0 || max(1, p-w) > k {
			if p > k && w == 0 {
				return false // past the class run with no white space: no later p can start after a return type
			}
			continue
		}
		if hasNamespace(s[p:]) {
			return true
		}
	}
	return false
}

// cxxClass is [\w:<>, *&].
func cxxClass(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' ||
		c == ':' || c == '<' || c == '>' || c == ',' || c == ' ' || c == '*' || c == '&'
}

// cxxSpace is \s in RE2: [\t\n\f\r ].
func cxxSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// generatedFile matches the files of code that PyTorch generates at run time.
var generatedFile = lazyre.NewMemo(`[/\\]torchinductor_[^/\\]*[/\\]|^<eval_with_key>|^<torch_package_|[/\\]torch_compile_debug[/\\]`)

// interpreterName matches CPython's C functions as stacks="all" records
// them (often with no file, or a file of CPython's sources): the
// interpreter loop and its call machinery. Only frames that are not Python
// source are matched by name.
var interpreterName = lazyre.NewMemo(`^(_?Py|cfunction_|method_vectorcall|slot_tp_|slot_|vectorcall_|do_call_core|builtin_|pymain_|pyrun_|run_mod$|run_eval_code_obj|partial_vectorcall|gen_send_ex|task_step_impl|frame_dealloc|wrapper_call|wrapperdescr_call|method_call|func_call|property_descr_get|call_function|function_code_fastcall|object_vacall|_?PyEval|subtype_dealloc|_start$|__libc_|_?i?jl_(apply_generic|invoke|call[0-9]?|f__apply\w*|f__call_latest|toplevel_eval\w*|interpret_toplevel\w*|fptr_args|repl_entrypoint)$)`)

// interpreterFile matches CPython's own sources and headers.
var interpreterFile = lazyre.NewMemo(`(^|[/\\])(abstract\.h|ceval\.c|call\.c|pycore_[a-z_]+\.h|classobject\.c|methodobject\.c|descrobject\.c|typeobject\.c|funcobject\.c|genobject\.c|ceval_macros\.h|generated_cases\.c\.h|pythonrun\.c|bltinmodule\.c|_functoolsmodule\.c|_asynciomodule\.c)$`)

// Class says whose code a frame is.
type Class int

const (
	User        Class = iota // the program's own code, or a library's
	Framework                // PyTorch's internals, threads, unsymbolized frames
	Interpreter              // CPython and its standard library
	Generated                // code generated at run time (torch.compile, FX)
)

// ClassOf decides whose code fr is: the one place that tells user code
// from the framework, the interpreter and generated code.
func ClassOf(fr Frame) Class {
	switch {
	case generatedFile.MatchString(fr.Filename):
		return Generated
	case !IsPython(fr) && (interpreterName.MatchString(fr.Name) || interpreterFile.MatchString(fr.Filename)):
		return Interpreter
	}
	for i, r := range defaultRules {
		if r.except != nil && r.except.MatchString(fr.Filename) {
			continue
		}
		if (r.file != nil && r.file.MatchString(fr.Filename)) || r.matchName(fr.Name) {
			if i >= firstInterpreterRule && i <= lastInterpreterRule {
				return Interpreter
			}
			return Framework
		}
	}
	return User
}

// IsPython reports whether fr is a frame of Python source.
func IsPython(fr Frame) bool {
	return strings.HasSuffix(fr.Filename, ".py") || strings.HasPrefix(fr.Filename, "<")
}

// DefaultFrameFilter hides the frames DefaultHidden describes.
func DefaultFrameFilter() *FrameFilter {
	return &FrameFilter{hide: defaultRules}
}

// NewFrameFilter returns the default filter extended by user patterns:
// each hide pattern hides frames whose filename or function name it
// matches; each keep pattern keeps frames it matches (filename or name)
// even when a hide rule matches them. Errors name a pattern that does not
// compile.
func NewFrameFilter(hide, keep []string) (*FrameFilter, error) {
	f := DefaultFrameFilter()
	f.hide = append([]frameRule(nil), f.hide...)
	for _, p := range hide {
		if p == "" {
			return nil, fmt.Errorf("empty --hide-frames pattern (it would hide every frame)")
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bad --hide-frames pattern %q: %w", p, err)
		}
		l := lazyre.Of(re)
		f.hide = append(f.hide, frameRule{file: l, name: l})
	}
	for _, p := range keep {
		if p == "" {
			return nil, fmt.Errorf("empty --keep-frames pattern (it would keep every frame)")
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bad --keep-frames pattern %q: %w", p, err)
		}
		f.keep = append(f.keep, lazyre.Of(re))
	}
	return f, nil
}

// Hidden reports whether fr is a framework frame. It is safe for
// concurrent use.
func (f *FrameFilter) Hidden(fr Frame) bool {
	f.mu.Lock()
	h, ok := f.seen[fr]
	f.mu.Unlock()
	if ok {
		return h
	}
	h = f.match(fr)
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[Frame]bool{}
	}
	if len(f.seen) < maxFilterMemo {
		f.seen[fr] = h
	}
	f.mu.Unlock()
	return h
}

// Keeps reports whether one of f's keep patterns matches s (a file, a
// function or a module name of a frame that is not a Frame).
func (f *FrameFilter) Keeps(s string) bool {
	for _, re := range f.keep {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func (f *FrameFilter) match(fr Frame) bool {
	for _, re := range f.keep {
		if re.MatchString(fr.Filename) || re.MatchString(fr.Name) {
			return false
		}
	}
	if !IsPython(fr) && (interpreterName.MatchString(fr.Name) || interpreterFile.MatchString(fr.Filename)) {
		return true
	}
	for _, r := range f.hide {
		if r.except != nil && r.except.MatchString(fr.Filename) {
			continue
		}
		if (r.file != nil && r.file.MatchString(fr.Filename)) || r.matchName(fr.Name) {
			return true
		}
	}
	return false
}

// machinery matches frames that never name a call site: the stack
// capture itself, the caching allocator, the operator dispatcher, the
// Python interpreter loop and process or thread start-up. A stack made only
// of framework frames is named by its innermost frame that is none of these
// (for example at::cuda::setWorkspaceForHandle for a cuBLAS workspace).
var machinery = lazyre.NewMemo(`(torch::unwind::|CapturedTraceback|gather_with_cpp|CUDACachingAllocator|CachingAllocator::|at::detail::empty_|c10::impl::wrap_kernel_functor|c10::impl::make_boxed|c10::Dispatcher|at::_ops::|^_?Py[A-Z_]|^(__libc_|_start$|__clone|clone3?$|start_thread$|pthread_)|std::error_code)`)

// IsMachinery says whether a frame is machinery that FrameworkSite removes
// (the stack capture, the caching allocator, the dispatcher, the
// interpreter loop, process or thread start-up).
func IsMachinery(f Frame) bool {
	return machinery.MatchString(f.Name)
}

// FrameworkSite trims a stack made only of framework frames to the frames
// worth showing: machinery removed (all of it kept if nothing else is left).
func FrameworkSite(full []Frame) []Frame {
	var out []Frame
	for _, f := range full {
		if !IsMachinery(f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return full
	}
	return out
}

// libraryFile: an installed package's file; also a compiled Cython
// module's source as its traceback frames name it, a relative path ending
// in .pyx ("cupy/cuda/memory.pyx": the path it was built from, with no
// site-packages), and CuPy's files named the same way.
var libraryFile = lazyre.NewMemo(`[/\\](site|dist)-packages[/\\]|^[A-Za-z_][\w.-]*[/\\][^:<>]*\.pyx$|^(cupy|cupyx|cupy_backends)[/\\]`)

// IsLibrary reports whether a frame is in an installed package rather than
// the user's own code.
func IsLibrary(fr Frame) bool {
	return libraryFile.MatchString(fr.Filename)
}

// InnermostUser returns the index in stack (innermost first, framework
// frames already removed) of the frame that names a call site: the
// innermost frame outside installed packages, or else the innermost frame.
// It returns -1 for an empty stack.
func InnermostUser(stack []Frame) int {
	for i, fr := range stack {
		if !IsLibrary(fr) {
			return i
		}
	}
	if len(stack) > 0 {
		return 0
	}
	return -1
}
