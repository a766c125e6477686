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

// Writer streams ticks of samples to a file, flushing each tick to the
// operating system as it is written, so that a stop at any moment (a
// signal, a crash of the sampled program) loses no tick already taken.
// With a Rotation, each file is named after the time its first tick was
// taken (samples.jsonl: samples-20261201T020554Z.jsonl, ...). Memory use
// is bounded by one tick's records.
//
// A path ending in .csv is written as nvidia-smi CSV instead of JSON
// lines: the GPU rows as --query-gpu (timestamp, index, uuid, name,
// memory.total, memory.reserved, memory.used, memory.free, in bytes) in
// the file, and the process rows as --query-compute-apps (timestamp,
// gpu_uuid, pid, process_name, used_gpu_memory) in a file beside it whose
// name ends in .apps.csv. "gpuleak trend FILE.csv FILE.apps.csv" links
// them by GPU UUID; the host is not recorded in CSV.
type Writer struct {
	path  string
	csv   bool
	rot   Rotation
	main  sink
	apps  sink  // CSV only
	n     int64 // bytes in the current file(s)
	start int64 // µs of the current file's first tick
	files []string
	buf   []byte
	abuf  []byte
}

// sink is one output file (or stream).
type sink struct {
	f  *os.File // nil for a stream
	bw *bufio.Writer
}

func (k *sink) close() error {
	if k.bw == nil {
		return nil
	}
	err := k.bw.Flush()
	if k.f != nil {
		if cerr := k.f.Close(); err == nil {
			err = cerr
		}
		k.f = nil
	}
	k.bw = nil
	return err
}

// Header lines of the CSV files (nvidia-smi's field names; sizes in bytes).
const (
	csvGPUHeader  = "timestamp, index, uuid, name, memory.total [B], memory.reserved [B], memory.used [B], memory.free [B]\n"
	csvAppsHeader = "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [B]\n"
)

// NewWriter writes to path (created or truncated; with rot, the parts of
// path). Nothing is created before the first tick.
func NewWriter(path string, rot Rotation) *Writer {
	return &Writer{path: path, rot: rot, csv: strings.EqualFold(filepath.Ext(path), ".csv")}
}

// NewStreamWriter writes every tick to w as JSON lines (no rotation).
func NewStreamWriter(w io.Writer) *Writer {
	return &Writer{main: sink{bw: bufio.NewWriter(w)}}
}

// Files are the files written so far, in order (for CSV, each GPU file
// followed by its processes' file).
func (w *Writer) Files() []string { return w.files }

// WriteTick writes the samples of one tick and flushes them.
func (w *Writer) WriteTick(samples []GPUSample) error {
	if len(samples) == 0 {
		return nil
	}
	t := samples[0].TimeUs
	if w.path != "" && (w.main.bw == nil || w.due(t)) {
		if err := w.open(t); err != nil {
			return err
		}
	}
	w.buf, w.abuf = w.buf[:0], w.abuf[:0]
	for i := range samples {
		if w.csv {
			w.buf, w.abuf = appendCSV(w.buf, w.abuf, &samples[i])
		} else {
			w.buf = AppendJSON(w.buf, &samples[i])
		}
	}
	if _, err := w.main.bw.Write(w.buf); err != nil {
		return err
	}
	if err := w.main.bw.Flush(); err != nil {
		return err
	}
	w.n += int64(len(w.buf) + len(w.abuf))
	if w.csv {
		if _, err := w.apps.bw.Write(w.abuf); err != nil {
			return err
		}
		return w.apps.bw.Flush()
	}
	return nil
}

func (w *Writer) due(t int64) bool {
	return w.rot.Every > 0 && t-w.start >= w.rot.Every.Microseconds() ||
		w.rot.Bytes > 0 && w.n >= w.rot.Bytes
}

func (w *Writer) open(t int64) error {
	if err := w.closeFiles(); err != nil {
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
	if err := w.main.create(name); err != nil {
		return err
	}
	w.files = append(w.files, name)
	w.n, w.start = 0, t
	if w.csv {
		apps := strings.TrimSuffix(name, filepath.Ext(name)) + ".apps.csv"
		if err := w.apps.create(apps); err != nil {
			return err
		}
		w.files = append(w.files, apps)
		if _, err := w.main.bw.WriteString(csvGPUHeader); err != nil {
			return err
		}
		if _, err := w.apps.bw.WriteString(csvAppsHeader); err != nil {
			return err
		}
	}
	return nil
}

func (k *sink) create(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	k.f, k.bw = f, bufio.NewWriterSize(f, 64<<10)
	return nil
}

// partName is path with the UTC time t (µs), and seq, before its extension.
func partName(path string, t int64, seq string) string {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	return base + "-" + time.UnixMicro(t).UTC().Format("20060102T150405Z") + seq + ext
}

func (w *Writer) closeFiles() error {
	err := w.main.close()
	if aerr := w.apps.close(); err == nil {
		err = aerr
	}
	return err
}

// Close flushes and closes the current file(s) (a stream is flushed only).
func (w *Writer) Close() error { return w.closeFiles() }

// appendCSV appends g's GPU row to b and its process rows to apps.
func appendCSV(b, apps []byte, g *GPUSample) ([]byte, []byte) {
	ts := time.UnixMicro(g.TimeUs).UTC().AppendFormat(nil, "2006-01-02T15:04:05.000000Z")
	b = append(b, ts...)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(g.Index), 10)
	b = append(b, ", "...)
	b = append(b, csvText(g.UUID)...)
	b = append(b, ", "...)
	b = append(b, csvText(g.Name)...)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, g.TotalBytes, 10)
	b = append(b, ", "...)
	if g.MemoryInfo >= 2 {
		b = strconv.AppendInt(b, g.ReservedBytes, 10)
	} else {
		b = append(b, "[N/A]"...)
	}
	b = append(b, ", "...)
	b = strconv.AppendInt(b, g.UsedBytes, 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, g.FreeBytes, 10)
	b = append(b, '\n')
	for _, p := range g.Processes {
		apps = append(apps, ts...)
		apps = append(apps, ", "...)
		apps = append(apps, csvText(g.UUID)...)
		apps = append(apps, ", "...)
		apps = strconv.AppendInt(apps, p.PID, 10)
		apps = append(apps, ", "...)
		apps = append(apps, csvText(p.Name)...)
		apps = append(apps, ", "...)
		if p.HasUsed {
			apps = strconv.AppendInt(apps, p.UsedBytes, 10)
		} else {
			apps = append(apps, "[N/A]"...)
		}
		apps = append(apps, '\n')
	}
	return b, apps
}

// csvText keeps a name on its line: nvidia-smi CSV has no quoting (the
// reader joins a name's commas back), so only line breaks and other
// control characters are replaced; an empty name is "[N/A]".
func csvText(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
	if s == "" {
		return "[N/A]"
	}
	return s
}
