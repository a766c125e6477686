package report

import (
	"encoding/json"
	"io"
)

// writeJSON writes r as one indented JSON document. Slices that are empty
// are written as [] (never null) so that consumers need no null checks.
func writeJSON(w io.Writer, r *Report) error {
	out := *r
	if out.Inputs == nil {
		out.Inputs = []Input{}
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	for i := range out.Inputs {
		if out.Inputs[i].Warnings == nil {
			out.Inputs[i].Warnings = []string{}
		}
	}
	for i := range out.Findings {
		if out.Findings[i].Stack == nil {
			out.Findings[i].Stack = []Frame{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&out)
}
