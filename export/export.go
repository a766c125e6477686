// Package export writes what gpuleak reads and finds as files for query
// engines (DuckDB, Spark, Trino): every parsed table of every artifact under
// the roots (a snapshot's segments, blocks, events, frames and stacks; an
// NVML log's samples; a compute-sanitizer report's records; an OOM
// message's facts; a profiler trace's tables) with two columns added, job
// and path, and a findings table, one row per finding. Files are Parquet
// (written with parquet-go: Zstd, the tables' column order, strings
// dictionary-encoded, the Arrow schema under "ARROW:schema"; parquet.go
// gives the type mapping; time columns are timestamp[us, UTC] where the
// parsers give them) or Arrow IPC, laid out in Hive partitions:
//
//	OUT/table=TABLE/date=YYYY-MM-DD/host=HOST/part-RUN-N.parquet
//
// date is the UTC date of the artifact (the same date the daily report
// gives it: its own latest timestamp, else its file's modification time),
// host the artifact's host (--group-by, DCGM or gpustat labels) or
// "unknown"; without a --group-by host, a row that names its own host (a
// fleet log's `host: ` prefix) goes to that host's partition. Partition values are escaped as Hive escapes them (%XX).
// RUN names one export (its UTC start time and random bits), so that an
// export into a directory that holds parts adds its own beside them; a
// part is never replaced. Parts are mode 0644.
package export

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/daily"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// Format is the file format of an export.
type Format string

// Export formats.
const (
	Parquet Format = "parquet"
	Arrow   Format = "arrow" // Arrow IPC files (.arrow)
)

// Emit takes one record batch of a parsed table (the table's name, as its
// package documents it: segments, samples, records, ...). It does not
// keep rec past the call.
type Emit func(table string, rec arrow.RecordBatch) error

// TablesFunc reads one artifact and emits its parsed tables' batches: the
// seam through which export reads files. Errors are the parsers'
// positioned errors.
type TablesFunc func(ctx context.Context, path string, emit Emit) error

// Options control an export.
type Options struct {
	Roots   []string
	Pattern *daily.Pattern
	Out     string
	Format  Format
	Workers int
}

// Summary counts what an export wrote.
type Summary struct {
	Files, Exported, Skipped, Unreadable int
	// Rows by table.
	Rows map[string]int64
	// Parts: files written.
	Parts int
	// Errors: the first unreadable inputs (at most 20), with their errors.
	Errors []string
	// ReadInPart counts the inputs exported with lines skipped that could
	// not be read (report.ReadInPart); InPart names the first (at most
	// 20), with what was skipped.
	ReadInPart int
	InPart     []string
}

// Run exports every artifact under the roots: the findings of each group
// (by analyze, the daily report's seam) and every input's tables (by
// tables). Errors: a root that cannot be walked, an output that cannot be
// written, ctx's error; an unreadable input is counted and listed, not an
// error.
func Run(ctx context.Context, opt Options, analyze daily.AnalyzeFunc, tables TablesFunc) (*Summary, error) {
	if opt.Format != Parquet && opt.Format != Arrow {
		return nil, fmt.Errorf("unknown export format %q (choose parquet or arrow)", opt.Format)
	}
	walked, err := daily.Walk(opt.Roots, opt.Pattern)
	if err != nil {
		return nil, err
	}
	groups := walked.Groups
	e := &exporter{opt: opt, run: runID(), sum: Summary{Rows: map[string]int64{}}}
	// Every directory this export made and left empty goes again: a part
	// that failed midway leaves no empty partition, and an export that
	// wrote nothing leaves no trace.
	defer e.dirs.RemoveEmpty()
	if err := e.dirs.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, err
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// What the walk skipped is counted and listed, never silent: a
	// dangling link or an unreadable directory as unreadable, a directory
	// reached again by another path as skipped.
	for _, s := range walked.Skips {
		if !s.Unreadable {
			e.sum.Skipped++
			continue
		}
		e.sum.Unreadable++
		if len(e.sum.Errors) < 20 {
			e.sum.Errors = append(e.sum.Errors, s.Path+": "+s.Reason)
		}
	}
	e.sum.Unreadable += walked.Skipped - len(walked.Skips)
	ch := make(chan daily.Group)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for g := range ch {
				if err := e.group(ctx, g, analyze, tables); err != nil {
					e.fail(err)
				}
			}
		})
	}
	for _, g := range groups {
		if e.failed() != nil || ctx.Err() != nil {
			break
		}
		ch <- g
	}
	close(ch)
	wg.Wait()
	if err := e.failed(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &e.sum, nil
}

