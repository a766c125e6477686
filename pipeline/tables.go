package pipeline

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
)

// Emit takes one record batch of a parsed table: the table's name (the
// family's prefix and the reader's table: "snapshot_events", "samples",
// "sanitizer_records", ...) and the batch, valid only during the call.
type Emit func(table string, rec arrow.RecordBatch) error

// Tables reads the input at path once, recognises its family as Run does
// and emits the Arrow tables it parses into, batch by batch, in the
// reader's order (gpuleak export). An input whose family has no tables of
// its own (memory timelines), or that no
// family's sniff claims (a long log that Run scans whole), emits nothing
// and returns nil: Run's analysis of it says whether it can be read.
// Errors are positioned (*parse.Error) where the reader can say where.
func Tables(ctx context.Context, o Options, path string, emit Emit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in, err := parse.Open(path, o.Stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	head, err := in.Head()
	f := o.detect(head)
	if err != nil && !(parse.IsGzipCut(err) && readsUpToCut(f)) {
		return fmt.Errorf("%s: %w", path, err)
	}
	fam := byFormat[f]
	if fam == nil || fam.tables == nil {
		return nil
	}
	return in.Locate(fam.tables(&o, in, f, emit))
}

// batches is what every family's reader offers: its record batches, in
// order (parse.TableReader).
type batches interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

// drain emits every batch of r under the name name gives for it (called
// after each Next: a reader's current table).
func drain(r batches, name func() string, emit Emit) error {
	defer r.Release()
	for r.Next() {
		if err := emit(name(), r.RecordBatch()); err != nil {
			return err
		}
	}
	return r.Err()
}
