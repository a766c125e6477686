package callsite

// Kind classifies the memory a call site holds at the end of a run.
type Kind int

// Site kinds.
const (
	// Leak: the site's live memory grew across several iterations of the
	// run and was still growing in their second half.
	Leak Kind = iota
	// PendingFree: blocks the program freed that the caching allocator
	// cannot reuse yet, because a stream they were used on
	// (Tensor.record_stream) has not reached the free.
	PendingFree
	// Live: held at the end, but the trace does not cover when it was
	// allocated (no trace, or allocated before the trace began).
	Live
	// Retained: allocated once (or in one burst) and held to the end
	// without growing: weights, optimizer state, workspaces.
	Retained
)

func (k Kind) String() string {
	switch k {
	case Leak:
		return "leak"
	case PendingFree:
		return "pending-free"
	case Live:
		return "live"
	case Retained:
		return "retained"
	}
	return "unknown"
}
