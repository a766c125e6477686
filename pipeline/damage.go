package pipeline

import (
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// damageNotes returns the warnings about how in's bytes ended that its
// family's reader cannot see: bytes after its gzip stream that begin no
// member (parse.Input.TrailingGarbage). Every reading of an input adds
// them to what the family said.
func damageNotes(in *parse.Input) []string {
	if off := in.TrailingGarbage(); off >= 0 {
		return []string{parse.TrailingGarbageNote(off)}
	}
	return nil
}

// markCut marks a text log read up to where its gzip stream is cut short
// (cut.Cut; cut nil for a plain input) as read in part: report.Input.Cut
// says where (the text report's READ IN PART), and a warning says that
// the messages are those before the cut. rin is returned.
func markCut(rin report.Input, cut *parse.GzipCut) report.Input {
	if cut == nil || !cut.Cut {
		return rin
	}
	rin.Cut = joinCut(cut.String(), rin.Cut)
	rin.Warnings = append(rin.Warnings, "read in part: "+cut.String()+"; what is reported of it is what the text before the cut holds (an out-of-memory message, table or dict the cut runs through is read as far as it goes)")
	return rin
}
