package pytorchtext

import (
	"strconv"
	"sync"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// Theano's start-up lines name the GPU it runs on, which its
// out-of-memory messages do not: the gpuarray back-end's init_dev prints
// "Mapped name None to device cuda1: GeForce GTX 1080 (0000:02:00.0)"
// (a context name, then the device, "cuda" alone for the default one),
// the old CUDA back-end "Using gpu device 0: GeForce GTX 980 (CNMeM is
// disabled, cuDNN 5005)". The index is CUDA's, among the process's
// visible devices.

// theanoDeviceRe reads the device of either line.
var theanoDeviceRe = lazyre.New(`(?:Mapped name (\S+) to device cuda(\d{1,3}): |Using gpu device (\d{1,3}): )`)

// theanoDevice is the GPU Theano's start-up lines named: device (-1 when
// none did, -2 when two contexts named two devices), and the line.
type theanoDevice struct {
	name   string
	device int
	line   int64
}

// theanoDeviceWords are words each of theanoDeviceRe's forms holds.
var theanoDeviceWords = []string{" to device cuda", "Using gpu device "}

// theanoDeviceHeads is the set of theanoDeviceWords' heads, made on
// first use.
var theanoDeviceHeads = sync.OnceValue(func() *headSet { return newHeadSet(theanoDeviceWords) })

// seeTheanoDevice reads a Theano start-up line that names its GPU.
func (r *Reader) seeTheanoDevice(line string) {
	if !theanoDeviceHeads().mayHold(line, 0) {
		return // neither of theanoDeviceWords is on the line
	}
	x := theanoDeviceRe.FindStringSubmatch(line)
	if x == nil {
		return
	}
	if x[3] != "" {
		d, _ := strconv.Atoi(x[3])
		r.theano = theanoDevice{device: d, line: r.line}
		return
	}
	d, _ := strconv.Atoi(x[2])
	if t := r.theano; t.line > 0 && t.name != "" && t.name != x[1] && t.device != d {
		// Several contexts (contexts=dev0->cuda0;dev1->cuda1): the
		// message does not say whose.
		r.theano = theanoDevice{name: x[1], device: -2, line: r.line}
		return
	}
	r.theano = theanoDevice{name: x[1], device: d, line: r.line}
}

// theanoMessageDevice gives a Theano message with no device (GenTheano,
// or libgpuarray's CUDA status that Printer names Theano for) the GPU
// Theano's start-up line before it named, with a warning that says so.
func (r *Reader) theanoMessageDevice(m *Message, line int64) {
	if m.Device >= 0 || r.theano.line == 0 || r.theano.device < 0 || r.theano.line >= line || Printer(*m) != "Theano" {
		return
	}
	m.Device = r.theano.device
	r.meta.Warnings.Linef(int(line), "the Theano message names no GPU; GPU %d is from Theano's start-up line %d (its device, cuda%d, among the process's visible devices)", m.Device, r.theano.line, m.Device)
}
