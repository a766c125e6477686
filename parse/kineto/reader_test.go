package kineto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// counts reads every batch of a trace and counts rows per table.
func counts(t *testing.T, r io.Reader, opts ...Option) (mem, spans int64, cuda int64, meta *Metadata, err error) {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	k := NewReader(r, "test", append(opts, WithAllocator(alloc))...)
	defer k.Release()
	for k.Next() {
		rec := k.RecordBatch()
		switch k.Table() {
		case TableMemory:
			mem += rec.NumRows()
			dt := rec.Column(MemDeviceType).(*array.Int32)
			for i := 0; i < dt.Len(); i++ {
				if dt.Value(i) == DeviceCUDA {
					cuda++
				}
			}
		case TableSpans:
			spans += rec.NumRows()
		}
	}
	return mem, spans, cuda, k.Metadata(), k.Err()
}

// TestFixture: the shared fixture's README says the trace holds 329
// [memory] events; Python's json module counts 297 of them on CUDA
// (Device Type 1), 784 cpu_op, 1886 python_function and 16
// user_annotation spans, no ProfilerStep#N.
func TestFixture(t *testing.T) {
	f, err := os.Open("../../testdata/pytorch/kineto_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, spans, cuda, meta, err := counts(t, f, WithBatchSize(100))
	if err != nil {
		t.Fatal(err)
	}
	if mem != 329 || cuda != 297 || spans != 784+1886+16 || meta.Steps != 0 {
		t.Errorf("memory %d (cuda %d), spans %d, steps %d; want 329 (297), 2686, 0", mem, cuda, spans, meta.Steps)
	}
	if meta.ProfileMemory == nil || !*meta.ProfileMemory || meta.WithStack == nil || !*meta.WithStack {
		t.Errorf("profile_memory/with_stack not read: %+v", meta)
	}
	if meta.BaseTimeNs != 1790857026000000000 || len(meta.Devices) != 1 || meta.Devices[0].Name != "NVIDIA H200" {
		t.Errorf("metadata %+v", meta)
	}
}

// TestH200Gzip: the H200 recording (testdata/README.md) holds 430
// [memory] events, 390 of them on device 0 (/work/rec/README.md).
func TestH200Gzip(t *testing.T) {
	in, err := parse.Open("../../testdata/kineto/profile_keep_outputs_trace.json.gz", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	mem, _, cuda, _, err := counts(t, in.Reader())
	if err != nil || mem != 430 || cuda != 390 {
		t.Errorf("memory %d, cuda %d, err %v; want 430, 390", mem, cuda, err)
	}
}

// TestField reads the field traces in place: each must read whole, with
// the [memory] count Python's json module gives (see testdata/README.md).
func TestField(t *testing.T) {
	want := map[string]int64{
		"CodingPlatelets__trace.json":                                     1070,
		"CodingPlatelets__trace_128token_100Kpar_4exp_4batch_128seq.json": 1070,
		"Gabriellanaro__trace.json":                                       496,
	}
	for name, n := range want {
		f, err := os.Open("../../../shared/field/kineto/" + name)
		if errors.Is(err, os.ErrNotExist) {
			t.Skip("../shared/field is absent")
		}
		if err != nil {
			t.Fatal(err)
		}
		mem, _, _, _, err := counts(t, f)
		f.Close()
		if err != nil || mem != n {
			t.Errorf("%s: %d [memory] events, err %v; want %d", name, mem, err, n)
		}
	}
}

func TestBareArray(t *testing.T) {
	doc := `[{"ph":"i","name":"[memory]","pid":1,"tid":2,"ts":1700000000000000,"args":{"Addr":4096,"Bytes":-512,"Device Type":1,"Device Id":0}},
	{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":2,"ts":1.5,"dur":2.25}]`
	mem, spans, cuda, _, err := counts(t, strings.NewReader(doc))
	if err != nil || mem != 1 || spans != 1 || cuda != 1 {
		t.Errorf("memory %d spans %d cuda %d err %v", mem, spans, cuda, err)
	}
}

// TestBadInput: broken traces give a positioned *parse.Error; what is not
// a trace wraps parse.ErrNotMine.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		notMine   bool
	}{
		{"empty", "", true},
		{"number", "42", true},
		{"truncated", `{"traceEvents":[{"ph":"X","cat":"cpu_op"`, false},
		{"bad json", `{"traceEvents":[{"ph":"X",]}`, false},
		{"events not array", `{"traceEvents":{}}`, false},
		{"memory without addr", `{"traceEvents":[{"ph":"i","name":"[memory]","ts":1,"args":{"Bytes":1}}]}`, false},
		{"memory without ts", `{"traceEvents":[{"ph":"i","name":"[memory]","args":{"Addr":1,"Bytes":1}}]}`, false},
		{"bad dur", `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","ts":1,"dur":-4}]}`, false},
	} {
		_, _, _, _, err := counts(t, strings.NewReader(c.doc))
		var pe *parse.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v is not a *parse.Error", c.name, err)
			continue
		}
		if errors.Is(err, parse.ErrNotMine) != c.notMine {
			t.Errorf("%s: %v: not-mine %v, want %v", c.name, err, !c.notMine, c.notMine)
		}
	}
}

