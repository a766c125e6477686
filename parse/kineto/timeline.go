package kineto

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/gpuleak/gpuleak/parse"
)

// Categories of export_memory_timeline, in PyTorch's order
// (torch/profiler/_memory_profiler.py, _CATEGORY_TO_INDEX): the index of a
// .raw.json event's category, and the column of a .json sizes row after
// its first (unused) column. "unknown" is the category None.
var Categories = []string{"parameter", "optimizer_state", "input", "temporary", "activation", "gradient", "autograd_detail", "unknown"}

// Timeline is a memory timeline of one device: at each time, the bytes
// held by each category (Categories order).
type Timeline struct {
	// TimesUs are µs since the Unix epoch, in order.
	TimesUs []int64
	// Bytes[i][c] is category c's bytes at TimesUs[i].
	Bytes [][]int64
}

// maxTimelinePoints bounds a timeline's points.
const maxTimelinePoints = 50_000_000

// ReadTimeline reads export_memory_timeline's .json ([times_us, sizes],
// each sizes row 1 + len(Categories) running totals) or, raw true, its
// .raw.json ([[ts_ns, action, bytes, category], ...]: action 1
// pre-existing (ts -1), 2 create, 3 increment version, 4 destroy; bytes
// negative for what leaves a category). Errors are *parse.Error.
func ReadTimeline(r io.Reader, name string, raw bool) (*Timeline, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	fail := func(msg string, err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &parse.Error{File: name, Offset: dec.InputOffset(), Msg: "the memory timeline ends early (truncated?)", Err: io.ErrUnexpectedEOF}
		}
		return &parse.Error{File: name, Offset: dec.InputOffset(), Msg: msg, Err: err}
	}
	open := func() error {
		tok, err := dec.Token()
		if err != nil {
			return fail("invalid JSON", err)
		}
		if tok != json.Delim('[') {
			return fail("want an array", nil)
		}
		return nil
	}
	ints := func(n int) ([]int64, error) {
		var row []json.Number
		if err := dec.Decode(&row); err != nil {
			return nil, fail("want an array of integers", err)
		}
		if n > 0 && len(row) != n {
			return nil, fail("want "+strconv.Itoa(n)+" integers, got "+strconv.Itoa(len(row)), nil)
		}
		out := make([]int64, len(row))
		for i, v := range row {
			x, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				f, ferr := strconv.ParseFloat(string(v), 64)
				if ferr != nil || f > 9e18 || f < -9e18 {
					return nil, fail("not an integer: "+string(v), nil)
				}
				x = int64(f)
			}
			out[i] = x
		}
		return out, nil
	}
	if err := open(); err != nil {
		return nil, err
	}
	tl := &Timeline{}
	if raw {
		cur := make([]int64, len(Categories))
		for dec.More() {
			if len(tl.TimesUs) >= maxTimelinePoints {
				return nil, fail("more than "+strconv.Itoa(maxTimelinePoints)+" events", nil)
			}
			ev, err := ints(4)
			if err != nil {
				return nil, err
			}
			c := ev[3]
			if c < 0 || c >= int64(len(Categories)) {
				return nil, fail("category index "+strconv.FormatInt(c, 10)+" out of range", nil)
			}
			cur[c] += ev[2]
			t := ev[0]
			if t >= 0 {
				t /= 1000
			}
			if n := len(tl.TimesUs); n > 0 && (tl.TimesUs[n-1] == t || t < 0) {
				copy(tl.Bytes[n-1], cur)
				continue
			}
			tl.TimesUs = append(tl.TimesUs, t)
			tl.Bytes = append(tl.Bytes, append([]int64(nil), cur...))
		}
	} else {
		if err := open(); err != nil {
			return nil, err
		}
		for dec.More() {
			if len(tl.TimesUs) >= maxTimelinePoints {
				return nil, fail("more than "+strconv.Itoa(maxTimelinePoints)+" points", nil)
			}
			var v json.Number
			if err := dec.Decode(&v); err != nil {
				return nil, fail("want a time in µs", err)
			}
			t, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return nil, fail("not an integer time: "+string(v), nil)
			}
			tl.TimesUs = append(tl.TimesUs, t)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fail("invalid JSON", err)
		}
		if err := open(); err != nil {
			return nil, err
		}
		for dec.More() {
			if len(tl.Bytes) >= len(tl.TimesUs) {
				return nil, fail("more sizes rows than times", nil)
			}
			row, err := ints(1 + len(Categories))
			if err != nil {
				return nil, err
			}
			tl.Bytes = append(tl.Bytes, row[1:])
		}
		if len(tl.Bytes) != len(tl.TimesUs) {
			return nil, fail(strconv.Itoa(len(tl.TimesUs))+" times but "+strconv.Itoa(len(tl.Bytes))+" sizes rows", nil)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fail("invalid JSON", err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail("invalid JSON", err)
	}
	// Pre-existing memory (ts -1) is at the first real time.
	for i := range tl.TimesUs {
		if tl.TimesUs[i] < 0 && i+1 < len(tl.TimesUs) {
			tl.TimesUs[i] = tl.TimesUs[i+1]
		}
	}
	return tl, nil
}
