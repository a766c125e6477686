package report

import (
	"encoding/json"
	"testing"
)

// FuzzCompare compares two baselines read from untrusted JSON: it never
// panics, and every byte and allocation of each run is in exactly one
// entry (an entry pairs sites, it neither drops nor counts twice).
func FuzzCompare(f *testing.F) {
	site := `{"key": "leak|dev0|forward @ m.py|train @ m.py", "kind": "leak", "device": 0, "site": "forward (m.py:11)", "stack": ["forward (m.py:11)", "train (m.py:24)"], "lines": "11,24", "bytes": 1048576, "count": 4, "iterations": 200}`
	moved := `{"key": "leak|dev0|forward @ m.py|train @ m.py", "kind": "leak", "device": 0, "site": "forward (m.py:14)", "stack": ["forward (m.py:14)", "train (m.py:27)"], "lines": "14,27", "bytes": 2097152, "count": 4, "iterations": 100}`
	old := `{"key": "leak|dev0|forward @ m.py|train @ m.py", "kind": "retained", "device": 1, "site": "forward (m.py:11)", "bytes": 5, "count": 1}`
	f.Add(`{"sites": [`+site+`]}`, `{"sites": [`+moved+`]}`)
	f.Add(`{"sites": [`+site+`,`+moved+`]}`, `{"sites": [`+moved+`,`+old+`,`+site+`]}`)
	f.Add(`{"sites": [`+old+`]}`, `{"sites": [`+site+`,`+moved+`]}`)
	f.Add(`{"sites": [{"key": "a|b", "lines": "1,,x"}]}`, `{"sites": [{"key": "a|b", "lines": "2,-1"}, {"key": "a|b", "lines": "3"}]}`)
	f.Fuzz(func(t *testing.T, x, y string) {
		var base, run Baseline
		if json.Unmarshal([]byte(x), &base) != nil || json.Unmarshal([]byte(y), &run) != nil {
			return
		}
		sum := func(b *Baseline) (bytes int64, count int) {
			for _, s := range b.Sites {
				if s.Bytes < 0 || s.Bytes > 1<<50 || s.Count < 0 || s.Count > 1<<30 {
					return -1, -1
				}
				bytes += s.Bytes
				count += s.Count
			}
			return bytes, count
		}
		bb, bc := sum(&base)
		ab, ac := sum(&run)
		es := Compare(&base, &run, Tolerance{Percent: 10})
		if bb < 0 || ab < 0 {
			return // sizes that overflow when added: no invariant to check
		}
		tot := DiffTotalsOf(es)["all"]
		if tot.BeforeBytes != bb || tot.AfterBytes != ab || tot.BeforeCount != bc || tot.AfterCount != ac {
			t.Errorf("totals %+v, want before %d B in %d, after %d B in %d", tot, bb, bc, ab, ac)
		}
	})
}
