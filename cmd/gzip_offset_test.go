package cmd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// content reads a testdata file, decompressed when it is gzipped.
func content(t *testing.T, path string) []byte {
	t.Helper()
	if strings.HasSuffix(path, ".gz") {
		return gunzipped(t, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every family's error offset in a gzipped input counts bytes of its
// decompressed content, and says so, as the NVML reader's did: a profiler
// trace, a snapshot and a memory timeline said "byte offset N" of a file
// whose N-th byte on disk is compressed data. Two kinds of cut: the gzip
// stream cut short (the file cut: the compressed bytes read are given, and
// the cause, gzip's unexpected EOF, even where the parser saw only its own
// end of input), and a whole gzip stream of content cut short (its
// offsets are still the decompressed content's). The pickle's offset is
// known: the content ends at its cut, half of it.
func TestGzipOffsetsSayDecompressed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		src, name string
		streamCut bool
		exact     bool // the error is at the end of the content: its cut
	}{
		{"kineto/profile_keep_outputs_trace.json.gz", "trace.json.gz", true, false},
		{"kineto/profile_keep_outputs_trace.json.gz", "trace_whole.json.gz", false, false},
		{"pytorch/protocol5.pickle.gz", "snap.pickle.gz", true, false},
		{"pytorch/protocol5.pickle.gz", "snap_whole.pickle.gz", false, true},
		{"kineto/profile_keep_outputs_memory_timeline.json", "timeline_whole.json.gz", false, false},
	} {
		data := content(t, td+c.src)
		file := gzipped(t, data[:len(data)/2])
		if c.streamCut {
			file = gzipped(t, data)
			file = file[:len(file)/2]
		}
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, file, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := run(t, nil, "analyze", p)
		if code != ExitInput || !strings.Contains(errOut, " of the decompressed content") {
			t.Errorf("%s: exit %d, stderr %q: want the offset said to be of the decompressed content", c.name, code, errOut)
		}
		if c.streamCut && (!strings.Contains(errOut, "(compressed bytes read: ") || !strings.Contains(errOut, "gzip: unexpected EOF")) {
			t.Errorf("%s: stderr %q: want the compressed bytes read and the gzip stream's cut", c.name, errOut)
		}
		if want := fmt.Sprintf("byte offset %d of the decompressed content", len(data)/2); c.exact && !strings.Contains(errOut, want) {
			t.Errorf("%s: stderr %q, want %q", c.name, errOut, want)
		}
	}
	// An input that is not gzipped keeps its plain offsets.
	snap := gunzipped(t, td+"pytorch/protocol5.pickle.gz")
	p := filepath.Join(dir, "snap_plain.pickle")
	if err := os.WriteFile(p, snap[:len(snap)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, errOut := run(t, nil, "analyze", p); !strings.Contains(errOut, fmt.Sprintf("byte offset %d: ", len(snap)/2)) {
		t.Errorf("plain snapshot: stderr %q", errOut)
	}
}
