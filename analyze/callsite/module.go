package callsite

import "github.com/gpuleak/gpuleak/internal/lazyre"

// autogradDir is the directory of autograd's Python code, on any OS.
const autogradDir = `[/\\]torch[/\\]autograd[/\\]`

// moduleOrBackward matches the files of the frames of an nn.Module call
// and of autograd's backward, in Python, on any OS.
var moduleOrBackward = lazyre.NewMemo(`[/\\]torch[/\\]nn[/\\]modules[/\\]module\.py$|` + autogradDir)

// moduleFile is the file of the frames ModuleCall makes: the file a
// snapshot's frames of a module call have (torch/nn/modules/module.py),
// under a directory no real path has.
const moduleFile = "<nn.Module>/torch/nn/modules/module.py"

// ModuleCall is the frame of a call of the nn.Module named name when only
// the name is known (a profiler's "nn.Module: Linear_1" span). It is the
// frame a snapshot records for a module call, so it is treated as one:
// hidden as framework code by the default filter, and IsModuleOrBackward.
func ModuleCall(name string) Frame {
	return Frame{Filename: moduleFile, Name: name}
}

// IsModuleOrBackward reports whether f is a Python frame of an nn.Module
// call (ModuleCall's frames too) or of autograd's backward: allocations
// under them are parts of a training step, never the step itself.
// (backward's C++ frames are told by their names, in analyze/snapshot.)
func IsModuleOrBackward(f Frame) bool {
	return moduleOrBackward.MatchString(f.Filename)
}

// autogradFile matches the files of autograd's Python code.
var autogradFile = lazyre.NewMemo(autogradDir)

// IsAutogradPython reports whether f is a Python frame of autograd's own
// code (torch/autograd/). The outermost Python frame of a stack that
// autograd's engine ran on its own thread is one: the engine enters Python
// there to run a custom Function's backward (BackwardCFunction.apply in
// torch/autograd/function.py), a compiled graph's among them; a stack of
// the main thread starts in the program's code instead.
func IsAutogradPython(f Frame) bool {
	return IsPython(f) && autogradFile.MatchString(f.Filename)
}

// moduleCallFile matches the file of an nn.Module call's frames, on any
// OS.
var moduleCallFile = lazyre.NewMemo(`[/\\]torch[/\\]nn[/\\]modules[/\\]module\.py$`)

// IsModuleCall reports whether f is a Python frame of an nn.Module's call
// (module(x), which runs its forward): _wrapped_call_impl and _call_impl
// (__call__ before PyTorch 1.6), or ModuleCall's frame. The module's other
// methods in module.py (cuda, to, _apply) are not calls.
func IsModuleCall(f Frame) bool {
	if f.Filename == moduleFile {
		return true
	}
	switch f.Name {
	case "_call_impl", "_wrapped_call_impl", "__call__":
		return moduleCallFile.MatchString(f.Filename)
	}
	return false
}

// InModuleFile reports whether f is a Python frame of module.py, a call's
// or another (inner, which runs hooks; _apply; cuda).
func InModuleFile(f Frame) bool {
	return f.Filename == moduleFile || IsPython(f) && moduleCallFile.MatchString(f.Filename)
}
