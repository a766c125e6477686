package pytorchtext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// A Jupyter notebook (.ipynb, nbformat 4) is JSON: what its cells printed
// is in their "outputs", and an exception in an output of output_type
// "error", whose "traceback" is the list of strings IPython's ultratb made
// (ANSI-coloured: "\u001b[0;31mOutOfMemoryError\u001b[0m: CUDA out of
// memory. ..."), one a frame, each maybe of several lines. Read as lines
// of text, the notebook's escaped strings hid the traceback, so an OOM
// came without the frames that asked for it. The notebook is read as what
// it showed: the text of each output in turn (a stream's, a result's
// text/plain, an error's traceback joined as IPython prints it), and the
// text of markdown and raw cells (a note that quotes an error); code is not
// what a run printed and is skipped. Each line read keeps the line of the
// JSON string it came from, as positions in warnings and sources.

// notebookStartRe matches the start of a notebook: a JSON object whose
// first key is one nbformat writes first (Jupyter sorts its keys, "cells"
// first; Colab writes "nbformat" first).
var notebookStartRe = lazyre.New(`^\{\s*"(?:cells|nbformat|nbformat_minor|metadata)"\s*:`)

// SniffNotebook reports whether head, the first bytes of an input, is a
// Jupyter notebook: a JSON object that starts with an nbformat key and
// names a cell type or the format's version within head.
func SniffNotebook(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !notebookStartRe.Re().Match(t) {
		return false
	}
	return bytes.Contains(t, []byte(`"cell_type"`)) || bytes.Contains(t, []byte(`"nbformat"`))
}

// maxNotebook bounds the notebook read (its images' base64 included);
// maxNotebookDepth the nesting of its JSON (a notebook's cells and
// outputs are 5 levels down, an output's JSON data a few more): each
// level costs the reader memory, and a file of brackets alone would
// cost gigabytes.
const (
	maxNotebook      = 1 << 30
	maxNotebookDepth = 512
)

// nbLine is a line of text a notebook showed, at the line of the JSON
// string it came from.
type nbLine struct {
	line int64
	text string
}

// nbPiece is a JSON string of a text the notebook shows, at its line.
type nbPiece struct {
	line int64
	text string
}

// notebookLines reads a notebook and returns the lines it showed, in order,
// and how many lines the file has. A notebook whose JSON breaks off (cut
// short, or broken) gives the lines before the break and an error that
// names its line; a file that is no notebook after all gives an error.
func notebookLines(r io.Reader) (lines []nbLine, total int64, broke error) {
	data, err := io.ReadAll(io.LimitReader(r, maxNotebook+1))
	if err != nil {
		return nil, 0, &readError{err}
	}
	if len(data) > maxNotebook {
		return nil, 0, fmt.Errorf("a notebook larger than %d MiB is not read", maxNotebook>>20)
	}
	idx := newLineIndex(data)
	total = int64(len(idx))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		total++
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	// The path of the value being read: one level per open container.
	type level struct {
		object, wantKey bool
		key             string
	}
	var stack []level
	var (
		cellType string    // of the cell being read
		cellText []nbPiece // a markdown or raw cell's source
		out      nbOutput  // the output being read
		inOutput bool
	)
	emit := func(pieces []nbPiece, joinWith string) {
		lines = append(lines, splitPieces(pieces, joinWith)...)
	}
	// where names the value just read: its key in its object (or the
	// key of the list it is in, with inList) and the depth of that object.
	where := func() (key string, inList bool, depth int) {
		n := len(stack)
		if n == 0 {
			return "", false, 0
		}
		if !stack[n-1].object {
			if n >= 2 {
				return stack[n-2].key, true, n - 1
			}
			return "", true, n
		}
		return stack[n-1].key, false, n
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line := idx.line(dec.InputOffset())
			if inOutput {
				emit(out.shown(), "")
			}
			return lines, total, fmt.Errorf("line %d: the notebook's JSON breaks off here (%v): the outputs before it were read", line, err)
		}
		line := int64(idx.line(dec.InputOffset()))
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				k, _ := tok.(string)
				stack[len(stack)-1].key, stack[len(stack)-1].wantKey = k, false
				continue
			}
		}
		// A cell is at depth 3 ({ "cells": [ {), its outputs at 5
		// ({ "cells": [ { "outputs": [ {).
		key, inList, depth := where()
		switch d, _ := tok.(json.Delim); {
		case d == '{' || d == '[':
			if d == '{' && len(stack) == 2 && key == "cells" {
				cellType, cellText = "", nil
			}
			if d == '{' && len(stack) == 4 && key == "outputs" {
				out, inOutput = nbOutput{}, true
			}
			if len(stack) >= maxNotebookDepth {
				if inOutput {
					emit(out.shown(), "")
				}
				return lines, total, fmt.Errorf("line %d: the notebook's JSON nests deeper than %d levels here (no notebook does; a bound that protects memory): the outputs before it were read", line, maxNotebookDepth)
			}
			stack = append(stack, level{object: d == '{', wantKey: d == '{'})
			continue
		case d == '}' || d == ']':
			if len(stack) == 0 {
				return lines, total, fmt.Errorf("line %d: the notebook's JSON has an unmatched %q", line, d)
			}
			stack = stack[:len(stack)-1]
			if d == '}' && len(stack) == 4 && inOutput {
				emit(out.shown(), "")
				inOutput = false
			}
			if d == '}' && len(stack) == 2 && (cellType == "markdown" || cellType == "raw") {
				emit(cellText, "")
			}
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].wantKey = true
			}
			continue
		}
		s, isString := tok.(string)
		switch {
		case depth == 3 && !inList && key == "cell_type" && isString:
			cellType = s
		case depth == 3 && key == "source" && isString:
			cellText = append(cellText, nbPiece{line, s})
		case inOutput && depth == 5 && isString:
			out.add(key, inList, nbPiece{line, s})
		case inOutput && depth == 6 && isString && key == "text/plain":
			// execute_result's and display_data's data.
			out.plain = append(out.plain, nbPiece{line, s})
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	if len(stack) > 0 {
		if inOutput {
			emit(out.shown(), "")
		}
		return lines, total, fmt.Errorf("line %d: the notebook's JSON ends inside an open %s (cut short): the outputs before it were read", total, map[bool]string{true: "object", false: "list"}[stack[len(stack)-1].object])
	}
	return lines, total, nil
}

