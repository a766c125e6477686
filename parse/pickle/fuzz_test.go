package pickle

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must return a value
// or a *parse.Error, never panic, and never accept a code opcode.
func FuzzDecode(f *testing.F) {
	for i, v := range loadVectors(f) {
		if i%3 == 0 { // a third of the vectors keeps the seed corpus small
			if data, err := base64.StdEncoding.DecodeString(v.Pickle); err == nil && len(data) < 4096 {
				f.Add(data)
			}
		}
	}
	if b, err := os.ReadFile("../../testdata/pytorch/model_reload.pickle"); err == nil {
		f.Add(b[:4096])
	}
	f.Add([]byte("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94K\x01u."))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxStack: 1 << 12, MaxItems: 1 << 14, MaxString: 1 << 16}
		decodeBoth(t, data, lim, func() Handler { return &consumer{} })
		v, err := Decode(bytes.NewReader(data), "fuzz", &consumer{}, lim)
		if err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *parse.Error: %v", err)
			}
			if pe.Offset < 0 || pe.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the input of %d bytes", pe.Offset, len(data))
			}
			return
		}
		// A decode that succeeded ran no code opcode: step refuses each on
		// sight (TestRefusedOpcodesNameOpcodeAndOffset).
		_ = v.String()
	})
}