func TestMaxEvents(t *testing.T) {
	doc := `{"traceEvents":[{"ph":"M"},{"ph":"M"},{"ph":"M"}]}`
	if _, _, _, _, err := counts(t, strings.NewReader(doc), WithMaxEvents(2)); err == nil {
		t.Error("3 events read with a limit of 2")
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head string
		want parse.Format
	}{
		{`{"schemaVersion": 1, "traceEvents": [`, FormatTrace},
		{`[{"name": "x", "ph": "X", "ts": 1}]`, FormatTrace},
		{`[[1796026084554272, 1796026084554272, 17960`, FormatMemoryTimeline},
		{`[[-1, 1, 16777216, 0], [-1, 1, 16384, 0]]`, FormatMemoryTimelineRaw},
		{"<html>\n<head><meta charset=\"utf-8\" /><title>GPU Memory Timeline HTML</title></head>", FormatMemoryTimelineHTML},
		{`{"active.all.current": 3}`, parse.FormatUnknown},
		{`{"note": "traceEvents"}`, parse.FormatUnknown},
		// traceEvents beyond the head: Kineto's first keys say it is a
		// trace, even with a value cut by the head's end.
		{`{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"`, FormatTrace},
		{`{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "pg_config": [{"ranks": [0, 1, 2`, FormatTrace},
		{`{"distributedInfo": {"backend": "nccl", "rank": 0, "pg_config": [{"ranks": [0, 1`, FormatTrace},
		{`{"schemaVersion": 1, "record_shapes": 1, "profile_memory": 1, "with_stack": 0, "distributedInfo": {`, FormatTrace},
		// schemaVersion alone is many formats' key: another of Kineto's
		// must follow it.
		{`{"schemaVersion": 2, "name": "config", "items": [`, parse.FormatUnknown},
		{`{"schemaVersion": 1}`, parse.FormatUnknown},
		{`{"version": 1, "deviceProperties": [`, parse.FormatUnknown},
	} {
		if got := SniffFormat([]byte(c.head)); got != c.want {
			t.Errorf("%.40q: %q, want %q", c.head, got, c.want)
		}
	}
}

