package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// FormatJUnit is a JUnit XML test report of an analysis: a test case per
// gate and per input.
const FormatJUnit Format = "junit"

func init() {
	register(FormatJUnit, Writer{
		Order:    40,
		Help:     "JUnit XML: a test case per gate and per input",
		Analysis: writeJUnit,
	})
}

// JUnit XML as GitLab (artifacts:reports:junit) and Jenkins read it: one
// <testsuite> of gates, one test case per --fail-on gate, and one of
// inputs, one test case per input. Every test case has a non-empty
// classname; a failure's text is in the element's body, its first line in
// the message attribute. An input that could not be read is an <error>
// (the test could not run), not a <failure> (a gate tripped), and is
// counted in the suite's errors attribute: a CI page must not show it as
// passed.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitSkipped marks an input a gate could not be judged on: its test
// was not run in full.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// writeJUnit renders r as JUnit XML. A gate's test case fails when the
// gate tripped. An input's test case fails when a tripped gate matched one
// of its findings (or counted its compute-sanitizer errors); without
// --fail-on, when it holds a leak or an OOM or the tool reported errors.
// An input that could not be read is an error, with classname
// gpuleak.inputs.not-read (its format is not known); one a gate could not
// be judged on (GateResult.NotJudgedOn) and that fails none is skipped.
// Passing input cases list their findings in <system-out>.
func writeJUnit(w io.Writer, r *Report, _ Options) error {
	r = cleaned(r)
	doc := junitSuites{Name: "gpuleak"}
	if len(r.Gates) > 0 {
		s := junitSuite{Name: "gpuleak gates"}
		for _, g := range r.Gates {
			c := junitCase{Classname: "gpuleak.gates", Name: g.Gate}
			switch {
			case g.Tripped:
				c.Failure = &junitFailure{Message: "--fail-on " + g.Gate + " tripped", Type: "gate", Body: g.Why}
			case g.Unjudged:
				// Not a pass: no input could answer it, or one could not
				// judge growth for a leak gate (exit 2).
				c.Error = &junitFailure{Message: "--fail-on " + g.Gate + " not judged", Type: "not-judged", Body: g.Why}
			default:
				c.SystemOut = g.Why
			}
			s.add(c)
		}
		doc.add(s)
	}
	s := junitSuite{Name: "gpuleak inputs"}
	for _, in := range r.Inputs {
		if in.Error != "" {
			s.add(junitCase{Classname: "gpuleak.inputs." + junitNotRead, Name: in.Path,
				Error: &junitFailure{Message: "NOT READ: " + in.Error, Type: "not-read", Body: in.Error}})
			continue
		}
		// Every finding of the input, --top's cut or not: the gates
		// judged them all, so an input whose findings rank below --top
		// fails as the gate that counted them did.
		var failing, all []string
		fs := r.whole()
		for i := range fs {
			f := &fs[i]
			if f.Path != in.Path {
				continue
			}
			line := fmt.Sprintf("[%s] %s", f.Kind, f.Message)
			if len(f.Stack) > 1 {
				line += "\n    stack: " + stackLine(f.Stack, 12)
			}
			all = append(all, line)
			if inputFails(r, f) {
				failing = append(failing, line)
			}
		}
		for _, e := range r.Errors {
			if e.Path != in.Path {
				continue
			}
			line := fmt.Sprintf("[compute-sanitizer %s] %s", e.Kind, e.Message)
			all = append(all, line)
			if errorsFail(r) {
				failing = append(failing, line)
			}
		}
		c := junitCase{Classname: "gpuleak.inputs." + junitClass(in.Format), Name: in.Path}
		if len(failing) > 0 {
			c.Failure = &junitFailure{Message: fmt.Sprintf("%s: %s", in.Path, firstLine(failing[0])), Type: "gpuleak", Body: strings.Join(failing, "\n")}
		}
		if len(all) > 0 {
			c.SystemOut = strings.Join(all, "\n")
		} else {
			c.SystemOut = "no findings: " + describeInput(in)
		}
		if c.Failure == nil {
			if nj := notJudgedBy(r.Gates, in.Path); nj != "" {
				c.Skipped = &junitSkipped{Message: nj}
			}
		}
		for _, wn := range in.Warnings {
			c.SystemOut += "\nwarning: " + wn
		}
		s.add(c)
	}
	doc.add(s)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	if c.Failure != nil {
		s.Failures++
	}
	if c.Error != nil {
		s.Errors++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
}

func (d *junitSuites) add(s junitSuite) {
	d.Suites = append(d.Suites, s)
	d.Tests += s.Tests
	d.Failures += s.Failures
	d.Errors += s.Errors
}

// notJudgedBy says which gates could not be judged on the input at path
// (leak over a snapshot without a trace), and why; "" when none.
func notJudgedBy(gates []GateResult, path string) string {
	var parts []string
	for _, g := range gates {
		for _, n := range g.NotJudgedOn {
			if n.Path == path {
				parts = append(parts, fmt.Sprintf("--fail-on %s not judged on this input: %s", g.Gate, n.Why))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// inputFails: a tripped gate matched f; without gates, f is a leak or an OOM.
func inputFails(r *Report, f *Finding) bool {
	if len(r.Gates) == 0 {
		return f.Kind == KindLeak || f.Kind == KindOOM
	}
	for _, g := range r.Gates {
		if g.Tripped && g.Matches(f) {
			return true
		}
	}
	return false
}

// errorsFail: a tripped gate counted the tool errors; without gates, always.
func errorsFail(r *Report) bool {
	if len(r.Gates) == 0 {
		return true
	}
	for _, g := range r.Gates {
		if g.Tripped && g.IsSanitizerErrors() {
			return true
		}
	}
	return false
}

// junitNotRead is the classname part of an input that could not be read:
// its format is not known, and a part such as "input" would read as one.
const junitNotRead = "not-read"

// junitClass turns an input format into a classname part.
func junitClass(format string) string {
	if format == "" {
		return "unknown-format"
	}
	return strings.NewReplacer(".", "-", " ", "-").Replace(format)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
