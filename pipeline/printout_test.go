package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// printoutError names the kinds of printout by their lines, and leaves
// text that is none of them (a log's progress, a traceback, a few numbers
// among words) to the generic error.
func TestPrintoutErrorKinds(t *testing.T) {
	cases := []struct {
		name, text, want string // want "": not a printout
	}{
		{"profiler header behind a log stamp", "2024-01-01 12:00:00 INFO\n" +
			"Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg       CPU Mem  Self CPU Mem    # of Calls\n",
			":2: a PyTorch profiler table"},
		{"profiler header of memory columns", "  CUDA Mem  Self CUDA Mem    # of Calls\n", ":1: a PyTorch profiler table"},
		{"profiler footer alone", "Self CPU time total: 196.413ms\n", ":1: a PyTorch profiler table"},
		{"see_memory_usage in MB", "MA 5073.12 MB         Max_MA 5210.0 MB         CA 6544.0 MB         Max_CA 6544 MB\n", ":1: DeepSpeed's see_memory_usage lines"},
		{"Megatron's first report_memory", " iteration 100 memory (MB) | allocated: 1024.5 | max allocated: 2048.0 | cached: 3072.0 | max cached: 3072.0\n", ":1: Megatron's report_memory lines"},
		{"list_gpu_processes", "GPU:1\nprocess       4242 uses      812.000 MB GPU memory\n", ":2: torch.cuda.list_gpu_processes() output"},
		{"memory_cached print", "step 3\ntorch.cuda.memory_cached() = 1073741824\n", ":2: prints of torch.cuda.memory_allocated()"},
		{"mem_get_info print", "step 3 torch.cuda.mem_get_info() = (1073741824, 85899345920)\n", ":1: prints of torch.cuda.mem_get_info()"},
		{"two numbers alone", "1.5\n2.5\n", ":1: columns of numbers without labels"},
		{"one number is not columns", "42\n", ""},
		{"numbers among words", "1 2\nloss went down\n", ""},
		{"progress log", "epoch 1 done, loss 0.5\nepoch 2 done, loss 0.4\n", ""},
		{"python traceback", "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    main()\nValueError: bad\n", ""},
		{"frames among prose", "see this stack:\nmodel.py:10:forward\nfor details\nand more\nand more\n", ""},
		{"a memory word without a figure", "Loading the model into memory, 3 shards\n", ""},
		{"one figure in a log's line", "epoch 0 done: train acc 0.410, test acc 0.450, peak memory 1.9 GiB\n", ""},
		{"figures listed in a sentence", "memory went 2.1G, 2.9G, 3.7G over the epochs\n", ":1: memory figures in prose or a Markdown table"},
		{"Ray's host memory message", "Memory on the node (IP: 10.0.0.1) where the task (pid=4331, memory used=2.22GB) was running was 59.49GB / 62.58GB (0.950744)\n", ""},
		{"a table naming a file", "| file | repo | size |\n|---|---|---|\n| ZidongLiu__memory.pickle | ZidongLiu/DeComFL | 2067498 |\n| `memory.pickle` | x | 5 | 6 |\n", ""},
		{"a table of memory per cycle", "| cycle | 0 | 20 |\n|---|---|---|\n| reserved (MiB) | 220 | 2,980 |\n", ":3: memory figures in prose or a Markdown table"},
		{"kineto trace is not cut events", `{"traceEvents": [{"ph": "i", "name": "[memory]"}]}`, ""},
	}
	for _, c := range cases {
		err := printoutError("f", []byte(c.text))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v; want none", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "f"+c.want)):
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		case err != nil && (!errors.Is(err, parse.ErrPrintout) || !errors.Is(err, parse.ErrUnknownFormat)):
			t.Errorf("%s: %v is not an ErrPrintout and ErrUnknownFormat", c.name, err)
		}
	}
}

// The series are read from the input's first bytes only: an input as long
// as them or longer says so, rather than passing them for the whole.
func TestPrintoutSeriesNamesItsLimit(t *testing.T) {
	line := "[INFO] [utils.py:803:see_memory_usage] MA 0.58 GB         Max_MA 26.38 GB         CA 26.71 GB         Max_CA 27 GB \n"
	short := []byte(strings.Repeat(line, 3))
	long := []byte(strings.Repeat(line, parse.SniffLen/len(line)+1))[:parse.SniffLen]
	if err := printoutError("f", short); err == nil || strings.Contains(err.Error(), "first 64 KiB") || !strings.Contains(err.Error(), "its figures, as printed: MA 0.58 GB (line 1) to 0.58 GB (line 3), 3 readings") {
		t.Errorf("short: %v", err)
	}
	if err := printoutError("f", long); err == nil || !strings.Contains(err.Error(), "its figures in its first 64 KiB (the rest was not read), as printed: MA 0.58 GB (line 1)") {
		t.Errorf("long: %v", err)
	}
}

// A BINSTRING length past the input's end (0xFFFFFFFF, negative as a
// 32-bit int) ends the walk as a cut pickle: no walk back, no panic.
func TestIsPickle01LengthPastEnd(t *testing.T) {
	head := []byte("cos\nsystem\nT\xff\xff\xff\xffabc")
	if !isPickle01(head, false) {
		t.Errorf("a cut protocol-1 pickle importing os.system: not taken for one")
	}
	if isPickle01(head, true) {
		t.Errorf("the same, whole: taken for a pickle though its string runs past its end")
	}
}