type exporter struct {
	opt Options
	// run names this export's parts (part-RUN-N), so that parts added
	// beside an earlier export's never take their names: the UTC time and
	// random bits.
	run  string
	part atomic.Int64
	// dirs made by this export, removed again where left empty.
	dirs Dirs
	mu   sync.Mutex
	sum  Summary
	err  error
}

func (e *exporter) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

func (e *exporter) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// group exports one group: its findings, then each readable input's tables.
func (e *exporter) group(ctx context.Context, g daily.Group, analyze daily.AnalyzeFunc, tables TablesFunc) error {
	paths := make([]string, len(g.Files))
	modUs := map[string]int64{}
	for i, f := range g.Files {
		paths[i] = f.Path
		modUs[f.Path] = f.ModUs
	}
	a, err := analyze(ctx, paths)
	if err != nil {
		return err
	}
	var skipped, unreadable int
	var errs, inPart []string
	for _, p := range paths {
		if err, bad := a.Errors[p]; bad {
			// An archive may hold inputs: it is named, with how to
			// extract it, as an input not read, not counted as a file of
			// no artifact.
			if errors.Is(err, parse.ErrUnknownFormat) && !errors.Is(err, parse.ErrContainer) {
				skipped++
			} else {
				unreadable++
				errs = append(errs, err.Error())
			}
		}
	}
	rows := map[string]int64{}
	exported := 0
	var uuidOf map[string]string
	if a.Report != nil {
		dates := map[string]string{}
		undated := map[string]bool{} // a log without dates: its findings take its file's date
		for _, in := range a.Report.Inputs {
			if in.Error != "" {
				continue
			}
			dates[in.Path] = daily.InputDate(in, modUs[in.Path])
			undated[in.Path] = !daily.ContentDated(in)
		}
		// A GPU index of one log (dmon, pmon) is named by the UUID
		// another log of the job gives it (--query-gpu), as the daily
		// report names it: in the findings and the samples tables.
		uuidOf = daily.GPUUUIDs(a.Report.Findings)
		// What an input read in part left out (lines skipped, a gzip
		// stream cut short) is said in the metadata of every part that
		// holds its rows, so that a query engine's reader sees it too.
		partial := map[string]string{}
		for _, in := range a.Report.Inputs {
			if note := report.ReadInPart(in); in.Error == "" && note != "" {
				partial[in.Path] = note
			}
		}
		// A log whose times are not dates says so in the metadata of
		// every part that holds its samples or findings.
		undatedNotes := map[string]string{}
		for _, in := range a.Report.Inputs {
			if note := UndatedNote(in); in.Error == "" && note != "" {
				undatedNotes[in.Path] = note
			}
		}
		if err := e.findings(g, a.Report.Findings, dates, undated, uuidOf, partNotes{partial, undatedNotes}, rows); err != nil {
			return err
		}
		for _, in := range a.Report.Inputs {
			if in.Error != "" {
				continue
			}
			host := g.Host
			if h := hostOf(a.Report.Findings, in.Path); host == "" && h != "" {
				host = h
			}
			if err := e.tables(ctx, g, in.Path, dates[in.Path], host, uuidOf, partNotes{partial, undatedNotes}, tables, rows); err != nil {
				var pe *parse.Error
				if errors.As(err, &pe) {
					unreadable++
					errs = append(errs, err.Error())
					continue
				}
				return err
			}
			exported++
			if note := report.ReadInPart(in); note != "" {
				inPart = append(inPart, in.Path+": "+note)
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sum.Files += len(paths)
	e.sum.Exported += exported
	e.sum.Skipped += skipped
	e.sum.Unreadable += unreadable
	for k, n := range rows {
		e.sum.Rows[k] += n
	}
	for _, s := range errs {
		if len(e.sum.Errors) < 20 {
			e.sum.Errors = append(e.sum.Errors, s)
		}
	}
	e.sum.ReadInPart += len(inPart)
	for _, s := range inPart {
		if len(e.sum.InPart) < 20 {
			e.sum.InPart = append(e.sum.InPart, s)
		}
	}
	return nil
}

// hostOf: the host an NVML log names (DCGM, gpustat), from its findings.
func hostOf(fs []report.Finding, path string) string {
	for _, f := range fs {
		if f.Path == path && f.Host != "" {
			return f.Host
		}
	}
	return ""
}

// tables writes one input's parsed tables, one part file per table.
// uuidOf (daily.GPUUUIDs) fills the samples' gpu_uuid where a log gives
// only the index; notes mark the parts of an input read in part
// (ReadInPartKey) or whose times are not dates (UndatedKey).
func (e *exporter) tables(ctx context.Context, g daily.Group, path, date, host string, uuidOf map[string]string, notes partNotes, tables TablesFunc, rows map[string]int64) error {
	type key struct{ table, host string }
	ws := map[key]*partWriter{}
	var order []key // ws's keys, the oldest first
	defer func() {
		for _, w := range ws {
			w.abort()
		}
	}()
	// closePart closes k's part: it is whole, and counted.
	closePart := func(k key) error {
		w := ws[k]
		delete(ws, k)
		if err := w.close(); err != nil {
			return err
		}
		e.mu.Lock()
		e.sum.Parts++
		e.mu.Unlock()
		return nil
	}
	err := tables(ctx, path, func(table string, rec arrow.RecordBatch) error {
		if table == "samples" && len(uuidOf) > 0 {
			named := withUUIDs(rec, uuidOf)
			defer named.Release()
			rec = named
		}
		// A fleet log (pdsh, clush, ansible) names a host per row: with
		// no --group-by host, each row goes to its own host's partition,
		// as its findings do; a row that names none to the input's.
		parts := []hostRows{{host: host, rec: rec}}
		if g.Host == "" {
			var err error
			if parts, err = byHost(rec, host); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			defer func() {
				for _, p := range parts {
					p.rec.Release()
				}
			}()
		}
		for _, p := range parts {
			k := key{table, p.host}
			w := ws[k]
			if w == nil {
				for len(ws) >= maxOpenParts {
					oldest := order[0]
					order = order[1:]
					if ws[oldest] != nil {
						if err := closePart(oldest); err != nil {
							return err
						}
					}
				}
				var err error
				if w, err = e.newPart(table, date, p.host, notes.mark(withColumns(rec.Schema()), []string{path})); err != nil {
					return err
				}
				ws[k] = w
				order = append(order, k)
			}
			out := addColumns(p.rec, g.Job, path)
			err := w.write(out)
			out.Release()
			if err != nil {
				return err
			}
			rows[table] += p.rec.NumRows()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range order {
		if ws[k] != nil {
			if err := closePart(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxOpenParts bounds the part files an input keeps open at once: a fleet
// log of thousands of hosts writes a part per host, and each open part
// holds a file and its writer's buffers. Past it, the oldest is closed;
// its host's later rows start a new part.
const maxOpenParts = 64

// hostRows: the rows of a batch that go to one host's partition.
type hostRows struct {
	host string
	rec  arrow.RecordBatch
}

// byHost splits rec by its host column (a dictionary of strings, as
// parse/nvml's samples table has it): one batch per host, in the order of
// each host's first row, each retained for the caller to release. A row
// whose host is null, and every row of a batch without that column, goes
// to def's. Each host's rows are its runs of consecutive rows, sliced and
// concatenated (a fleet log interleaves its hosts' lines). Errors:
// array.Concatenate's.
func byHost(rec arrow.RecordBatch, def string) ([]hostRows, error) {
	var hosts *array.Dictionary
	if ix := rec.Schema().FieldIndices("host"); len(ix) == 1 {
		hosts, _ = rec.Column(ix[0]).(*array.Dictionary)
	}
	var names *array.String
	if hosts != nil {
		names, _ = hosts.Dictionary().(*array.String)
	}
	type run struct{ lo, hi int64 }
	runs := map[string][]run{}
	var order []string
	for i := range rec.NumRows() {
		h := def
		if names != nil && hosts.IsValid(int(i)) {
			h = names.Value(hosts.GetValueIndex(int(i)))
		}
		rs, ok := runs[h]
		if !ok {
			order = append(order, h)
		}
		if n := len(rs); n > 0 && rs[n-1].hi == i {
			rs[n-1].hi++
		} else {
			rs = append(rs, run{i, i + 1})
		}
		runs[h] = rs
	}
	if len(order) <= 1 {
		if len(order) == 1 {
			def = order[0]
		}
		rec.Retain()
		return []hostRows{{host: def, rec: rec}}, nil
	}
	out := make([]hostRows, 0, len(order))
	for _, h := range order {
		rs := runs[h]
		if len(rs) == 1 {
			out = append(out, hostRows{h, rec.NewSlice(rs[0].lo, rs[0].hi)})
			continue
		}
		cols := make([]arrow.Array, rec.NumCols())
		var n int64
		for _, r := range rs {
			n += r.hi - r.lo
		}
		var err error
		for c := range cols {
			pieces := make([]arrow.Array, len(rs))
			for k, r := range rs {
				pieces[k] = array.NewSlice(rec.Column(c), r.lo, r.hi)
			}
			cols[c], err = array.Concatenate(pieces, memory.DefaultAllocator)
			for _, p := range pieces {
				p.Release()
			}
			if err != nil {
				for _, a := range cols[:c] {
					a.Release()
				}
				for _, p := range out {
					p.rec.Release()
				}
				return nil, err
			}
		}
		out = append(out, hostRows{h, array.NewRecordBatch(rec.Schema(), cols, n)})
		for _, a := range cols {
			a.Release()
		}
	}
	return out, nil
}

// withUUIDs is a samples batch (parse/nvml's Schema) with each row's null
// gpu_uuid filled from uuidOf by its host and gpu index; rec itself
// (retained) when the columns are not those of that schema or no row
// changes.
func withUUIDs(rec arrow.RecordBatch, uuidOf map[string]string) arrow.RecordBatch {
	sc := rec.Schema()
	col := func(name string) arrow.Array {
		if ix := sc.FieldIndices(name); len(ix) == 1 {
			return rec.Column(ix[0])
		}
		return nil
	}
	uuids, _ := col("gpu_uuid").(*array.Dictionary)
	gpus, _ := col("gpu").(*array.Int32)
	hosts, _ := col("host").(*array.Dictionary)
	if uuids == nil || gpus == nil {
		rec.Retain()
		return rec
	}
	str := func(d *array.Dictionary, i int) (string, bool) {
		if d == nil || d.IsNull(i) {
			return "", false
		}
		v, ok := d.Dictionary().(*array.String)
		if !ok {
			return "", false
		}
		return v.Value(d.GetValueIndex(i)), true
	}
	n := int(rec.NumRows())
	b := array.NewDictionaryBuilder(memory.DefaultAllocator, uuids.DataType().(*arrow.DictionaryType))
	defer b.Release()
	sb, ok := b.(*array.BinaryDictionaryBuilder)
	if !ok {
		rec.Retain()
		return rec
	}
	changed := false
	for i := range n {
		u, ok := str(uuids, i)
		if !ok && !gpus.IsNull(i) {
			h, _ := str(hosts, i)
			u, ok = uuidOf[h+"|"+fmt.Sprint(gpus.Value(i))]
			changed = changed || ok
		}
		var err error
		if ok {
			err = sb.AppendString(u)
		} else {
			sb.AppendNull()
		}
		if err != nil {
			rec.Retain()
			return rec
		}
	}
	if !changed {
		rec.Retain()
		return rec
	}
	named := sb.NewArray()
	defer named.Release()
	cols := append([]arrow.Array(nil), rec.Columns()...)
	cols[sc.FieldIndices("gpu_uuid")[0]] = named
	return array.NewRecordBatch(sc, cols, int64(n))
}

// ReadInPartKey is the key, in a part's schema metadata (and so in a
// Parquet file's key-value metadata beside ARROW:schema), under which an
// export says that inputs whose rows the part holds were read in part: a
// JSON object from each such input's path to what was left out ("1 line
// could not be read and was skipped (line 72); the gzip stream is cut
// short at byte offset 5956 ..."). Absent when every input was read whole.
// In DuckDB: SELECT * FROM parquet_kv_metadata('part.parquet').
const ReadInPartKey = "gpuleak:read_in_part"

// UndatedKey is the key, in a part's schema metadata (Parquet key-value
// metadata), under which an export says that NVML logs whose rows the
// part holds carry no dates (daily.ContentDated): a JSON object from
// each such log's path to how its time_us was placed (UndatedNote). Their
// time_us are not when the samples were taken: a log without times is
// placed by row order from the Unix epoch (1970-01-01) an assumed or
// given period apart, one with times of day only on 1970-01-01; their
// partition's date is the file's modification date, and the findings'
// time columns are null. Order and spacing are what such time_us give.
// Absent when every log's times are dates.
const UndatedKey = "gpuleak:undated_times"

// UndatedNote says how an input's times were placed when they are not
// dates (its UndatedKey entry); "" when they are.
func UndatedNote(in report.Input) string {
	if daily.ContentDated(in) || in.Samples == nil {
		return ""
	}
	switch in.Clock {
	case "row-order":
		period := "the period given"
		if p := in.AssumedIntervalS; p != nil {
			period = fmt.Sprintf("%g s, assumed (the log does not say its period)", *p)
		}
		return "the log has no times: time_us is 1970-01-01 00:00:00 UTC plus each sample's place in the log times " + period + ", its order, not when it was taken"
	case "time-of-day":
		return "the log has times of day without dates: time_us's date is 1970-01-01 (or the day after where the clock went back), not the day it was taken"
	}
	return ""
}

// partNotes are what the parts of an input say of it in their metadata:
// read in part (ReadInPartKey), times that are not dates (UndatedKey),
// each by input path.
type partNotes struct {
	partial, undated map[string]string
}

// mark is s with each key set for those of paths its notes name; s
// itself when none.
func (n partNotes) mark(s *arrow.Schema, paths []string) *arrow.Schema {
	return markNotes(markNotes(s, paths, ReadInPartKey, n.partial), paths, UndatedKey, n.undated)
}

// markNotes is s with key set to the notes of those of paths that notes
// names (a JSON object by path); s itself when none.
func markNotes(s *arrow.Schema, paths []string, key string, notes map[string]string) *arrow.Schema {
	kept := map[string]string{}
	for _, p := range paths {
		if n, ok := notes[p]; ok {
			kept[p] = n
		}
	}
	if len(kept) == 0 {
		return s
	}
	v, err := json.Marshal(kept) // sorted keys: the same input, the same bytes
	if err != nil {
		return s
	}
	md := s.Metadata()
	keys := append(md.Keys(), key)
	vals := append(md.Values(), string(v))
	m := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(s.Fields(), &m)
}

// withColumns is a table's schema with job and path added.
func withColumns(s *arrow.Schema) *arrow.Schema {
	fs := append(append([]arrow.Field(nil), s.Fields()...),
		arrow.Field{Name: "job", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "path", Type: arrow.BinaryTypes.String})
	md := s.Metadata()
	return arrow.NewSchema(fs, &md)
}

func addColumns(rec arrow.RecordBatch, job, path string) arrow.RecordBatch {
	n := int(rec.NumRows())
	job1, path1 := constant(job, n), constant(path, n)
	defer job1.Release()
	defer path1.Release()
	cols := append(append([]arrow.Array(nil), rec.Columns()...), job1, path1)
	return array.NewRecordBatch(withColumns(rec.Schema()), cols, int64(n))
}

func constant(s string, n int) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(n)
	for range n {
		b.Append(s)
	}
	return b.NewArray()
}

// partWriter writes one part file, through a temporary name renamed into
// place when whole.
type partWriter struct {
	f    *os.File
	path string
	pq   *parquetWriter
	ipc  *ipc.FileWriter
}

func (e *exporter) newPart(table, date, host string, schema *arrow.Schema) (*partWriter, error) {
	if host == "" {
		host = "unknown"
	}
	dir := filepath.Join(e.opt.Out, "table="+Escape(table), "date="+Escape(date), "host="+Escape(host))
	if err := e.dirs.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ext := ".parquet"
	if e.opt.Format == Arrow {
		ext = ".arrow"
	}
	name := filepath.Join(dir, fmt.Sprintf("part-%s-%d%s", e.run, e.part.Add(1)-1, ext))
	f, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file 0600; a part is for a fleet's engines to
	// read, as a report is (report -o writes 0644 too).
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	w := &partWriter{f: f, path: name}
	if e.opt.Format == Arrow {
		w.ipc, err = ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithZstd())
	} else {
		w.pq, err = newParquetWriter(f, schema)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

func (w *partWriter) write(rec arrow.RecordBatch) error {
	var err error
	if w.ipc != nil {
		err = w.ipc.Write(rec)
	} else {
		err = w.pq.write(rec)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

func (w *partWriter) close() error {
	var err error
	if w.ipc != nil {
		err = w.ipc.Close()
	} else {
		err = w.pq.close()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("%s: %w", w.path, err)
	}
	// Published by a hard link, which fails where the name exists, never
	// by a rename, which would replace a part of an earlier export.
	tmp := w.f.Name()
	w.f = nil
	defer os.Remove(tmp)
	if err := os.Link(tmp, w.path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: already exists (an export never replaces a part): %w", w.path, err)
		}
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

// runID names one export's parts: its UTC start time (so that a listing
// sorts by run) and 32 random bits (two exports in the same second).
func runID() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		binary.BigEndian.PutUint32(b[:], uint32(os.Getpid())^uint32(time.Now().UnixNano()))
	}
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// abort drops a part that was not closed (an input that failed midway).
func (w *partWriter) abort() {
	if w.f == nil {
		return
	}
	if w.ipc != nil {
		w.ipc.Close()
	}
	// A Parquet part is dropped unfinished: its footer is never written.
	w.f.Close()
	os.Remove(w.f.Name())
	w.f = nil
}

// Escape escapes a Hive partition value: the characters Hive escapes
// (path separators, =, %, control characters, ...) become %XX.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	switch s {
	case "":
		return "unknown"
	case ".", "..":
		return strings.Repeat("%2E", len(s))
	}
	return b.String()
}
