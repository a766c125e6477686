package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/internal/sizes"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// sz renders a size as PyTorch's messages do ("4.19 GiB", "0 bytes").
func sz(b int64) string { return pytorchtext.FormatSize(b) }

func szp(b *int64) string {
	if b == nil {
		return "?"
	}
	return sz(*b)
}

// writePostmortem renders the postmortem for people: one line per input,
// one section per OOM, then fragmentation, the memory by pool of snapshots
// without an OOM, the allocator statistics and the warnings.
func writePostmortem(w io.Writer, r *Report, _ Options) error {
	r = cleaned(r)
	ew := &errWriter{w: w}
	for _, in := range r.Inputs {
		fmt.Fprintf(ew, "%s: %s\n", in.Path, describeInput(in))
	}
	var ooms, frags []Finding
	for _, f := range r.Findings {
		switch f.Kind {
		case KindOOM:
			ooms = append(ooms, f)
		case KindFragmentation:
			frags = append(frags, f)
		}
	}
	blind := map[int]bool{} // inputs whose kind cannot show an OOM, said in the headline
	if len(ooms) == 0 {
		var can, cannot []string
		blindWhy := "none of their kinds can show one"
		for i, in := range r.Inputs {
			switch why := OOMBlind(in.Format); {
			case in.Error != "":
			case why != "" && slices.Contains(in.Warnings, why):
				blind[i] = true
				cannot = append(cannot, fmt.Sprintf("  %s: %s", in.Path, why))
			case in.Empty != "":
				// A trace of no event: its kind could have shown one.
				blind[i], blindWhy = true, "none of them can show one"
				cannot = append(cannot, fmt.Sprintf("  %s: %s", in.Path, in.Empty))
			default:
				can = append(can, in.Path)
			}
		}
		counted := undescribedHeadline(r)
		switch {
		case len(cannot) == 0 && counted != "":
			fmt.Fprintln(ew, "\n"+counted)
		case len(cannot) == 0:
			fmt.Fprintln(ew, "\nNo out-of-memory error in the inputs.")
		default:
			if len(can) == 0 {
				fmt.Fprintf(ew, "\nNo out-of-memory error can be told from these inputs: %s.\n", blindWhy)
			} else {
				fmt.Fprintf(ew, "\nNo out-of-memory error in the inputs that can show one (%s); these cannot show one:\n", strings.Join(can, ", "))
			}
			fmt.Fprintln(ew, strings.Join(cannot, "\n"))
			if counted != "" {
				// An input that cannot show an OOM can still count one
				// (memory_stats() JSON): the gate trips on it, so say so.
				fmt.Fprintln(ew, counted)
			}
		}
	}
	folded := 0 // OOM lines Ray's log deduplication folded (FoldedOOMs)
	for _, f := range ooms {
		folded += f.OOMDetail.FoldedOOMs
	}
	for i, f := range ooms {
		fmt.Fprintln(ew)
		writeOOM(ew, i+1, len(ooms), folded, f)
	}
	for _, f := range frags {
		fmt.Fprintln(ew)
		writeFragmentation(ew, f)
	}
	// Snapshots without an OOM: their memory at the end, by pool.
	for _, in := range r.Inputs {
		if len(in.EndPools) == 0 || snapshotHasOOM(ooms, in.Path) || hasFragmentation(frags, in.Path) {
			continue
		}
		fmt.Fprintf(ew, "\nAt the end of %s, by pool:\n", in.Path)
		writePools(ew, in.EndPools)
	}
	var stats bool
	for _, in := range r.Inputs {
		for _, s := range in.AllocatorStats {
			if !stats {
				fmt.Fprintln(ew, "\nAllocator statistics:")
				stats = true
			}
			fmt.Fprintf(ew, "  %s: %s\n", statsWhere(in.Path, s), statsLine(s))
		}
	}
	if len(blind) > 0 {
		// What the headline said is not repeated among the warnings.
		c := *r
		c.Inputs = slices.Clone(r.Inputs)
		for i := range blind {
			why := OOMBlind(c.Inputs[i].Format)
			if why == "" {
				why = c.Inputs[i].Empty
			}
			c.Inputs[i].Warnings = slices.DeleteFunc(slices.Clone(c.Inputs[i].Warnings), func(w string) bool { return w == why })
		}
		r = &c
	}
	writeWarnings(ew, r)
	return ew.err
}

