package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The registry is where a format's file declares what it renders; these
// tests hold it to what the commands promise (--help, usage errors).

// Every format but html (the daily report's page) renders the analysis
// (it is what gpuleak analyze --format chooses from), and every kind of
// document of the analysis commands has a table and a JSON form: table is
// the default of every command and json the document. The daily report
// has json and markdown, and html.
func TestEveryDocumentHasTableAndJSON(t *testing.T) {
	all := formats(func(w Writer) bool { return w.Daily == nil || w.Analysis != nil })
	if got := Formats(DocAnalysis); len(got) != len(all) {
		t.Errorf("formats of the analysis %v, of all %v", got, all)
	}
	if got := FormatNames(Formats(DocDaily)); got != "json, markdown, html" {
		t.Errorf("formats of the daily report: %s, want json, markdown, html", got)
	}
	for _, k := range []DocKind{DocAnalysis, DocPostmortem, DocTrend, DocDiff} {
		fs := Formats(k)
		if len(fs) < 2 || fs[0] != FormatTable || fs[1] != FormatJSON {
			t.Errorf("%s: formats %v, want table then json first", k, fs)
		}
		for _, f := range fs {
			if err := Check(f, k); err != nil {
				t.Errorf("Check(%s, %s): %v", f, k, err)
			}
		}
	}
}

// A format a document kind does not have is an *UnsupportedError naming
// the formats that render it, from Check and from Write alike; Write
// writes nothing then.
func TestUnsupportedDocument(t *testing.T) {
	r := &Report{Schema: Schema}
	for _, k := range []DocKind{DocPostmortem, DocTrend, DocDiff} {
		for _, f := range Formats(DocAnalysis) {
			if registry[f].supports(k) {
				continue
			}
			d := Document{Kind: k, Report: r, Diff: &DiffReport{}}
			var buf bytes.Buffer
			err := Write(&buf, d, f, Options{})
			var ue *UnsupportedError
			if !errors.As(err, &ue) || ue.Format != f || ue.Kind != k || FormatNames(ue.Choices) != FormatNames(Formats(k)) {
				t.Errorf("Write(%s, %s): %v", k, f, err)
			}
			if buf.Len() != 0 {
				t.Errorf("Write(%s, %s) wrote %q", k, f, buf.String())
			}
			if !errors.As(Check(f, k), &ue) {
				t.Errorf("Check(%s, %s) accepted it", f, k)
			}
		}
	}
	if err := Check(Format("xml"), DocAnalysis); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("unknown format: %v", err)
	}
}

// A document without the member its kind names is an error, not a panic.
func TestDocumentWithoutContent(t *testing.T) {
	for _, d := range []Document{{Kind: DocAnalysis}, {Kind: DocDiff, Report: &Report{}}, {Kind: DocTrend, Diff: &DiffReport{}}} {
		if err := Write(&bytes.Buffer{}, d, FormatJSON, Options{}); err == nil {
			t.Errorf("%+v: no error", d)
		}
	}
}

// The texts built from the registry are those the commands printed when
// they listed the formats by hand (gpuleak analyze --help, a usage error):
// a new format adds itself to them, in its Order.
func TestFormatTexts(t *testing.T) {
	if _, err := ParseFormat("xml"); err == nil || err.Error() != `unknown format "xml" (choose table, json, sarif, markdown, junit, pprof, html)` {
		t.Errorf("ParseFormat: %v", err)
	}
	for _, f := range Formats(DocAnalysis) {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	want := "table, json, sarif (SARIF 2.1.0 for code scanning; see --source-root), markdown (a job summary or PR comment), " +
		"junit (JUnit XML: a test case per gate and per input) or pprof (gzipped profile.proto of live bytes per stack, for go tool pprof)"
	if got := FormatHelp(DocAnalysis); got != want {
		t.Errorf("FormatHelp(analysis):\n got %s\nwant %s", got, want)
	}
	if got := FormatHelp(DocDiff); got != "table or json" {
		t.Errorf("FormatHelp(diff) = %q", got)
	}
}

// The diff's table lists unchanged sites only with Options.ShowSame; its
// JSON always holds them.
func TestDiffShowSame(t *testing.T) {
	d := &DiffReport{Schema: DiffSchema, Base: "a", New: "b", Entries: []DiffEntry{{Status: StatusSame, Kind: KindRetained, Site: "f (a.py:1)"}},
		Totals: map[string]DiffTotals{StatusSame: {Sites: 1}, "all": {Sites: 1}}}
	for _, show := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Write(&buf, Document{Kind: DocDiff, Diff: d}, FormatTable, Options{ShowSame: show}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "f (a.py:1)") != show || strings.Contains(buf.String(), "No site changed.") == show {
			t.Errorf("ShowSame %v:\n%s", show, buf.String())
		}
		buf.Reset()
		if err := Write(&buf, Document{Kind: DocDiff, Diff: d}, FormatJSON, Options{ShowSame: show}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"site": "f (a.py:1)"`) {
			t.Errorf("JSON, ShowSame %v:\n%s", show, buf.String())
		}
	}
}
