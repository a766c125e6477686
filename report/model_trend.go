package report

// The members of a finding of kind trend are the Finding's own (GPU, PID,
// Classification, SlopeBytesPerS, ...: see Finding); these are the lists
// among them.

// TrendChange is a shift of level between StartUs (the last sample at the
// old level) and EndUs (the first at the new one).
type TrendChange struct {
	StartUs   int64 `json:"start_us"`
	EndUs     int64 `json:"end_us"`
	FromBytes int64 `json:"from_bytes"`
	ToBytes   int64 `json:"to_bytes"`
	// Transient: this change and the one next to it are a spike or a dip
	// of at most 3 samples that memory came back from
	// (trend.ChangePoint.Transient): not a step.
	Transient bool `json:"transient,omitempty"`
}

// TrendRun is one run of a series: its first and last sample above the
// baseline, its bytes, its own class and Theil–Sen slope (bytes per
// second), and when memory came back to the baseline (absent: it did not).
type TrendRun struct {
	StartUs        int64   `json:"start_us"`
	EndUs          int64   `json:"end_us"`
	Samples        int     `json:"samples"`
	FirstBytes     int64   `json:"first_bytes"`
	PeakBytes      int64   `json:"peak_bytes"`
	LastBytes      int64   `json:"last_bytes"`
	Classification string  `json:"classification"`
	SlopeBytesPerS float64 `json:"slope_bytes_per_s"`
	ReleasedUs     *int64  `json:"released_us,omitempty"`
	// OOMExit: the run grew until its GPU was full (its peak within 10% of
	// the capacity) and then memory fell to the baseline, near nothing: as
	// when its process died of out-of-memory (trend.Run.OOMExit). Set on
	// the run whether or not the finding's oom_exits counts it: that
	// counts such runs only when they make a crash loop, and is absent
	// otherwise, the message then saying which runs ended full.
	OOMExit bool `json:"oom_exit,omitempty"`
}

// TrendPod is a span of a GPU series whose DCGM exporter labels named one
// pod as the GPU's holder (several, comma-separated in the same order in
// each field, for a GPU pods share): the times (µs since the epoch) of
// its first and last sample there.
type TrendPod struct {
	Pod       string `json:"pod"`
	Namespace string `json:"namespace,omitempty"`
	Container string `json:"container,omitempty"`
	FirstUs   int64  `json:"first_us"`
	LastUs    int64  `json:"last_us"`
	Samples   int    `json:"samples"`
}

// TrendSample is one sample of a series: its time (µs since the Unix
// epoch) and its used memory (bytes) as read.
type TrendSample struct {
	Us    int64 `json:"us"`
	Bytes int64 `json:"bytes"`
}