// nbOutput is one output of a code cell, as read so far.
type nbOutput struct {
	kind          string    // output_type
	stream        []nbPiece // a stream's text
	plain         []nbPiece // a result's text/plain
	traceback     []nbPiece // an error's
	ename, evalue nbPiece
}

func (o *nbOutput) add(key string, inList bool, p nbPiece) {
	switch key {
	case "output_type":
		o.kind = p.text
	case "text":
		o.stream = append(o.stream, p)
	case "traceback":
		if inList {
			o.traceback = append(o.traceback, p)
		}
	case "ename":
		o.ename = p
	case "evalue":
		o.evalue = p
	}
}

// shown returns the pieces of text the output showed. An error's traceback
// is IPython's list, one string a frame, printed joined by line ends
// (ultratb's stb2text); without one, its "ename: evalue".
func (o nbOutput) shown() []nbPiece {
	switch o.kind {
	case "stream":
		return o.stream
	case "execute_result", "display_data":
		return o.plain
	case "error":
		if len(o.traceback) == 0 {
			if o.ename.text == "" && o.evalue.text == "" {
				return nil
			}
			line := o.evalue.line
			if line == 0 {
				line = o.ename.line
			}
			return []nbPiece{{line, o.ename.text + ": " + o.evalue.text + "\n"}}
		}
		out := make([]nbPiece, len(o.traceback))
		for i, p := range o.traceback {
			out[i] = nbPiece{p.line, p.text + "\n"}
		}
		return out
	}
	return nil
}

// splitPieces joins the pieces of one text (nbformat splits a text into
// strings that each end with a line end, or not: a print(end="") goes on
// in the next) and splits it into lines, each at the line of the piece it
// starts in.
func splitPieces(pieces []nbPiece, joinWith string) []nbLine {
	var out []nbLine
	var cur strings.Builder
	start := int64(-1)
	for i, p := range pieces {
		s := p.text
		if i > 0 && joinWith != "" {
			s = joinWith + s
		}
		for s != "" {
			if start < 0 {
				start = p.line
			}
			j := strings.IndexByte(s, '\n')
			if j < 0 {
				cur.WriteString(s)
				break
			}
			cur.WriteString(s[:j])
			out = append(out, nbLine{start, cur.String()})
			cur.Reset()
			start = -1
			s = s[j+1:]
		}
	}
	if start >= 0 {
		out = append(out, nbLine{start, cur.String()})
	}
	return out
}

// notebookLine returns the next line a notebook showed (see
// notebookLines), setting r.line to its line in the file; io.EOF after
// the last. The notebook is read whole at the first call; a notebook whose
// JSON breaks off is read up to the break, with a warning that says where.
func (r *Reader) notebookLine() (string, error) {
	if r.nb == nil {
		lines, total, err := notebookLines(r.br)
		var rerr *readError
		if errors.As(err, &rerr) {
			return "", &parse.Error{File: r.name, Offset: -1, Msg: "read error", Err: rerr.err}
		}
		if err != nil {
			r.meta.Warnings.Addf("%v", err)
		}
		r.meta.Lines = total
		r.nb = append(lines, nbLine{line: -1}) // the end
	}
	l := r.nb[0]
	if l.line < 0 {
		r.line = r.meta.Lines
		return "", io.EOF
	}
	r.nb = r.nb[1:]
	r.line = l.line
	return l.text, nil
}

// readError is a failure to read the notebook's bytes (not its JSON).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