// FuzzReader: any bytes give tables or a *parse.Error, never a panic, and
// Arrow memory is always released.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"traceEvents":[{"ph":"i","name":"[memory]","pid":1,"tid":2,"ts":1.5,"args":{"Addr":4096,"Bytes":512,"Total Allocated":512,"Total Reserved":2097152,"Device Type":1,"Device Id":0}},{"ph":"X","cat":"python_function","name":"a.py(3): f","ts":1,"dur":2,"args":{"Python id":2,"Python parent id":1}}],"baseTimeNanoseconds":1}`))
	f.Add([]byte(`[{"ph":"i","name":"[OutOfMemory]","ts":3,"args":{"Bytes":1024,"Device Type":1,"Device Id":0}}]`))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"traceEvents":[]}`))
	zw.Close()
	f.Add(gz.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer alloc.AssertSize(t, 0)
		k := NewReader(bytes.NewReader(data), "fuzz", WithAllocator(alloc), WithBatchSize(3), WithMaxEvents(1<<12))
		defer k.Release()
		for k.Next() {
			_ = k.RecordBatch().NumRows()
		}
		if err := k.Err(); err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *parse.Error: %v", err)
			}
		}
	})
}

// FuzzTimeline: any bytes read as a memory timeline (.json or .raw.json)
// give a timeline whose rows match its times, or a *parse.Error.
func FuzzTimeline(f *testing.F) {
	f.Add([]byte(`[[1, 2, 3], [[0, 1, 0, 0, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 5, 0, 0, 0]]]`), false)
	f.Add([]byte(`[[-1, 1, 16777216, 0], [1796090514871316057, 2, 2097152, 2], [1796090514963111661, 4, -8388608, 4]]`), true)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		tl, err := ReadTimeline(bytes.NewReader(data), "fuzz", raw)
		if err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *parse.Error: %v", err)
			}
			return
		}
		if len(tl.Bytes) != len(tl.TimesUs) {
			t.Fatalf("%d rows for %d times", len(tl.Bytes), len(tl.TimesUs))
		}
		for _, row := range tl.Bytes {
			if len(row) != len(Categories) {
				t.Fatalf("row of %d categories", len(row))
			}
		}
	})
}

// TestBigHeader: a trace whose header (distributedInfo of 14 process
// groups of 1024 ranks each, as a large job's every rank records them)
// puts traceEvents past the 64 KiB head is recognised and read whole:
// the header is skipped key by key, and the one [memory] event after it
// is read.
func TestBigHeader(t *testing.T) {
	doc := bigHeaderTrace(14, 1024)
	if i := strings.Index(doc, `"traceEvents"`); i < parse.SniffLen {
		t.Fatalf("traceEvents at byte %d: the test needs it past %d", i, parse.SniffLen)
	}
	if got := SniffFormat([]byte(doc[:parse.SniffLen])); got != FormatTrace {
		t.Fatalf("head sniffed as %q", got)
	}
	mem, _, cuda, meta, err := counts(t, strings.NewReader(doc))
	if err != nil || mem != 1 || cuda != 1 || meta.ProfileMemory == nil || !*meta.ProfileMemory {
		t.Errorf("memory %d (cuda %d), meta %+v, err %v; want 1 (1), profile_memory read", mem, cuda, meta, err)
	}
}

// bigHeaderTrace is a trace whose distributedInfo holds groups process
// groups of ranks ranks each, before one [memory] event.
func bigHeaderTrace(groups, ranks int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320}], "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": %d, "pg_count": %d, "pg_config": [`, ranks, groups)
	for g := 0; g < groups; g++ {
		if g > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"pg_name": "%d", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": %d, "ranks": [`, g, ranks)
		for r := 0; r < ranks; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, r)
		}
		b.WriteString("]}")
	}
	b.WriteString(`], "nccl_version": "2.27.3"}, "record_shapes": 1, "profile_memory": 1, "with_stack": 1, "traceEvents": [`)
	b.WriteString(`{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1790857026000000.5, "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512, "Device Id": 0, "Device Type": 1, "Addr": 139610607234688}}`)
	b.WriteString(`], "traceName": "t.json"}`)
	return b.String()
}

// TestOperatorCategory: PyTorch 1.8 and 1.9 wrote "Operator" for ops and
// record_function ranges alike (kineto's tb_plugin tests model it:
// aten::to and ProfilerStep#1 both "Operator"), and tids as strings. The
// namespaced names are cpu_op spans, the others user_annotation, one of
// them a step; the string tid "123" is thread 123, "stream 7" none (-1).
func TestOperatorCategory(t *testing.T) {
	doc := `[{"ph": "X", "cat": "Operator", "name": "ProfilerStep#1", "pid": 13721, "tid": "123", "ts": 50, "dur": 400},
	{"ph": "X", "cat": "Operator", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 13721, "tid": "123", "ts": 100, "dur": 180},
	{"ph": "X", "cat": "Operator", "name": "aten::to", "pid": 13721, "tid": "123", "ts": 200, "dur": 60},
	{"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 430, "dur": 15},
	{"ph": "i", "s": "t", "name": "[memory]", "pid": 13721, "tid": "123", "ts": 210, "args": {"Bytes": 512, "Device Id": 0, "Device Type": 1, "Addr": 4096}}]`
	k := NewReader(strings.NewReader(doc), "test")
	defer k.Release()
	cats := map[string]string{}
	var tids []int64
	for k.Next() {
		rec := k.RecordBatch()
		switch k.Table() {
		case TableSpans:
			cat := rec.Column(SpCategory).(*array.Dictionary)
			cd := cat.Dictionary().(*array.String)
			name := rec.Column(SpName).(*array.String)
			tid := rec.Column(SpTid).(*array.Int64)
			for i := 0; i < int(rec.NumRows()); i++ {
				cats[name.Value(i)] = cd.Value(cat.GetValueIndex(i))
				tids = append(tids, tid.Value(i))
			}
		case TableMemory:
			if tid := rec.Column(MemTid).(*array.Int64).Value(0); tid != 123 {
				t.Errorf("memory event's tid %d, want 123", tid)
			}
			if rec.Column(MemTotalAllocated).IsValid(0) {
				t.Error("Total Allocated read where the event has none")
			}
		}
	}
	if err := k.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ProfilerStep#1": CategoryUserAnnotation, "aten::to": CategoryCPUOp,
		"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__": CategoryUserAnnotation}
	if fmt.Sprint(cats) != fmt.Sprint(want) || k.Metadata().Steps != 1 {
		t.Errorf("categories %v, steps %d; want %v, 1", cats, k.Metadata().Steps, want)
	}
	for _, id := range tids {
		if id != 123 {
			t.Errorf("span tid %d, want 123", id)
		}
	}
}

