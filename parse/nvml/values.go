package nvml

import (
	"bytes"
	"math"
)

// MiB is 2^20 bytes, the unit of nvidia-smi, dmon, pmon, gpustat and DCGM.
const MiB = 1 << 20

// isSpace: ' ', '\t', '\r', '\v' or '\f' (one comparison for the bytes
// above ' ', nearly all).
func isSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f')
}

func trimSpace(b []byte) []byte {
	// Small enough to be inlined: most fields need no trimming, or only
	// the space after the comma (cut off by plainRow).
	if n := len(b); n == 0 || min(b[0], b[n-1]) > ' ' {
		return b
	}
	return trimSpaces(b)
}

// trimSpaces is trimSpace where b starts or ends with a byte that may be
// white space.
func trimSpaces(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// isPlaceholder reports whether a field is nvidia-smi's way of saying "no
// value": empty, "[N/A]", "[Not Supported]", "[No data]", "[Insufficient
// Permissions]", any other bracketed text, or a bare "N/A".
func isPlaceholder(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if b[0] == '[' && b[len(b)-1] == ']' {
		return true
	}
	return len(b) == 3 && bytes.EqualFold(b, []byte("N/A"))
}

// parseInt reads an optionally signed decimal integer of at most 18 digits.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// unitBytes returns the bytes in one of a size unit. nvidia-smi's "MB"
// means MiB (its values are multiples of 2^20), and so do dmon's and
// pmon's; decimal units are read as the binary ones for the same reason.
func unitBytes(u []byte) (int64, bool) {
	switch string(u) {
	case "B", "b":
		return 1, true
	case "KiB", "KB", "kB", "K":
		return 1 << 10, true
	case "MiB", "MB", "M":
		return 1 << 20, true
	case "GiB", "GB", "G":
		return 1 << 30, true
	case "TiB", "TB", "T":
		return 1 << 40, true
	}
	return 0, false
}

// parseSize reads "4907", "4907 MiB", "4907MiB" or "1.5 GiB" into bytes;
// a value without a unit is in unit bytes.
func parseSize(b []byte, unit int64) (int64, bool) {
	i := 0
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.') {
		i++
	}
	num, rest := b[:i], trimSpace(b[i:])
	if len(num) == 0 {
		return 0, false
	}
	if len(rest) == 3 && rest[0] == 'M' && rest[1] == 'i' && rest[2] == 'B' {
		unit = MiB // nvidia-smi's unit, ahead of unitBytes' switch
	} else if len(rest) > 0 {
		u, ok := unitBytes(rest)
		if !ok {
			return 0, false
		}
		unit = u
	}
	if v, ok := parseInt(num); ok {
		if v > math.MaxInt64/unit {
			return 0, false
		}
		return v * unit, true
	}
	f, ok := parseDecimal(num)
	if !ok || f*float64(unit) >= math.MaxInt64 {
		return 0, false
	}
	return int64(math.Round(f * float64(unit))), true
}

// parseDecimal reads "123.45" (digits with at most one point).
func parseDecimal(b []byte) (float64, bool) {
	var v float64
	scale := 0.0
	seen := false
	for _, c := range b {
		switch {
		case c == '.' && scale == 0:
			scale = 1
		case c >= '0' && c <= '9':
			seen = true
			if scale == 0 {
				v = v*10 + float64(c-'0')
			} else {
				scale /= 10
				v += float64(c-'0') * scale
			}
		default:
			return 0, false
		}
	}
	return v, seen
}

// fbMem is a GPU's frame buffer as nvidia-smi -q ("FB Memory Usage") and
// -q -x (<fb_memory_usage>) give it: Total, Reserved, Used and Free, each
// a size in MiB, or no figure ("N/A", "Not Supported": a GPU with unified
// memory), the GPU kept, its memory unknown.
type fbMem struct {
	s       sample // total, reserved, used and free (bytes), where figures
	noUsed  string // Used's text where it is no figure
	noTotal bool   // Total is no figure
}

// set reads the section's value v of key (-q's Total, Reserved, Used,
// Free; -q -x's total, reserved, used, free); other keys, and values that
// are neither a size nor a placeholder, are ignored.
func (m *fbMem) set(key string, v []byte) {
	n, ok := parseSize(v, MiB)
	if !ok {
		if isPlaceholder(v) || bytes.EqualFold(v, []byte("Not Supported")) {
			switch key {
			case "Used", "used":
				m.noUsed = string(v)
			case "Total", "total":
				m.noTotal = true
			}
		}
		return
	}
	switch key {
	case "Total", "total":
		m.s.total, m.s.hasTotal = n, true
	case "Reserved", "reserved":
		m.s.reserved, m.s.hasReserved = n, true
	case "Used", "used":
		m.s.used, m.s.hasUsed = n, true
	case "Free", "free":
		m.s.free, m.s.hasFree = n, true
	}
}

// gpu reports whether the section makes a GPU's sample: Used given, a
// figure or none.
func (m *fbMem) gpu() bool { return m.s.hasUsed || m.noUsed != "" }

// note tells r what a GPU without figures leaves unknown: the first Used
// that is no figure (field names it in the message), and a Total that is
// none (see unifiedNoMemory).
func (m *fbMem) note(r *Reader, field string) {
	if !m.s.hasUsed && r.usedPlaceholder == "" {
		r.usedPlaceholder, r.usedField = m.noUsed, field
	}
	if !m.s.hasTotal && m.noTotal {
		r.totalPlaceholders++
	}
}
