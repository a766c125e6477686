package report

import (
	"encoding/json"
	"io"
)

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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<module>" stays readable
	return enc.Encode(&out)
}
