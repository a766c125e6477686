package callsite

import "strconv"

// StackKey identifies a stack, for grouping call sites and for ordering
// them when nothing else tells them apart: for each frame, innermost
// first, its file name, function name and decimal line, each followed by
// a NUL byte. Equal stacks give equal keys; keys compare as the stacks
// do frame by frame, file first, then function, then line.
func StackKey(st []Frame) string {
	var b []byte
	for _, f := range st {
		b = AppendFrameKey(b, f.Filename, f.Name, f.Line)
	}
	return string(b)
}

// AppendFrameKey appends one frame's part of a StackKey to b, for callers
// whose frames are not Frames (the report's): file, NUL, function, NUL,
// the line in decimal, NUL.
func AppendFrameKey(b []byte, file, function string, line int64) []byte {
	b = append(b, file...)
	b = append(b, 0)
	b = append(b, function...)
	b = append(b, 0)
	b = strconv.AppendInt(b, line, 10)
	return append(b, 0)
}
