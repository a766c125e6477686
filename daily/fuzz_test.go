package daily

import (
	"bytes"
	"io"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// FuzzReadDaily: a daily report's JSON is an input (--baseline, the weekly
// review); whatever it holds, reading it, comparing with it and rendering
// it returns an error or a page, never a panic. Markdown goes through the
// view the HTML page uses; the HTML's charts are left out here (under the
// fuzzer's instrumentation, loading gonum's fonts takes seconds a worker)
// and tested in report/chart and by TestReportHTMLInChromium.
func FuzzReadDaily(f *testing.F) {
	f.Add([]byte(`{"schema":"gpuleak.daily/v1","days":["2026-11-30"],"leak_sites":[{"key":"leak|forward","site":{"function":"forward","file":"t.py","line":11},"days":["2026-11-30"],"jobs":["j"],"bytes":83886080,"curves":[{"label":"j","at_us":[1,2],"bytes":[0,5]}]}],"ooms":[{"kind":"oom","date":"2026-11-30","requested_bytes":67108864,"cause":["accumulation"],"time_us":5}],"ooms_by_day":[{"date":"2026-11-30","key":"accumulation","count":1}],"gpus":[{"gpu":"gpu 0","series":[{"kind":"trend","pid":538,"slope_bytes_per_s":-3.5,"time_to_oom_s":12}],"curves":[{"label":"x","at_us":[1],"bytes":[1,2]}]}],"fragmentation":[{"kind":"fragmentation","allocated_bytes":1,"free_bytes":2}],"summary":{"worst":[{"kind":"leak","message":"<b>"}]}}`))
	f.Add([]byte(`{"schema":"gpuleak.daily/v1"}`))
	f.Add([]byte(`{"schema":"gpuleak.report/v1"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadDaily(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		base, _ := ReadDaily(bytes.NewReader(data), "base.json")
		Compare(d, base, "base.json", report.Tolerance{Percent: 10})
		for _, f := range []report.Format{report.FormatMarkdown, report.FormatJSON} {
			if err := report.WriteDaily(io.Discard, d, f); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	})
}
