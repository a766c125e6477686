package pytorchtext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Session 44: a memory_stats() dict printed in a log that goes on past
// the most read of one (maxStatsTextBytes, maxStatsTextLines) was said to
// be "cut before its end" and its set to have broken off, though the text
// went on (the session-43 tester's d5_huge.log: one 5 MB line). It is now
// read to the bound, its set marked partial with PartialBoundKey (the
// bound: bytes positive, lines negative), and the warning says the rest
// was not read, not that it was cut. A dict cut by the input's end is
// still cut, with no bound. The dicts are synthetic: memory_stats()'s
// first keys, then made-up "x.N.current" keys to pass the bound.
func TestHunt44StatsDictPastTheBound(t *testing.T) {
	var line strings.Builder
	line.WriteString(`INFO mem {"allocated_bytes.all.current": 1073741824, "num_ooms": 0`)
	for i := 0; line.Len() < maxStatsTextBytes+maxStatsTextBytes/2; i++ {
		fmt.Fprintf(&line, `, "x.%d.current": %d`, i, i)
	}
	line.WriteString("}\n")

	var pp strings.Builder
	pp.WriteString("{'allocated_bytes.all.current': 1073741824,\n 'num_ooms': 0,\n")
	for i := 0; i < maxStatsTextLines+100; i++ {
		fmt.Fprintf(&pp, " 'x.%d.current': %d,\n", i, i)
	}
	pp.WriteString(" 'z.all.current': 1}\n")

	for _, c := range []struct {
		name, text string
		bound      int64
		at         int64
	}{
		{"one line past the bytes", line.String(), maxStatsTextBytes, 1},
		{"pprint past the lines", pp.String(), -maxStatsTextLines, maxStatsTextLines},
		{"cut by the end", "{'allocated_bytes.all.current': 1073741824,\n 'num_ooms': 0,\n", 0, 2},
	} {
		// Batches of 4096 rows: the dicts give tens of thousands.
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		r := NewReader(strings.NewReader(c.text), "x.log", WithAllocator(mem), WithBatchSize(4096))
		rs, err := collect(t, r)
		r.Release()
		mem.AssertSize(t, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		v, ok := rs.stat(0, "allocated_bytes.all.current")
		p, partial := rs.stat(0, PartialKey)
		b, bounded := rs.stat(0, PartialBoundKey)
		if !ok || v.value != 1<<30 || !partial || p.value != c.at || bounded != (c.bound != 0) || bounded && b.value != c.bound {
			t.Errorf("%s: allocated %+v, partial %+v, bound %v %+v; want partial at %d, bound %d", c.name, v, p, bounded, b, c.at, c.bound)
		}
		ws := strings.Join(rs.meta.Warnings.Strings(), "\n")
		if cut := strings.Contains(ws, "cut before its end"); cut != (c.bound == 0) {
			t.Errorf("%s: warnings %.200q; want \"cut\" only for the cut dict", c.name, ws)
		}
	}
}
