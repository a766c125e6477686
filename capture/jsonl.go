package capture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AppendJSON appends g as one JSON line (the record format of the package
// documentation) to b.
func AppendJSON(b []byte, g *GPUSample) []byte {
	b = append(b, `{"ts":"`...)
	b = time.UnixMicro(g.TimeUs).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z")
	b = append(b, `","host":`...)
	b = appendString(b, g.Host)
	b = append(b, `,"gpu":`...)
	b = strconv.AppendInt(b, int64(g.Index), 10)
	if g.UUID != "" {
		b = append(b, `,"uuid":`...)
		b = appendString(b, g.UUID)
	}
	if g.Name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, g.Name)
	}
	b = append(b, `,"memory_info":"v`...)
	b = strconv.AppendInt(b, int64(g.MemoryInfo), 10)
	b = append(b, `","total":`...)
	b = strconv.AppendInt(b, g.TotalBytes, 10)
	if g.MemoryInfo >= 2 {
		b = append(b, `,"reserved":`...)
		b = strconv.AppendInt(b, g.ReservedBytes, 10)
	}
	b = append(b, `,"used":`...)
	b = strconv.AppendInt(b, g.UsedBytes, 10)
	b = append(b, `,"free":`...)
	b = strconv.AppendInt(b, g.FreeBytes, 10)
	b = append(b, `,"processes":[`...)
	for i, p := range g.Processes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"pid":`...)
		b = strconv.AppendInt(b, p.PID, 10)
		b = append(b, `,"name":`...)
		b = appendString(b, p.Name)
		b = append(b, `,"type":"`...)
		b = append(b, p.Type...)
		b = append(b, `","used":`...)
		if p.HasUsed {
			b = strconv.AppendInt(b, p.UsedBytes, 10)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals; invalid UTF-8 becomes U+FFFD
	return append(b, q...)
}

// Rotation says when Writer starts a new file: after Every (0: never) or
// once a file holds Bytes (0: no limit), at the next tick.
type Rotation struct {
	Every time.Duration
	Bytes int64
}

// ParseRotation reads --rotate: a duration (1h, 30m) or a size (100MiB, 1GB).
func ParseRotation(s string, parseSize func(string) (int64, error)) (Rotation, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < time.Second {
			return Rotation{}, fmt.Errorf("a rotation period under 1s (%v)", d)
		}
		return Rotation{Every: d}, nil
	}
	n, err := parseSize(s)
	if err != nil {
		return Rotation{}, fmt.Errorf("want a duration (1h) or a size (100MiB)")
	}
	if n < 4096 {
		return Rotation{}, fmt.Errorf("a rotation size under 4 KiB (%d bytes)", n)
	}
	return Rotation{Bytes: n}, nil
}

// Writer streams ticks of samples to a JSON lines file, flushing each tick
// to the operating system as it is written, so that a stop at any moment
// (a signal, a crash of the sampled program) loses no tick already
// taken. With a Rotation, each file is named after the time its first
// tick was taken (samples.jsonl: samples-20261201T020554Z.jsonl, ...).
// Memory use is bounded by one tick's records.
type Writer struct {
	path  string
	rot   Rotation
	out   io.Writer // a stream (path ""), or the current file
	f     *os.File
	bw    *bufio.Writer
	n     int64 // bytes in the current file
	start int64 // µs of the current file's first tick
	files []string
	buf   []byte
}

// NewWriter writes to path (created or truncated; with rot, the parts of
// path). Nothing is created before the first tick.
func NewWriter(path string, rot Rotation) *Writer {
	return &Writer{path: path, rot: rot}
}

// NewStreamWriter writes every tick to w (no rotation).
func NewStreamWriter(w io.Writer) *Writer {
	return &Writer{out: w, bw: bufio.NewWriter(w)}
}

// Files are the files written so far, in order.
func (w *Writer) Files() []string { return w.files }

// WriteTick writes the samples of one tick and flushes them.
func (w *Writer) WriteTick(samples []GPUSample) error {
	if len(samples) == 0 {
		return nil
	}
	t := samples[0].TimeUs
	if w.path != "" && (w.f == nil || w.due(t)) {
		if err := w.open(t); err != nil {
			return err
		}
	}
	w.buf = w.buf[:0]
	for i := range samples {
		w.buf = AppendJSON(w.buf, &samples[i])
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	w.n += int64(len(w.buf))
	return w.bw.Flush()
}

func (w *Writer) due(t int64) bool {
	return w.rot.Every > 0 && t-w.start >= w.rot.Every.Microseconds() ||
		w.rot.Bytes > 0 && w.n >= w.rot.Bytes
}

func (w *Writer) open(t int64) error {
	if err := w.closeFile(); err != nil {
		return err
	}
	name := w.path
	if w.rot != (Rotation{}) {
		name = partName(w.path, t, "")
		// Two files started within one second (a small size limit): number them.
		for i := 1; slices.Contains(w.files, name); i++ {
			name = partName(w.path, t, "-"+strconv.Itoa(i))
		}
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w.f, w.out, w.n, w.start = f, f, 0, t
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(f, 64<<10)
	} else {
		w.bw.Reset(f)
	}
	w.files = append(w.files, name)
	return nil
}

// partName is path with the UTC time t (µs), and seq, before its extension.
func partName(path string, t int64, seq string) string {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	return base + "-" + time.UnixMicro(t).UTC().Format("20060102T150405Z") + seq + ext
}

func (w *Writer) closeFile() error {
	if w.f == nil {
		return nil
	}
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// Close flushes and closes the current file (a stream is flushed only).
func (w *Writer) Close() error {
	if w.path == "" {
		if w.bw != nil {
			return w.bw.Flush()
		}
		return nil
	}
	return w.closeFile()
}