// writeOOM writes the n-th of the of OOMs shown; folded more, which no
// input shows, were folded into their lines by a log deduplicator.
func writeOOM(w io.Writer, n, of, folded int, f Finding) {
	d, m := f.OOMDetail, f.AllocatorMemory
	title := fmt.Sprintf("OOM %d of %d", n, of)
	if folded > 0 {
		title = fmt.Sprintf("OOM %d of at least %d (%d of them folded into the lines shown by Ray's log deduplication)", n, of+folded, folded)
	}
	switch {
	case f.DeviceType == "cpu":
		title += ": host memory (CPU)"
	case f.Device != nil && f.DeviceType != "":
		title += fmt.Sprintf(": %s:%d", f.DeviceType, *f.Device)
	case f.Device != nil && d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenXLA):
		title += fmt.Sprintf(": device %d", *f.Device) // XLA's ordinal: a GPU or a TPU
	case f.Device != nil:
		title += fmt.Sprintf(": GPU %d", *f.Device)
	}
	switch {
	case d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenUnparsed) && d.RequestedBytes == nil:
		title += ", a message that does not parse"
	case d.RequestedBytes != nil:
		title += ", " + d.size("requested_bytes", *d.RequestedBytes) + " requested"
		if d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenCut) {
			title += " (a message cut short)"
		}
	}
	if f.Site != (Frame{}) {
		title += " at " + f.Site.String()
	}
	fmt.Fprintln(w, title)
	var from []string
	for _, s := range d.Sources {
		switch {
		case s.TraceSeq != nil:
			from = append(from, fmt.Sprintf("%s (trace entry %d)", s.Path, *s.TraceSeq))
		case s.Line != nil:
			from = append(from, fmt.Sprintf("%s:%d", s.Path, *s.Line))
		default: // a profiler trace's [OutOfMemory] event
			from = append(from, s.Path+" ([OutOfMemory] event)")
		}
	}
	src := "  from:     " + strings.Join(from, ", ")
	if d.Exception != nil {
		src += " (" + *d.Exception + ")"
	}
	fmt.Fprintln(w, src)
	if d.FoldedOOMs > 0 {
		fmt.Fprintf(w, "  folded:   at least %s of its kind not in the input (Ray's \"[repeated Nx across cluster]\": see the notes)\n", plural(d.FoldedOOMs, "more OOM line", "more OOM lines"))
	}
	if d.TimeUs != nil && *d.TimeUs >= 946684800_000_000 {
		fmt.Fprintf(w, "  when:     %s UTC\n", time.UnixMicro(*d.TimeUs).UTC().Format("2006-01-02 15:04:05.000"))
	}
	if len(f.Stack) > 1 {
		fmt.Fprintf(w, "  stack:    %s\n", stackLine(f.Stack, 6))
	}
	if d.UnparsedReason != nil {
		what := "does not parse"
		if d.MessageGeneration != nil && (*d.MessageGeneration == string(pytorchtext.GenCut) || *d.MessageGeneration == string(pytorchtext.GenAsync)) {
			what = "cut short" // read as far as it goes (cudaMallocAsync's: see pytorchtext.AsyncDeviceZeroCut)
		}
		fmt.Fprintf(w, "  message:  %s: %s\n", what, *d.UnparsedReason)
	}
	var gpu []string
	if d.DeviceTotalBytes != nil {
		gpu = append(gpu, d.size("device_total_bytes", *d.DeviceTotalBytes)+" total")
	}
	if d.DeviceFreeBytes != nil {
		gpu = append(gpu, d.size("device_free_bytes", *d.DeviceFreeBytes)+" free")
	}
	if d.ProcessInUseBytes != nil {
		gpu = append(gpu, "this process "+d.size("process_in_use_bytes", *d.ProcessInUseBytes))
	}
	for i, p := range d.OtherProcesses {
		gpu = append(gpu, fmt.Sprintf("process %d %s", p.PID, d.size(fmt.Sprintf("other_processes[%d].bytes", i), p.Bytes)))
	}
	if d.UnlistedBytes != nil && *d.UnlistedBytes >= 256<<20 {
		gpu = append(gpu, sz(*d.UnlistedBytes)+" not attributed to a process")
	}
	if d.AllowedBytes != nil {
		gpu = append(gpu, d.size("allowed_bytes", *d.AllowedBytes)+" allowed")
	}
	if len(gpu) > 0 {
		label := "GPU:     "
		if d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenXLA) {
			label = "device:  " // XLA's: a GPU or a TPU core (the TPU compiler's HBM)
		}
		fmt.Fprintf(w, "  %s %s\n", label, strings.Join(gpu, "; "))
	}
	if f.DeviceType == "cpu" && m.AllocatedBytes != nil {
		// The CPU allocator keeps no cache: what it had allocated.
		fmt.Fprintf(w, "  PyTorch:  %s allocated by the CPU allocator\n", d.size("allocated_bytes", *m.AllocatedBytes))
	} else if m.ReservedBytes != nil || m.AllocatedBytes != nil {
		allocated := d.sizep("allocated_bytes", m.AllocatedBytes) + " allocated"
		if d.PrivatePoolBytes != nil {
			// PyTorch's "X is allocated by PyTorch, with Y allocated in
			// private pools": a part of the allocated memory, printed
			// beside it.
			allocated += fmt.Sprintf(" (%s of it in private pools)", d.size("private_pool_bytes", *d.PrivatePoolBytes))
		}
		line := fmt.Sprintf("%s reserved, %s, %s reserved but unallocated", d.sizep("reserved_bytes", m.ReservedBytes), allocated, d.sizep("reserved_unallocated_bytes", m.ReservedUnallocatedBytes))
		if d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenAsync) {
			line = fmt.Sprintf("%s allocated (cudaMallocAsync: its pool's reserved memory is not in the message)", d.sizep("allocated_bytes", m.AllocatedBytes))
		}
		if d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenMPS) {
			line = fmt.Sprintf("%s in MPS heaps (allocated and cached: the message does not split them)", d.sizep("reserved_bytes", m.ReservedBytes))
		}
		label := "PyTorch: "
		if d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenCuPy) {
			// CuPy's "allocated so far": the pool's bytes from CUDA.
			label, line = "CuPy:    ", fmt.Sprintf("%s held by the memory pool (in use and cached)", d.sizep("reserved_bytes", m.ReservedBytes))
		}
		if d.MessageGeneration != nil && *d.MessageGeneration == string(pytorchtext.GenPaddle) {
			// Paddle's "N memory has been allocated": its allocator's,
			// not PyTorch's.
			label, line = "Paddle:  ", fmt.Sprintf("%s allocated by Paddle's allocator", d.sizep("reserved_bytes", m.ReservedBytes))
		}
		if m.LargestFreeBlockBytes != nil {
			line += "; largest free block " + sz(*m.LargestFreeBlockBytes)
		}
		// WouldFitIfContiguous is about PyTorch's reserved but unallocated
		// memory, not the GPU's free memory (the GPU line above): said of
		// "the free memory", it read as the GPU's beside a GPU with room.
		// With none reserved but unallocated there is nothing to say.
		if d.WouldFitIfContiguous != nil {
			if *d.WouldFitIfContiguous {
				line += "; that reserved but unallocated memory would have held the request had it been contiguous"
			} else if m.ReservedUnallocatedBytes != nil && *m.ReservedUnallocatedBytes > 0 {
				line += "; that reserved but unallocated memory could not have held the request even if contiguous"
			}
		}
		fmt.Fprintf(w, "  %s %s\n", label, line)
	}
	if len(d.CauseEvidence) == 0 {
		fmt.Fprintln(w, "  Cause:    not determined")
	} else {
		fmt.Fprintln(w, "  Causes:")
		for _, c := range d.CauseEvidence {
			fmt.Fprintf(w, "    %s: %s\n", c.Cause, c.Evidence)
			fmt.Fprintf(w, "      what to do: %s\n", c.Advice)
		}
	}
	if len(d.Sites) > 0 {
		blocks := 0
		if d.LiveBlocks != nil {
			blocks = *d.LiveBlocks
		}
		sites := plural(d.SitesTotal, "call site", "call sites")
		if d.SitesTotal > len(d.Sites) {
			sites = fmt.Sprintf("the %d largest of %d call sites", len(d.Sites), d.SitesTotal)
		}
		fmt.Fprintf(w, "  Memory held at the OOM (%s, %s):\n", plural(blocks, "block", "blocks"), sites)
		var rows [][]string
		for _, s := range d.Sites {
			site := s.Site.String()
			if n := s.Count - s.NotInTrace; s.NotInTrace > 0 && n > 0 {
				// A live site may mix blocks older than the trace with
				// ones it made: say how many the trace cannot date.
				site += fmt.Sprintf(" (%d of the %d blocks older than the trace)", s.NotInTrace, s.Count)
			}
			rows = append(rows, []string{string(s.Kind), sz(s.Bytes), fmt.Sprint(s.Count), site})
		}
		textTable(w, "    ", []string{"KIND", "BYTES", "BLOCKS", "SITE"}, rows, []bool{false, true, true, false})
	}
	if len(m.Pools) > 0 {
		fmt.Fprintln(w, "  By pool at the OOM:")
		writePools(w, m.Pools)
	}
	if len(d.Notes) > 0 {
		fmt.Fprintln(w, "  Notes:")
		for _, n := range d.Notes {
			fmt.Fprintf(w, "    - %s\n", n)
		}
	}
}

