package pytorch

import "github.com/gpuleak/gpuleak/parse"

// The format this package reads. The string value appears in reports
// (each input's "format") and is stable.
const (
	// FormatSnapshot is a CUDA caching allocator snapshot: the pickle
	// torch.cuda.memory._dump_snapshot() writes (torch.cuda.memory._snapshot()
	// pickled), protocol 0 to 5, plain or gzip-compressed.
	FormatSnapshot parse.Format = "pytorch-snapshot"
)
