package report

import (
	"encoding/json"
	"io"
)

// FormatJSON is the gpuleak.report/v1 document (and gpuleak.diff/v1 for a
// diff): the members README.md's "JSON report" describes.
const FormatJSON Format = "json"

func init() {
	register(FormatJSON, Writer{
		Order:      10,
		Analysis:   writeJSONReport,
		Postmortem: writeJSONReport,
		Trend:      writeJSONReport,
		Diff:       writeJSONDiff,
		Daily:      writeDailyJSON,
	})
}

func writeJSONReport(w io.Writer, r *Report, _ Options) error { return writeJSON(w, r) }

// writeJSON writes r as one indented JSON document. Slices that are empty
// are written as [] (never null) so that consumers need no null checks.
func writeJSON(w io.Writer, r *Report) error {
	out := *r
	out.Inputs = append([]Input{}, out.Inputs...)
	for i := range out.Inputs {
		if out.Inputs[i].Warnings == nil {
			out.Inputs[i].Warnings = []string{}
		}
	}
	out.Findings = append([]Finding{}, out.Findings...)
	for i := range out.Findings {
		if out.Findings[i].Stack == nil {
			out.Findings[i].Stack = []Frame{}
		}
	}
	return encodeJSON(w, &out)
}

// writeJSONDiff writes d as the gpuleak.diff/v1 document, with every
// entry (Options.ShowSame is for people); empty lists are [].
func writeJSONDiff(w io.Writer, d *DiffReport, _ Options) error {
	out := *d
	if out.Entries == nil {
		out.Entries = []DiffEntry{}
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return encodeJSON(w, &out)
}

// WriteBaseline writes b as indented JSON, sites sorted by key (the file
// of --write-baseline, gpuleak.baseline/v1).
func WriteBaseline(w io.Writer, b *Baseline) error { return encodeJSON(w, b) }

// encodeJSON writes v indented by two spaces, one document and a newline,
// with <, > and & as they are ("<module>" stays readable).
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