// A trace's header alone (deviceProperties, no traceEvents member: s32's
// "devprops_only") is told from a trace whose traceEvents is empty: the
// message says the events are missing, not that profile_memory was off.
func TestHeaderWithoutTraceEvents(t *testing.T) {
	const props = `"deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320}]`
	_, _, _, meta, err := counts(t, strings.NewReader(`{"schemaVersion": 1, `+props+`}`))
	if err != nil || meta == nil || !meta.NoTraceEvents || meta.Events != 0 {
		t.Errorf("header alone: %v %+v", err, meta)
	}
	_, _, _, meta, err = counts(t, strings.NewReader(`{"schemaVersion": 1, `+props+`, "traceEvents": []}`))
	if err != nil || meta == nil || meta.NoTraceEvents {
		t.Errorf("empty traceEvents: %v %+v", err, meta)
	}
}

// Every object without a traceEvents member but with a key only a trace
// has is a header alone, whatever that key's value (s32: deviceProperties
// of 1,000 GPUs, an empty one, distributedInfo alone); one whose keys a
// trace need not have (schemaVersion, displayTimeUnit) is not a trace. An
// empty traceEvents is a trace of no events, with or without a header.
func TestHeaderKeys(t *testing.T) {
	for _, c := range []struct {
		doc      string
		notMine  bool
		noEvents bool
		keys     string
	}{
		{`{"deviceProperties": [], "foo": [1, 2]}`, false, true, "deviceProperties"},
		{`{"deviceProperties": "odd"}`, false, true, "deviceProperties"},
		{`{"distributedInfo": {"backend": "nccl"}, "results": {"loss": [1, 2]}}`, false, true, "distributedInfo"},
		{`{"schemaVersion": 1, "distributedInfo": {}, "with_stack": 1, "traceName": "t.json"}`, false, true, "distributedInfo,with_stack,traceName"},
		{`{"schemaVersion": 1, "displayTimeUnit": "ms", "rows": []}`, true, false, ""},
		{`{"traceEvents": []}`, false, false, ""},
		{`{"schemaVersion": 1, "distributedInfo": {}, "traceEvents": []}`, false, false, "distributedInfo"},
	} {
		_, _, _, meta, err := counts(t, strings.NewReader(c.doc))
		if errors.Is(err, parse.ErrNotMine) != c.notMine {
			t.Errorf("%s: error %v, want not-mine %v", c.doc, err, c.notMine)
			continue
		}
		if c.notMine {
			continue
		}
		if err != nil || meta.NoTraceEvents != c.noEvents || meta.Events != 0 || strings.Join(meta.HeaderKeys, ",") != c.keys {
			t.Errorf("%s: %v, no traceEvents %v, keys %q; want %v, %q", c.doc, err, meta.NoTraceEvents, meta.HeaderKeys, c.noEvents, c.keys)
		}
	}
}

// A trace cut before its events ends early as one cut among them does,
// at the cut's byte offset, and says where: in which header key, or after
// the events (s32's "cut_in_header": a header of more than 64 KiB).
func TestCutInHeader(t *testing.T) {
	doc := bigHeaderTrace(14, 1024)
	ev := strings.Index(doc, `"traceEvents"`)
	for _, c := range []struct {
		at   int
		want string
	}{
		{70980, `, inside its header, in "distributedInfo", before traceEvents`},
		{ev - 3, `, inside its header, in "with_stack", before traceEvents`},
		{ev + 20, ""},
		{len(doc) - 5, `, after traceEvents, in "traceName"`},
		{len(doc) - 1, `, after traceEvents`},
	} {
		_, _, _, _, err := counts(t, strings.NewReader(doc[:c.at]))
		var pe *parse.Error
		if !errors.As(err, &pe) || pe.Offset != int64(c.at) || pe.Msg != "the trace ends early (truncated?)"+c.want || errors.Is(err, parse.ErrNotMine) {
			t.Errorf("cut at %d: %v; want offset %d, %q", c.at, err, c.at, c.want)
		}
	}
}
