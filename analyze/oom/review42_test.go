package oom

import (
	"math"
	"strings"
	"testing"
)

// From the review of session 41's OOM readers: PaddlePaddle's size with a
// space before its unit ("56.000000 MB", which the message's form
// accepted) lost the request and the note said "-1 bytes"; a size in PB
// was not read; TensorFlow's "0 bytes" (dropped as no request) gave
// "could not allocate -1 bytes". The request is read, or the note says it
// was not; never -1.
func TestRequestNeverMinusOne(t *testing.T) {
	const paddle = "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 56.000000 MB memory on GPU 0, 15.71 GB memory has been allocated and available memory is only 7.56 MB.\n"
	for _, c := range []struct {
		text string
		req  int64
	}{
		{paddle, 56 << 20},
		{strings.Replace(paddle, "56.000000 MB", "2.000000PB", 1), 2 << 50},
		{strings.Replace(paddle, "56.000000 MB", "99999.000000EB", 1), math.MaxInt64},
		{"ResourceExhaustedError: Ran out of GPU memory when allocating 0 bytes for\n", -1},
	} {
		pm := textPostmortem(t, c.text)
		if len(pm.OOMs) != 1 {
			t.Fatalf("%.60q: %d reports", c.text, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		if c.req >= 0 && r.RequestedBytes != c.req {
			t.Errorf("%.60q: request %d, want %d", c.text, r.RequestedBytes, c.req)
		}
		for _, n := range r.Notes {
			if strings.Contains(n, "-1 bytes") {
				t.Errorf("%.60q: note %q", c.text, n)
			}
		}
	}
}
