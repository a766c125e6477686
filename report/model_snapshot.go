package report

// Growth is the evidence from an allocation trace about how a call site's
// live memory built up.
type Growth struct {
	// BytesPerSecond is the least-squares slope of the site's cumulative
	// kept bytes against time; null when the trace has no timestamps.
	BytesPerSecond *float64 `json:"bytes_per_second"`
	// R2 is the coefficient of determination of that fit (1 = perfectly steady).
	R2 float64 `json:"r2"`
	// Kept counts the site's allocations made during the trace and still
	// live at its end; Allocations counts all the site's allocations made
	// during the trace.
	Kept        int `json:"kept"`
	Allocations int `json:"allocations"`
	// FirstKeptUs and LastKeptUs bound the times of the kept allocations;
	// null without timestamps.
	FirstKeptUs *int64 `json:"first_kept_us"`
	LastKeptUs  *int64 `json:"last_kept_us"`
	// ActiveTenths counts the tenths of the time from the first kept
	// allocation to the end of the trace in which an allocation was kept.
	ActiveTenths int `json:"active_tenths"`
	// Iterations counts the iterations the trace shows (starts of its
	// repeating step; 0: none found). The site's live bytes were measured
	// at Measured+1 of them (every Every-th) and rose in GrewIn;
	// BytesPerIteration is, on a leak, their growth per iteration from the
	// second iteration they rose in to the last (0 on other kinds).
	Iterations int `json:"iterations"`
	// IterationMarker names the steps the tracer recorded when they mark
	// the iterations ("ProfilerStep#N spans", "prof.step() calls");
	// absent otherwise.
	IterationMarker   string  `json:"iteration_marker,omitempty"`
	Measured          int     `json:"measured_iterations"`
	Every             int     `json:"every"`
	GrewIn            int     `json:"grew_in"`
	BytesPerIteration float64 `json:"bytes_per_iteration"`
	// OnsetIteration is set on a leak whose live bytes stayed flat for at
	// least a quarter of the measured iterations before growing (a bug a
	// later epoch triggers): the iteration (1-based) from whose start
	// BytesPerIteration and BytesPerSecond are measured; absent otherwise
	// (they are then over all the measured iterations).
	OnsetIteration int `json:"onset_iteration,omitempty"`
	// StoppedIteration is set on a leak whose live bytes stopped rising
	// before the end, for longer than between any two of its rises: the
	// iteration (1-based) at whose start they last rose; the plateau rule
	// calls it a leak because that was in the second half of the
	// iterations (the message says so). Absent otherwise.
	StoppedIteration int `json:"stopped_iteration,omitempty"`
	// PlateauIteration is the iteration (1-based) since which the site's
	// live bytes have stayed flat after rising (bounded); 0 when not.
	PlateauIteration int `json:"plateau_iteration"`
	// ReplacedAtPlateau is set on a bounded site that kept allocating
	// while its live bytes stayed at their plateau: how many of its
	// allocations held at the end were made since the plateau began, each
	// in place of memory held before (a cache at its capacity evicting its
	// oldest entries); absent otherwise.
	ReplacedAtPlateau int `json:"replaced_at_plateau,omitempty"`
	// FirstIteration and LastIteration: the iterations in which the first
	// and last kept allocations were made (0 = before the first).
	FirstIteration int `json:"first_iteration"`
	LastIteration  int `json:"last_iteration"`
	// LoopSite and AfterIterations: when the iterations above are the
	// passes of a second loop that ran after the device's AfterIterations
	// iterations (a validation loop after the training loop), the frame
	// that marks its passes; absent otherwise.
	LoopSite        *Frame `json:"loop_site,omitempty"`
	AfterIterations int    `json:"after_iterations,omitempty"`
	// LiveBytes is the site's live bytes at each measured iteration start
	// and at the end of the trace, LiveAtUs their times (µs since the
	// epoch); absent without timestamps or iterations. Not in the
	// gpuleak.report/v1 document: the daily report charts them.
	LiveBytes []int64 `json:"-"`
	LiveAtUs  []int64 `json:"-"`
}
