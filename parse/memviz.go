package parse

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
)

// PyTorch's torch.cuda._memory_viz trace_plot and segment_plot (also
// `python -m torch.cuda._memory_viz trace_plot snapshot.pickle -o
// page.html`) write an HTML page that draws a snapshot with MemoryViz.js
// and embeds the snapshot itself, pickled and base64-encoded, as a
// JavaScript literal:
//
//	import {add_local_files} from ".../torch/utils/viz/MemoryViz.js"
//	const local_files = [{"name": "snapshot.pickle", "base64": "gASV..."}]
//
// (the pickle padded with NUL bytes to a multiple of 3). The page is the
// snapshot: Open hands on the decoded pickle.
var (
	memVizScript = []byte("MemoryViz.js")
	memVizFiles  = []byte("const local_files")
	memVizKeys   = [][]byte{[]byte(`"base64": "`), []byte(`"base64":"`), []byte(`base64: "`)}
)

// memVizHead bounds how far into a page its embedded snapshot may start.
const memVizHead = 64 << 10

// embeddedSnapshot returns a reader of the snapshot a _memory_viz page
// embeds, positioned at br's start, and true; br unchanged and false when
// br's content is not such a page. The reader ends at the base64 string's
// closing quote; a page cut before it ends with io.ErrUnexpectedEOF.
func embeddedSnapshot(br *bufio.Reader) (*bufio.Reader, bool) {
	head, _ := br.Peek(memVizHead)
	i := bytes.Index(head, memVizScript)
	if i < 0 {
		return br, false
	}
	j := bytes.Index(head[i:], memVizFiles)
	if j < 0 {
		return br, false
	}
	rest := head[i+j:]
	for _, k := range memVizKeys {
		if p := bytes.Index(rest, k); p >= 0 && !bytes.ContainsAny(rest[:p], ";\n") {
			br.Discard(i + j + p + len(k))
			dec := base64.NewDecoder(base64.StdEncoding, &untilQuote{r: br})
			return bufio.NewReaderSize(&padTrim{r: dec}, 256<<10), true
		}
	}
	return br, false
}

// untilQuote reads r up to its next '"' (not included), then ends.
type untilQuote struct {
	r    *bufio.Reader
	done bool
}

func (u *untilQuote) Read(p []byte) (int, error) {
	if u.done {
		return 0, io.EOF
	}
	b, err := u.r.Peek(min(len(p), u.r.Size()))
	if q := bytes.IndexByte(b, '"'); q >= 0 {
		n := copy(p, b[:q])
		u.r.Discard(n)
		u.done = true
		return n, nil
	}
	n := copy(p, b)
	u.r.Discard(n)
	if n > 0 {
		return n, nil
	}
	if err == nil || err == io.EOF || err == bufio.ErrBufferFull {
		err = errPageCut
	}
	return 0, err
}

// errPageCut is the read error of a _memory_viz page that ends inside the
// snapshot it embeds.
var errPageCut = fmt.Errorf("the page ends inside the snapshot it embeds (the file was not written or copied whole): %w", io.ErrUnexpectedEOF)

// padTrim drops the NUL bytes (3 at most) that _format_viz pads the pickle
// with, at the end of the decoded bytes: a pickle ends with its STOP
// opcode, so they are never the snapshot's.
type padTrim struct {
	r    io.Reader
	held int // NUL bytes read last and held back
	err  error
}

func (t *padTrim) Read(p []byte) (int, error) {
	if len(p) <= 3 {
		return t.r.Read(p) // too small to hold back; bufio reads far more
	}
	for t.err == nil {
		clear(p[:t.held])
		n, err := t.r.Read(p[t.held:])
		n += t.held
		t.err = err
		z := 0
		for z < 3 && z < n && p[n-1-z] == 0 {
			z++
		}
		if t.err != nil && t.err != io.EOF {
			return n, t.err // cut short: the held bytes are what was read
		}
		t.held = z
		if n > z {
			return n - z, nil
		}
	}
	return 0, t.err
}
