package report

// ToolError is an error a checking tool reported that is not a leak: for
// compute-sanitizer an invalid memory access, a CUDA API error, a race, a
// device-heap malloc/free error, ... Records of one kind, text and place
// are one ToolError with a Count.
type ToolError struct {
	// Path of the input, as given on the command line.
	Path string `json:"path"`
	// Source is the format of that input (parse.Format).
	Source string `json:"source"`
	// Kind: memory-access, api, malloc-free, race, uninitialized,
	// unused-memory, sync, hardware-exception or other.
	Kind string `json:"kind"`
	// Message is one line a person can act on.
	Message string `json:"message"`
	// Text is the tool's own first line of the (first) record.
	Text string `json:"text"`
	// API and Error name a failing CUDA call and its error
	// (cudaFree, cudaErrorLaunchFailure); empty otherwise.
	API   string `json:"api,omitempty"`
	Error string `json:"error,omitempty"`
	// Function is the device function of the faulting instruction of a
	// device-side error (the record's "at" line); absent for host-side
	// errors.
	Function string `json:"function,omitempty"`
	// Kernel is the __global__ function whose launch faulted: the
	// outermost device frame, equal to Function when the fault is in the
	// kernel's own code; absent for host-side errors, and when the record
	// does not show it (no backtrace, as in a log cut inside the record;
	// lines left out of a paste; an outermost device frame that is a
	// member function): the message then says why.
	Kernel string `json:"kernel,omitempty"`
	// Site is where it happened: the faulting device frame, or the
	// innermost user host frame of a host-side error.
	Site Frame `json:"site"`
	// Launch is the host frame that launched the faulting kernel; absent
	// for host-side errors.
	Launch *Frame `json:"launch,omitempty"`
	// Stack is the device frames, then the host backtrace with runtime
	// frames hidden, innermost first.
	Stack []Frame `json:"stack"`
	// Count is how many records were alike.
	Count int `json:"count"`
}

// LeakSummary adds up what compute-sanitizer's summary lines say: bytes
// and allocations leaked (LEAK SUMMARY) and errors (ERROR SUMMARY), over
// every run of the tool they come from (Runs). Null members: no run had
// that line.
type LeakSummary struct {
	Bytes       *int64 `json:"leak_bytes"`
	Allocations *int64 `json:"leak_allocations"`
	Errors      *int64 `json:"error_count"`
	// NonLeakErrors is how many of Errors are not leaks, by the summaries
	// (the sanitizer-errors gate counts them, printed or not): each run's
	// ERROR SUMMARY less its leaks (LEAK SUMMARY's allocations, or the
	// leak records read when it has no LEAK SUMMARY: a run without leak
	// checking). Null when no run has an ERROR SUMMARY.
	NonLeakErrors *int64 `json:"non_leak_errors,omitempty"`
	// Runs is how many runs of the tool with summary lines the members
	// above add up (a log's runs, or several inputs' added in a baseline
	// or a diff); 0 (absent in JSON) for one. A log's runs may be
	// different programs, or one before and after a fix, so a total of
	// several is no one run's figure: ByRun gives each.
	Runs int `json:"runs,omitempty"`
	// ByRun is each run's own summaries, in log order, where one input's
	// log holds more than one run with summary lines; absent otherwise
	// (and in sums over inputs, which keep Runs only).
	ByRun []RunSummary `json:"by_run,omitempty"`
}

// RunSummary is one run's compute-sanitizer summary lines (LeakSummary's
// members, for that run alone).
type RunSummary struct {
	// Run numbers the run among the log's runs, from 1 (as the input's
	// warnings name it: "run 2 (from line 9, no banner)"); Line is its
	// first line of the tool's (its banner, or without one its first
	// record or summary), absent where not known (XML).
	Run           int    `json:"run"`
	Line          int64  `json:"line,omitempty"`
	Bytes         *int64 `json:"leak_bytes"`
	Allocations   *int64 `json:"leak_allocations"`
	Errors        *int64 `json:"error_count"`
	NonLeakErrors *int64 `json:"non_leak_errors,omitempty"`
}

// runs is how many runs s adds up: Runs, or 1 where that is 0.
func (s *LeakSummary) runs() int {
	return max(s.Runs, 1)
}

// add adds o to s, member by member; a member stays null only when both
// are. Runs counts the runs of both; ByRun is left as it was (a sum over
// inputs lists no runs).
func (s *LeakSummary) add(o *LeakSummary) {
	if o == nil {
		return
	}
	empty := s.Bytes == nil && s.Errors == nil && s.Runs == 0
	addp := func(a **int64, b *int64) {
		if b == nil {
			return
		}
		v := *b
		if *a != nil {
			v += **a
		}
		*a = &v
	}
	addp(&s.Bytes, o.Bytes)
	addp(&s.Allocations, o.Allocations)
	addp(&s.Errors, o.Errors)
	addp(&s.NonLeakErrors, o.NonLeakErrors)
	if empty {
		s.Runs = o.Runs
	} else {
		s.Runs = s.runs() + o.runs()
	}
}