func writePools(w io.Writer, pools []PoolMemory) {
	var rows [][]string
	multi := false
	for _, p := range pools {
		multi = multi || p.Device != pools[0].Device
	}
	for _, p := range pools {
		name := p.Pool
		if p.Private {
			name += fmt.Sprintf(" (private %d,%d)", p.PoolID[0], p.PoolID[1])
		}
		if p.Expandable {
			name += " (expandable)"
		}
		if multi {
			name = fmt.Sprintf("GPU %d %s", p.Device, name)
		}
		rows = append(rows, []string{name, fmt.Sprint(p.Stream), fmt.Sprint(p.Segments), sz(p.ReservedBytes), sz(p.AllocatedBytes),
			sz(p.FreeBytes), fmt.Sprint(p.FreeBlocks), sz(p.LargestFreeBlockBytes), sz(p.InactiveSplitBytes), fmt.Sprintf("%.2f", p.FragmentationRatio)})
	}
	textTable(w, "    ", []string{"POOL", "STREAM", "SEGMENTS", "RESERVED", "ALLOCATED", "FREE", "FREE BLOCKS", "LARGEST FREE", "SPLIT FREE", "RATIO"},
		rows, []bool{false, true, true, true, true, true, true, true, true, true})
}

// textTable writes rows under a header, indented, columns two spaces
// apart; right[i] right-aligns column i. Lines have no trailing spaces.
func textTable(w io.Writer, indent string, header []string, rows [][]string, right []bool) {
	width := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range append([][]string{header}, rows...) {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func writeFragmentation(w io.Writer, f Finding) {
	d, m := f.FragmentationDetail, f.AllocatorMemory
	where := "at the end of " + f.Path
	if d.At != "end" {
		where = "in " + f.Path + " (" + d.At + ")"
	}
	dev := ""
	if f.Device != nil {
		dev = fmt.Sprintf(", GPU %d", *f.Device)
	}
	title := "Fragmentation"
	switch d.SplitShape {
	case oom.ShapePinned:
		title = "Pinned free memory (not fragmented)"
	case oom.ShapeUnknown:
		title = "Fragmentation or pinned free memory"
	}
	fmt.Fprintf(w, "%s %s%s\n", title, where, dev)
	split, reserved := sz(d.InactiveSplitBytes), szp(m.ReservedBytes)
	if m.ReservedBytes != nil {
		split, reserved = sizes.Of(d.InactiveSplitBytes, *m.ReservedBytes, sz)
	}
	line := fmt.Sprintf("%s free but split around live blocks, of %s reserved (%s allocated, %d segments)", split, reserved, szp(m.AllocatedBytes), d.Segments)
	if d.LargestSplitBlockBytes != nil {
		line += "; largest split block " + sz(*d.LargestSplitBlockBytes)
	}
	expandable := false
	for _, p := range m.Pools {
		expandable = expandable || p.Expandable
	}
	switch {
	case expandable && d.FreeBlocks != nil && d.FreeBytes > d.InactiveSplitBytes:
		// A free block of an expandable segment may be split at one end
		// and hold whole free pages: the blocks do not count the pieces.
		line += fmt.Sprintf("; besides, %s free with no live block in its segment or page (empty_cache() returns it)", sz(d.FreeBytes-d.InactiveSplitBytes))
	case d.FreeBlocks != nil && d.InactiveSplitBlocks != nil && *d.FreeBlocks > *d.InactiveSplitBlocks && d.FreeBytes > d.InactiveSplitBytes:
		line += fmt.Sprintf("; besides, %s free in %s with no live block (empty_cache() returns them)", sz(d.FreeBytes-d.InactiveSplitBytes), plural(int(*d.FreeBlocks-*d.InactiveSplitBlocks), "segment", "segments"))
	}
	if m.LargestFreeBlockBytes != nil && (d.LargestSplitBlockBytes == nil || *m.LargestFreeBlockBytes > *d.LargestSplitBlockBytes) {
		line += "; largest free block " + sz(*m.LargestFreeBlockBytes)
	}
	if d.FragmentationRatio != nil {
		line += fmt.Sprintf("; fragmentation ratio %.2f", *d.FragmentationRatio)
	}
	if d.InternalFragmentationBytes != nil && *d.InternalFragmentationBytes > 0 {
		line += fmt.Sprintf("; internal fragmentation (blocks larger than asked) %s", sz(*d.InternalFragmentationBytes))
	}
	fmt.Fprintf(w, "  %s\n", line)
	if len(m.Pools) > 0 {
		writePools(w, m.Pools)
	}
	for _, a := range m.Advice {
		fmt.Fprintf(w, "  what to do: %s\n", a)
	}
}

func statsWhere(path string, s AllocatorStats) string {
	where := path
	if s.Line > 1 {
		where += fmt.Sprintf(":%d", s.Line)
	}
	where += " (" + s.Source
	if s.Device != nil {
		where += fmt.Sprintf(", GPU %d", *s.Device)
	}
	if len(s.SameAs) > 0 {
		where += "; same moment as " + strings.Join(s.SameAs, ", ")
	}
	return where + ")"
}

func statsLine(s AllocatorStats) string {
	var parts []string
	add := func(v *int64, what string) {
		if v != nil {
			parts = append(parts, sz(*v)+" "+what)
		}
	}
	add(s.AllocatedBytes, "allocated")
	add(s.ReservedBytes, "reserved")
	switch {
	case s.CudaMallocAsync:
		parts = append(parts, "non-releasable memory, segments, allocations and OOMs not measured (the cudaMallocAsync backend fills only allocated and reserved memory and prints 0 for the rest)")
	case s.ExpandableSegments && s.InactiveSplitBytes == nil:
		parts = append(parts, "non-releasable not measured (expandable segments, which PyTorch leaves out of it)")
	case s.ExpandableSegments:
		add(s.InactiveSplitBytes, "free but split (non-releasable) in the segments that are not expandable")
	default:
		add(s.InactiveSplitBytes, "free but split (non-releasable)")
	}
	add(s.PeakAllocatedBytes, "peak allocated")
	add(s.PeakReservedBytes, "peak reserved")
	if s.NumOOMs != nil {
		parts = append(parts, plural(int(*s.NumOOMs), "OOM", "OOMs"))
	}
	if s.NumAllocRetries != nil {
		parts = append(parts, plural(int(*s.NumAllocRetries), "cudaMalloc retry", "cudaMalloc retries"))
	}
	if s.PartialAtLine > 0 {
		parts = append(parts, partialWords(s))
	}
	line := strings.Join(parts, ", ")
	if s.Verdict != "" {
		line += "\n    " + s.Verdict
	}
	return line
}

func snapshotHasOOM(ooms []Finding, path string) bool {
	for _, f := range ooms {
		for _, s := range f.OOMDetail.Sources {
			if s.Path == path && s.TraceSeq != nil {
				return true
			}
		}
	}
	return false
}

func hasFragmentation(frags []Finding, path string) bool {
	for _, f := range frags {
		if f.Path == path {
			return true
		}
	}
	return false
}
