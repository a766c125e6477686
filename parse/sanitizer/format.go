package sanitizer

import "github.com/gpuleak/gpuleak/parse"

// The formats this package reads. The string values appear in reports
// (each input's "format") and are stable.
const (
	// FormatText is a compute-sanitizer (or cuda-memcheck) text log, with
	// or without its "========= " prefix.
	FormatText parse.Format = "compute-sanitizer"
	// FormatXML is the XML file of compute-sanitizer --xml --save.
	FormatXML parse.Format = "compute-sanitizer-xml"
)
