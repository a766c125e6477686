// Package startgc collects garbage less often while gpuleak starts, until
// the command knows how much it has to read.
//
// gpuleak links libraries whose package initialisation allocates (a width
// cache for tables, fonts for plots, metrics registries): about 4 MB by the
// time a command runs, where the collector's first goal is 4 MB. On the
// small inputs that are most of what users pass (the field's snapshots are
// 10 KB to 2.6 MB) the run is start-up bound, and that first cycle and its
// sweep were 13-20% of a 10 KB snapshot's CPU. This package's init, run
// before those libraries' (it is ready as soon as runtime/debug is, and
// Go initialises ready packages in import-path order), raises the GC
// percentage to Percent, a first goal of 16 MB; Settle puts the default
// back for any run that is not small.
//
// Nothing changes when GOGC is set.
package startgc

import (
	"os"
	"runtime/debug"
	"sync"
)

// Percent is the GC percentage in force from start-up until Settle.
const Percent = 400

var (
	raised bool // init raised the percentage
	orig   int  // the percentage before
	once   sync.Once
)

func init() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	orig = debug.SetGCPercent(Percent)
	raised = true
}

// Settle ends start-up: it keeps Percent when small is true and puts the
// collector's default back otherwise. Only the first call decides; later
// ones do nothing, so that a command that settles before its inputs are
// read (a report over many files, a live view) is not raised again.
func Settle(small bool) {
	once.Do(func() {
		if raised && !small {
			debug.SetGCPercent(orig)
		}
	})
}
