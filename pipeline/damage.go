package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
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

// markCut marks a log or report read up to where its gzip stream is cut short
// (cut.Cut; cut nil for a plain input) as read in part: report.Input.Cut
// says where (the text report's READ IN PART), and a warning says that
// what is reported is what came before the cut. rin is returned.
func markCut(rin report.Input, cut *parse.GzipCut) report.Input {
	if cut == nil || !cut.Cut {
		return rin
	}
	rin.Cut = joinCut(cut.String(), rin.Cut)
	rin.Warnings = append(rin.Warnings, "read in part: "+cut.String()+"; what is reported of it is what the bytes before the cut hold (a line, record, message or table the cut runs through is read as far as it goes, as in a file cut short uncompressed)")
	return rin
}

// textThenBinary returns, for head (an input's first bytes) that is not
// text as a whole (isText), the length of its leading whole lines of text
// and the byte offset where binary data begins after them: a log with a
// crash dump, a core file or a pickle appended, or a log rotated or
// copied mid-write. n is 0 when head does not start with a line of text.
func textThenBinary(head []byte) (n, binaryAt int) {
	for n < len(head) {
		nl := bytes.IndexByte(head[n:], '\n')
		if nl < 0 || !pytorchtext.LooksLikeText(head[n:n+nl+1]) {
			break
		}
		n += nl + 1
	}
	if n == 0 || !pytorchtext.LooksLikeText(head[:n]) {
		return 0, 0
	}
	// Where in the first line that is not text its binary bytes start.
	binaryAt = n
	for i := n; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 || r < 0x20 && !strings.ContainsRune("\t\n\v\f\r\b\x1b", r) {
			binaryAt = i
			break
		}
		i += size
	}
	return n, binaryAt
}

// binaryTailNote says that an input's text ends where binary data begins
// at off, and that the rest was not read.
func binaryTailNote(off int) string {
	return fmt.Sprintf("binary data from byte offset %d on (not text: a crash or core dump, a pickle or other file appended, a log rotated or copied mid-write?) was not read: the lines of text before it were", off)
}

// readTextThenBinary reads, for an input no family claimed whose first
// bytes are text lines and then binary data (textThenBinary: n bytes of
// text, binary from binaryAt), those lines as a log that may hold OOM
// messages, memory_summary() tables or memory_stats() dicts, marked read
// in part (report.Input.Cut, and a warning naming the offset). ok is false
// when there is none in them: the error then says that the text up to
// binaryAt holds nothing gpuleak reads, and where the binary begins.
func readTextThenBinary(in *parse.Input, n, binaryAt int) (report.Input, anoom.Input, error) {
	res, meta, err := readOOMTextFrom(io.LimitReader(in.Reader(), int64(n)), in.Name, pytorchtext.FormatOOMMessage)
	if err != nil {
		return report.Input{}, anoom.Input{}, err
	}
	if len(res.Messages) == 0 && len(res.Stats) == 0 {
		return report.Input{}, anoom.Input{}, &parse.Error{File: in.Name, Offset: int64(binaryAt), Err: parse.ErrUnknownFormat,
			Msg: fmt.Sprintf("unrecognised input format: lines of text without an out-of-memory message, a memory_summary() table or a memory_stats() dict, then binary data from here on (byte offset %d): not a format gpuleak reads", binaryAt)}
	}
	format := textFormat(pytorchtext.FormatOOMMessage, res)
	rin := report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res)
	note := binaryTailNote(binaryAt)
	rin.Cut = note
	rin.Warnings = append(rin.Warnings, "read in part: "+note)
	return rin, anoom.Input{Path: in.Name, Format: string(format), Text: res}, nil
}
