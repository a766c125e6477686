package pytorchtext

import (
	"strings"
	"sync"
)

// UnifiedMemory is a device named in a log whose GPU memory is, or may be,
// the machine's RAM shared with the CPU: there "total capacity" is system
// memory, and memory outside PyTorch's allocator includes the OS, the page
// cache and the process's own CPU memory.
type UnifiedMemory struct {
	// Device names it as the log did, with what it is ("gfx1151: AMD
	// Strix Halo").
	Device string
	// Vendor is "AMD" or "NVIDIA".
	Vendor string
	// Sure is false for devices that share memory with the CPU only in
	// some configurations (GH200 and GB200, whose HBM the OS may use as
	// a NUMA node).
	Sure bool
	// Line is where the log names it.
	Line int64
}

// unifiedMarkers are the words (whole, case-sensitive) that name a
// unified-memory device in a log: ROCm's gfx targets of APUs
// (torch.cuda.get_device_properties().gcnArchName, rocminfo), product names
// (torch.cuda.get_device_name()).
var unifiedMarkers = []struct {
	word, what, vendor string
	sure               bool
}{
	{"gfx1151", "AMD Strix Halo APU", "AMD", true},
	{"Strix Halo", "AMD APU (gfx1151)", "AMD", true},
	{"8060S", "AMD Radeon 8060S, Strix Halo's integrated GPU", "AMD", true},
	{"gfx1150", "AMD Strix Point APU", "AMD", true},
	{"gfx1103", "AMD Phoenix APU", "AMD", true},
	{"gfx90c", "AMD Renoir/Cezanne APU", "AMD", true},
	{"MI300A", "AMD Instinct APU", "AMD", true},
	{"GB10", "NVIDIA DGX Spark's superchip", "NVIDIA", true},
	{"DGX Spark", "NVIDIA GB10", "NVIDIA", true},
	{"Jetson", "NVIDIA's integrated module", "NVIDIA", true},
	{"Orin", "NVIDIA Jetson", "NVIDIA", true},
	{"NVIDIA Thor", "NVIDIA Jetson", "NVIDIA", true},
	{"GH200", "NVIDIA Grace Hopper: its HBM may be used by the OS as a NUMA node", "NVIDIA", false},
	{"GB200", "NVIDIA Grace Blackwell: its HBM may be used by the OS as a NUMA node", "NVIDIA", false},
}

// findUnifiedMemory returns the unified-memory device line names, if any.
func findUnifiedMemory(line string) (UnifiedMemory, bool) {
	if !unifiedHeads().mayHold(line, 0) {
		return UnifiedMemory{}, false // no marker is on the line
	}
	for _, m := range unifiedMarkers {
		for from := 0; ; {
			i := strings.Index(line[from:], m.word)
			if i < 0 {
				break
			}
			i += from
			end := i + len(m.word)
			if (i == 0 || !isWordByte(line[i-1])) && (end == len(line) || !isWordByte(line[end])) {
				return UnifiedMemory{Device: m.word + ": " + m.what, Vendor: m.vendor, Sure: m.sure}, true
			}
			from = i + 1
		}
	}
	return UnifiedMemory{}, false
}

// unifiedHeads is the set of unifiedMarkers' words' heads, made on first
// use.
var unifiedHeads = sync.OnceValue(func() *headSet {
	words := make([]string, len(unifiedMarkers))
	for i, m := range unifiedMarkers {
		words[i] = m.word
	}
	return newHeadSet(words)
})

func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
