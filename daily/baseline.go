package daily

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/gpuleak/gpuleak/report"
)

// MaxBaselineBytes bounds a --baseline file.
const MaxBaselineBytes = 256 << 20

// ReadDaily reads a daily report's JSON (gpuleak.daily/v1), as written by
// gpuleak report --format json. Errors: not JSON, another schema, larger
// than MaxBaselineBytes; each names the file.
func ReadDaily(r io.Reader, name string) (*report.Daily, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxBaselineBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a daily report", name, MaxBaselineBytes>>20)
	}
	var d report.Daily
	if err := json.Unmarshal(data, &d); err != nil {
		if se, ok := err.(*json.SyntaxError); ok {
			return nil, fmt.Errorf("%s: byte offset %d: not a daily report's JSON: %v", name, se.Offset, err)
		}
		return nil, fmt.Errorf("%s: not a daily report's JSON: %v", name, err)
	}
	if d.Schema != report.DailySchema {
		return nil, fmt.Errorf("%s: schema %q, want %q (a report written by gpuleak report --format json)", name, d.Schema, report.DailySchema)
	}
	return &d, nil
}

// Compare fills d.Baseline: leak sites new, grown, fixed or shrunk since
// base (by report.Compare, at tol), and OOM causes d has that base has not.
// Leak sites beyond the DailyMaxItems either report lists are not seen.
func Compare(d, base *report.Daily, path string, tol report.Tolerance) {
	cmp := &report.DailyBaseline{Path: path, Leaks: []report.DiffEntry{}, NewOOMCauses: []string{}}
	for _, e := range report.Compare(leakBaseline(base), leakBaseline(d), tol) {
		if e.Status != report.StatusSame {
			cmp.Leaks = append(cmp.Leaks, e)
		}
	}
	before := map[string]bool{}
	for _, c := range base.OOMsByDay {
		before[c.Key] = true
	}
	seen := map[string]bool{}
	for _, c := range d.OOMsByDay {
		if !before[c.Key] && !seen[c.Key] {
			seen[c.Key] = true
			cmp.NewOOMCauses = append(cmp.NewOOMCauses, c.Key)
		}
	}
	sort.Strings(cmp.NewOOMCauses)
	d.Baseline = cmp
}

// leakBaseline is a report's leak sites as a report.Baseline.
func leakBaseline(d *report.Daily) *report.Baseline {
	b := &report.Baseline{Schema: "gpuleak.daily/v1 leak sites"}
	for _, s := range d.LeakSites {
		site := s.Site.String()
		var stack []string
		for _, fr := range s.Stack {
			stack = append(stack, fr.String())
		}
		b.Sites = append(b.Sites, report.BaselineSite{Key: s.Key, Kind: report.KindLeak, Site: site, Stack: stack, Bytes: s.Bytes, Count: s.Count})
	}
	return b
}
