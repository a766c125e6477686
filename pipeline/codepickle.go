package pipeline

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pickle"
)

// importArgsRe is what follows a protocol 0 or 1 GLOBAL ("c") or INST
// ("i") opcode: a module and a name, each a dotted Python identifier on a
// line of its own ("cos\nsystem\n", "cbuiltins\neval\n").
var importArgsRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_.]*\n[A-Za-z_][A-Za-z0-9_.]*\n`)

// codePickleError is the error for an input no family claimed that is a
// protocol 0 or 1 pickle (no PROTO opcode, so pytorch.Sniff takes one
// only when a snapshot key shows) which imports a Python callable: the
// decoder's own refusal, naming the opcode and its byte offset, as for any
// other pickle, rather than "unrecognised input format". head is the
// input's first bytes (parse.SniffLen at most, the whole input when
// fewer). nil when head is no such pickle (isPickle01).
func codePickleError(path string, head []byte) error {
	if !isPickle01(head, len(head) < parse.SniffLen) {
		return nil
	}
	_, err := pickle.Decode(bytes.NewReader(head), path, nopHandler{}, pickle.Limits{})
	var pe *parse.Error
	if !errors.Is(err, pickle.ErrCodeOpcode) || !errors.As(err, &pe) {
		return nil
	}
	return err
}

type nopHandler struct{}

func (nopHandler) Tag(*pickle.Container, *pickle.Container, pickle.Value, int64) {}
func (nopHandler) Append(*pickle.Container, int64, pickle.Value) (bool, error) {
	return false, nil
}

// isPickle01 reports whether head is, opcode by opcode, a protocol 0 or 1
// pickle (the opcodes Python's pickler writes for them, as pickletools
// lists them) with a GLOBAL or INST opcode whose module and name are
// Python identifiers: when whole, up to a STOP opcode that is its last
// byte; otherwise to its end. Text is not one: ordinary words hold bytes
// that are no such opcode, or an argument of the wrong form.
func isPickle01(head []byte, whole bool) bool {
	imports := false
	line := func(i int) int { // the end of a text argument's line, or -1
		if j := bytes.IndexByte(head[i:], '\n'); j >= 0 {
			return i + j + 1
		}
		return -1
	}
	for i := 0; i < len(head); {
		op := head[i]
		i++
		switch op {
		case '.': // STOP
			return imports && (i == len(head) || !whole)
		case '(', '0', '1', '2', 'N', 'R', 'a', 'b', 'd', 'l', 's', 't', 'o', ')', ']', '}', 'e', 'u', 'Q':
			// no argument
		case 'I', 'L', 'F', 'S', 'V', 'P', 'p', 'g':
			if i = line(i); i < 0 {
				return !whole && imports
			}
		case 'c', 'i': // GLOBAL, INST: module and name lines
			if !importArgsRe.Match(head[i:]) {
				return false
			}
			imports = true
			i = line(line(i))
		case 'K', 'h', 'q':
			i++
		case 'M':
			i += 2
		case 'J', 'j', 'r':
			i += 4
		case 'G':
			i += 8
		case 'U':
			if i < len(head) {
				i += 1 + int(head[i])
			}
		case 'T', 'X':
			// The length compared as unsigned: as an int it may be
			// negative where int is 32 bits, and walk back.
			if i+4 > len(head) || uint64(binary.LittleEndian.Uint32(head[i:])) > uint64(len(head)-i-4) {
				i = len(head) + 1
			} else {
				i += 4 + int(binary.LittleEndian.Uint32(head[i:]))
			}
		default:
			return false
		}
		if i > len(head) {
			return !whole && imports
		}
	}
	return !whole && imports
}
