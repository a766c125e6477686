package pipeline

import (
	"fmt"
	"io"
	"os"

	"github.com/gpuleak/gpuleak/parse"
)

// maxSpool is how much of an input that comes once (standard input, a
// pipe, a FIFO) is kept in a temporary file to be read a second time.
const maxSpool = 1 << 30

// spool keeps up to maxSpool bytes of an input in a temporary file, so
// that text no format claims by its first bytes can be scanned for an OOM
// message and then read again as a compute-sanitizer log, without opening
// its path twice (a second open of a FIFO blocks).
type spool struct {
	f    *os.File
	n    int64
	over bool // more than maxSpool bytes came: the rest was not kept
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "gpuleak-spool-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file to read standard input or a pipe twice: %w", err)
	}
	return &spool{f: f}, nil
}

// Write keeps p while the bound allows; past it, it drops p and says so
// in over (the first reading goes on).
func (s *spool) Write(p []byte) (int, error) {
	if s.over || s.n+int64(len(p)) > maxSpool {
		s.over = true
		return len(p), nil
	}
	n, err := s.f.Write(p)
	s.n += int64(n)
	return n, err
}

// reopen opens the kept bytes as the input named name.
func (s *spool) reopen(name string) (*parse.Input, error) {
	if s.over {
		return nil, &parse.Error{File: name, Offset: maxSpool, Msg: fmt.Sprintf("no format was recognised in the first 64 KiB, and the input comes from a pipe and is longer than the %d MiB kept to read it again: give it as a file", maxSpool>>20), Err: parse.ErrUnknownFormat}
	}
	in, err := parse.Open(s.f.Name(), nil)
	if err != nil {
		return nil, err
	}
	in.Name = name
	return in, nil
}

// Close removes the temporary file.
func (s *spool) Close() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// rereader lets text be read again after a first scan: a regular file by
// its path, an input that comes once (standard input, a pipe, a FIFO) from
// a spool of what the first reading saw.
type rereader struct {
	in   *parse.Input
	path string
	sp   *spool
}

// newRereader starts keeping what in's reader hands out when in is not a
// regular file; call it before reading past in's head.
func newRereader(in *parse.Input, path string) (*rereader, error) {
	r := &rereader{in: in, path: path}
	if !in.Regular {
		sp, err := newSpool()
		if err != nil {
			return nil, err
		}
		r.sp = sp
		in.Tee(sp)
	}
	return r, nil
}

// again opens the input anew from its start; for a spooled input it first
// reads what the earlier scan left unread, so that the spool holds it all.
func (r *rereader) again() (*parse.Input, error) {
	if r.sp == nil {
		return parse.Open(r.path, nil)
	}
	if _, err := io.Copy(io.Discard, r.in.Reader()); err != nil {
		return nil, &parse.Error{File: r.path, Offset: -1, Msg: "reading", Err: err}
	}
	return r.sp.reopen(r.path)
}

// Close removes the spool, if any.
func (r *rereader) Close() {
	if r.sp != nil {
		r.sp.Close()
	}
}
