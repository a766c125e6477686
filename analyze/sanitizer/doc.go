// Package sanitizer analyses compute-sanitizer reports (parse/sanitizer
// tables, text or XML): an Analyzer groups the leak check's leaks by the
// program's own call site, tells them from memory a framework's caching
// pool keeps on purpose (retained), applies suppressions, and collects
// the tool's other errors and its run summaries. Sizes are bytes. No I/O.
package sanitizer
