package pytorch

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Snapshot holds a whole snapshot's tables in memory. Use a Reader to
// stream instead when the snapshot is large. Release frees the tables.
type Snapshot struct {
	Segments, Blocks, Events, Frames, Stacks arrow.Table
	Metadata                                 Metadata
}

// Table returns the table t.
func (s *Snapshot) Table(t Table) arrow.Table {
	switch t {
	case TableSegments:
		return s.Segments
	case TableBlocks:
		return s.Blocks
	case TableEvents:
		return s.Events
	case TableFrames:
		return s.Frames
	case TableStacks:
		return s.Stacks
	}
	return nil
}

// Release frees the tables' memory.
func (s *Snapshot) Release() {
	for _, t := range []arrow.Table{s.Segments, s.Blocks, s.Events, s.Frames, s.Stacks} {
		if t != nil {
			t.Release()
		}
	}
}

// ReadAll reads a whole snapshot into tables. Errors are those of Reader.
func ReadAll(r io.Reader, name string, opts ...Option) (*Snapshot, error) {
	return readAllFrom(NewReader(r, name, opts...))
}

// readAllFrom is ReadAll on a Reader made by the caller; it releases rd.
func readAllFrom(rd *Reader) (*Snapshot, error) {
	defer rd.Release()
	var recs [numTables][]arrow.RecordBatch
	release := func() {
		for _, rs := range recs {
			for _, rec := range rs {
				rec.Release()
			}
		}
	}
	defer release()
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		recs[rd.Table()] = append(recs[rd.Table()], rec)
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	s := &Snapshot{Metadata: *rd.Metadata()}
	s.Segments = array.NewTableFromRecords(SegmentsSchema, recs[TableSegments])
	s.Blocks = array.NewTableFromRecords(BlocksSchema, recs[TableBlocks])
	s.Events = array.NewTableFromRecords(EventsSchema, recs[TableEvents])
	s.Frames = array.NewTableFromRecords(FramesSchema, recs[TableFrames])
	s.Stacks = array.NewTableFromRecords(StacksSchema, recs[TableStacks])
	return s, nil
}
