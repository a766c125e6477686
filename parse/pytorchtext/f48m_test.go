package pytorchtext

import (
	"strings"
	"testing"
)

// A summary pasted into a Python docstring from inside its first row's
// left border (pastes/lumina_mgpt_docstring_summary_headcut.py: line 3
// is " Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |
// 5646 GiB |"): the row is whole from its name on, so the table starts
// there and its allocated memory, 17287 MiB current and 17324 MiB peak,
// is read (it started at line 7's Active memory, no allocated figure).
// A row that lost its border and has a word before its name, or other
// cells, is not one.
func TestSummaryRowWithoutLeftBorder(t *testing.T) {
	rs := readFile(t, "pastes/lumina_mgpt_docstring_summary_headcut.py", false)
	for key, want := range map[string]int64{
		"allocated_bytes.all.current": 17287 << 20,
		"allocated_bytes.all.peak":    17324 << 20,
		"active_bytes.all.current":    17287 << 20,
		"requested_bytes.all.current": 17264 << 20,
	} {
		if s, ok := rs.stat(0, key); !ok || s.value != want || s.device != -1 || s.line < 3 {
			t.Errorf("%s: %+v (found %v), want %d on no device", key, s, ok, want)
		}
	}
	ws := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "line 3: a memory summary without its title") || !strings.Contains(ws, "Allocated memory row without its left border") {
		t.Errorf("warnings %q", ws)
	}
	for _, line := range []string{
		"note: Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |   5646 GiB |",
		" Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |",
		" Allocated memory      |  big |  17324 MiB |   5663 GiB |   5646 GiB |",
	} {
		if _, ok := leadlessRow(line); ok {
			t.Errorf("%q read as a row", line)
		}
	}
}

// memory_stats() dicts of NVIDIA/MinkowskiEngine#359, hard-wrapped at 1000
// columns as the issue shows them:
//   - head_wrapped_key: line 1 opens the dict and breaks inside a key
//     ("('allocated_bytes.all.allocate" / "d', 782952858624)"); line 2
//     holds allocated_bytes.all.current 1185385472 and .peak
//     15763564032. It was read to line 1 only, without them.
//   - tail_wrapped_then_next: lines 1-2 are the end of an earlier dict,
//     its head cut off (line 1 starts "mall_pool.freed', 81922048), ..."):
//     num_alloc_retries 4, num_ooms 0, reserved_bytes.all.current
//     50331648, .peak 15890120704 (14.80 GiB). They were dropped.
//   - derived_..._rewrapped_inside_number (an edit of the first, wrapped
//     inside 1185385472): the digits are joined, not read as two numbers.
func TestStatsDictHardWrapped(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[string]int64
		warn string
	}{
		{"pastes/minkowski359_ordereddict_head_wrapped_key.txt", map[string]int64{
			"allocated_bytes.all.current": 1185385472, "allocated_bytes.all.peak": 15763564032, "allocated_bytes.all.allocated": 782952858624,
		}, "hard-wrapped at a width: 1 of its lines broke inside a key or a number"},
		{"pastes/derived_minkowski359_rewrapped_inside_number.txt", map[string]int64{
			"allocated_bytes.all.current": 1185385472, "allocated_bytes.all.peak": 15763564032,
		}, "hard-wrapped at a width: 1 of its lines"},
		{"pastes/minkowski359_ordereddict_tail_wrapped_then_next.txt", map[string]int64{
			"num_alloc_retries": 4, "num_ooms": 0, "reserved_bytes.all.current": 50331648, "reserved_bytes.all.peak": 15890120704,
		}, "line 1 starts inside a torch.cuda.memory_stats() dict (its head was cut off"},
	} {
		rs := readFile(t, c.file, false)
		for key, want := range c.want {
			if s, ok := rs.stat(0, key); !ok || s.value != want {
				t.Errorf("%s: %s %+v (found %v), want %d", c.file, key, s, ok, want)
			}
		}
		if ws := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(ws, c.warn) || strings.Contains(ws, "only 24 of its keys") {
			t.Errorf("%s: warnings %q", c.file, ws)
		}
	}
	// Not wraps: a key cut and a log line after it; a program's own dict
	// with memory_stats() keys among its own.
	cut := "OrderedDict([('active.all.allocated', 20868), ('active.all.current', 322), ('allocated_bytes.all.alloc\nEpoch 3: loss 0.25 'x'\n"
	rs, _ := readText(t, "cut", cut, false)
	if s, ok := rs.stat(0, "active.all.current"); !ok || s.value != 322 {
		t.Errorf("cut: active.all.current %+v (found %v)", s, ok)
	}
	if _, ok := rs.stat(0, PartialKey); !ok {
		t.Error("cut: not partial")
	}
	// A plain dict's tail (Python 3.12's OrderedDict({...}) or a dict
	// repr) cut at its head: no parenthesis or brace before its end.
	tail := "cated': 20868, 'active.all.current': 322, 'num_alloc_retries': 2, 'num_ooms': 1, 'reserved_bytes.all.current': 4096}\n"
	rs, _ = readText(t, "tail", tail, false)
	if s, ok := rs.stat(0, "num_alloc_retries"); !ok || s.value != 2 {
		t.Errorf("dict tail: num_alloc_retries %+v (found %v)", s, ok)
	}
	own := "metrics: {'step': 3, 'allocated_bytes.all.current': 5, 'allocated_bytes.all.peak': 6, 'num_ooms': 0}\n"
	rs, _ = readText(t, "own", own, false)
	if ws := strings.Join(rs.meta.Warnings.Strings(), "\n"); strings.Contains(ws, "head was cut off") {
		t.Errorf("own dict: %q", ws)
	}
}
