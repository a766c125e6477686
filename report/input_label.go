package report

import "strings"

// noOOMLabel is the table's label of a log read for out-of-memory
// messages that holds none (format pytorch-oom-message, no
// OOMPrinters): the format names PyTorch's messages, which such a log
// (a TensorFlow log whose allocation failures were retried, a printed
// torch.cuda.memory_stats() dict) does not hold, so the label says what
// it holds instead: "log without an out-of-memory message", with the
// allocator statistics it holds ("with a torch.cuda.memory_stats()
// dict"). The JSON format stays pytorch-oom-message.
func noOOMLabel(in Input) string {
	var held []string
	add := func(s string) {
		for _, h := range held {
			if h == s {
				return
			}
		}
		held = append(held, s)
	}
	for _, s := range in.AllocatorStats {
		switch s.Source {
		case "memory_stats":
			add("a torch.cuda.memory_stats() dict")
		case "memory_summary":
			add("a torch.cuda.memory_summary() table")
		}
	}
	label := "log without an out-of-memory message"
	if len(in.NotOOMs) > 0 {
		// Out-of-memory errors of other kinds (host memory, a recovered
		// allocation): none of the GPU counted, but not none at all.
		label = "log without a GPU out-of-memory message counted"
	}
	if len(held) > 0 {
		label += ", with " + strings.Join(held, " and ")
	}
	return label
}
