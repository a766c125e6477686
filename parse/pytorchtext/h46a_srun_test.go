package pytorchtext

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Session 46, helper h46a (testdata/README.md, "Session 46, h46a").

// srun --label puts the task's number before each line ("0: ", "1: ").
// memory_stats() dicts printed by two tasks carried no process (torchrun's
// "[rank1]: " did): now "0:" and "1:", as their memory_summary() tables'
// prefixes are. Bare, "1: " is also a program's own numbering: a dict
// after it is labelled only where the text's lines carry srun's mark of
// two tasks at least (a text of one such line is not), and "step 3: "
// never.
func TestH46aSrunLabelsStatsDicts(t *testing.T) {
	dict := `{'allocated_bytes.all.current': 1073741824, 'reserved_bytes.all.current': 2147483648, 'num_ooms': 1}`
	for _, c := range []struct {
		name, text string
		want       map[int32]string
	}{
		{"srun", "0: world size 2, loading the model\n1: world size 2, loading the model\n0: " + dict + "\n 1: " + dict + "\n", map[int32]string{0: "0:", 1: "1:"}},
		{"srun with timestamps", "0: 2024-11-20 14:37:10 start\n1: 2024-11-20 14:37:10 start\n1: 2024-11-20 14:37:16 " + dict + "\n", map[int32]string{0: "1:"}},
		{"one numbered line", "1: " + dict + "\n", map[int32]string{0: ""}},
		{"program's words", "0: start\n1: start\nstep 3: " + dict + "\n", map[int32]string{0: ""}},
	} {
		got := statsProcesses(t, c.text)
		if len(got) != len(c.want) {
			t.Errorf("%s: processes %v, want %v", c.name, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: processes %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// statsProcesses reads text and returns each stats set's process ("" for
// none).
func statsProcesses(t *testing.T, text string) map[int32]string {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	r := NewReader(strings.NewReader(text), "srun.log", WithAllocator(mem))
	defer r.Release()
	got := map[int32]string{}
	for r.Next() {
		if r.Table() != TableStats {
			continue
		}
		rec := r.RecordBatch()
		proc := rec.Column(StProcess).(*array.Dictionary)
		for i := 0; i < int(rec.NumRows()); i++ {
			set := rec.Column(StSet).(*array.Int32).Value(i)
			if proc.IsValid(i) {
				got[set] = strings.Clone(proc.Dictionary().(*array.String).Value(proc.GetValueIndex(i)))
			} else if _, ok := got[set]; !ok {
				got[set] = ""
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
