//go:build !nvml

package capture

// Open returns ErrNotBuiltIn: this build has no NVML (build with -tags nvml).
func Open(cfg Config) (Source, error) { return nil, ErrNotBuiltIn }

// BuiltIn says whether NVML live capture is built in.
const BuiltIn = false
