package pytorchtext

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Session 47, u47a (testdata/README.md, "OOM text logs: host statuses,
// Level Zero, llama.cpp's Vulkan backend, check macros (session 47,
// u47a)").

// tensorflow/models#1993 (TF 1.2, Windows): op_kernel.cc's WARNING record
// (line 2) and the ResourceExhaustedError (line 12) name no device; the
// op's node on line 13 was placed on "/job:localhost/replica:0/task:0/cpu:0"
// (the paste is cut right after it). The op ran on the CPU, so host memory
// ran out: no GPU OOM row (it was one, device unknown), the record held on
// line 2 is the same failure (no row either), and one warning on line 12
// names the node's device. A _Recv node whose recv_device is the CPU and
// whose own _device is a GPU is the GPU's (tensorflow/tensorflow#4735's
// second node line names the CPU in recv_device before its GPU op's).
func TestU47aTFNodeOnCPU(t *testing.T) {
	rs := readFile(t, "pastes/tf1_node_device_cpu_tfmodels1993.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("%d OOM rows, want none: %+v", len(rs.msgs), rs.msgs)
	}
	w := rs.meta.NotOOMs.Strings()
	if len(w) != 1 || !strings.Contains(w[0], "line 12:") || !strings.Contains(w[0], "placed on /cpu:0") || !strings.Contains(w[0], "host memory") {
		t.Errorf("not-OOM warnings %q, want one on line 12 naming /cpu:0", w)
	}
	text := "ResourceExhaustedError: OOM when allocating tensor with shape[8,8]\n" +
		"\t [[Node: r/_99 = _Recv[client_terminated=false, recv_device=\"/job:localhost/replica:0/task:0/cpu:0\", send_device=\"/job:localhost/replica:0/task:0/gpu:0\", _device=\"/job:localhost/replica:0/task:0/gpu:1\"]()]]\n"
	rs, err := readText(t, "recv.txt", text, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].device != 1 {
		t.Errorf("%v %+v; want one message on GPU 1 (the node's own _device)", err, rs.msgs)
	}
}

// The GPU runtimes' statuses for host memory (Level Zero's, the Unified
// Runtime's and PI's, Vulkan's, OpenCL's) and a failed pinned host
// allocation (cudaMallocHost) are the machine's memory running out: each
// is one warning among NotOOMs on its line and no OOM row (before, the
// statuses were not read at all, "no CUDA out-of-memory message", and
// cudaMallocHost's error was a GPU OOM). Level Zero's own device-memory
// status is an OOM row of Intel's Level Zero driver on an XPU (it was not
// read). Real pastes (testdata/README.md, session 47, u47a); the line
// numbers are theirs.
func TestU47aRuntimeStatuses(t *testing.T) {
	for _, c := range []struct {
		file string
		rows []int64 // the OOM rows' lines
		lib  string  // of the rows
		host []int64 // the host warnings' lines
		says string  // in the host warning
	}{
		// chipStar#612: its check prints the status twice (lines 2, 5).
		{"level_zero_device_chipstar612.txt", []int64{2, 5}, "Intel's Level Zero driver", nil, ""},
		// Dota-2-Vulkan#355: "result = VK_ERROR_OUT_OF_HOST_MEMORY".
		{"host_status_vulkan_dota2vulkan355.txt", nil, "", []int64{5}, "Vulkan reported that host memory ran out (VK_ERROR_OUT_OF_HOST_MEMORY"},
		// nokyan/resources#418: GTK's "has failed. (VK_ERROR_...)".
		{"host_status_vulkan_gdk_resources418.txt", nil, "", []int64{4}, "VkResult -1"},
		// Vina-GPU-2.1#49: "Err-6:CL_OUT_OF_HOST_MEMORY".
		{"host_status_opencl_vinagpu49.txt", nil, "", []int64{4}, "OpenCL reported that host memory ran out"},
		// llama.cpp PR #9476's SYCL guide: the status twice after
		// "Native API returns: -6 (": one warning (the second follows
		// the first's parenthesis, not "returns:").
		{"host_status_pi_llamacpp9476.txt", nil, "", []int64{1}, "the SYCL runtime (PI) reported that host memory ran out"},
		// ashalliants/ninfer-3090 PR #25: cudaMallocHost's failure.
		{"pinned_host_cudamallochost_ninfer25.txt", nil, "", []int64{1}, "cudaMallocHost, which allocates page-locked (pinned) host memory"},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		var rows []int64
		for _, m := range rs.msgs {
			rows = append(rows, m.line)
			if Library(m.text) != c.lib || m.backend != "XPU" {
				t.Errorf("%s: row on line %d of %q on %q, want %q on XPU", c.file, m.line, Library(m.text), m.backend, c.lib)
			}
		}
		if !slices.Equal(rows, c.rows) {
			t.Errorf("%s: OOM rows on lines %v, want %v", c.file, rows, c.rows)
		}
		w := rs.meta.NotOOMs.Strings()
		if len(w) != len(c.host) {
			t.Errorf("%s: %d host warnings, want %d: %.300q", c.file, len(w), len(c.host), w)
			continue
		}
		for i, l := range c.host {
			if !strings.HasPrefix(w[i], fmt.Sprintf("line %d: ", l)) || !strings.Contains(w[i], c.says) || !strings.Contains(w[i], "not counted as a GPU OOM") {
				t.Errorf("%s: warning %.300q, want line %d saying %q", c.file, w[i], l, c.says)
			}
		}
	}
}

// The call a CUDA error names decides: the last call named before the
// status (a device allocation after a host one is the GPU's), or the call
// a check quotes after it (synthetic lines in the real forms). Source code
// naming a host status, and the status alone on a line (a title), are no
// message.
func TestU47aHostCallAndStatusForms(t *testing.T) {
	for _, c := range []struct {
		line       string
		rows, host int
	}{
		{"cudaMalloc failed: cudaErrorMemoryAllocation: out of memory", 1, 0},
		{"pinned cudaMallocHost(&h, n) ok; cudaMalloc failed: cudaErrorMemoryAllocation: out of memory", 1, 0},
		{"cudaHostAlloc failed: cudaErrorMemoryAllocation: out of memory", 0, 1},
		{"CUDA error at main.cu:45 code=2(cudaErrorMemoryAllocation) \"cudaMallocHost(&h_a, bytes)\"", 0, 1},
		{"CUDA error at main.cu:46 code=2(cudaErrorMemoryAllocation) \"cudaMalloc(&d_a, bytes)\"", 1, 0},
		{"RuntimeError: CUDA error: out of memory", 1, 0},
		{"    case VK_ERROR_OUT_OF_HOST_MEMORY:", 0, 0},
		{"        result = VK_ERROR_OUT_OF_HOST_MEMORY;", 0, 0},
		{"    result = VK_ERROR_OUT_OF_DEVICE_MEMORY ;", 0, 0},
		{"ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", 0, 0},
		{"terminate called after throwing an instance of 'vk::OutOfHostMemoryError'", 0, 0},
		{"  what():  vk::Device::allocateMemory: ErrorOutOfHostMemory", 0, 1},
	} {
		rs, err := readText(t, "l.txt", c.line+"\n", false)
		if err != nil || len(rs.msgs) != c.rows || len(rs.meta.NotOOMs.Strings()) != c.host {
			t.Errorf("%q: %v, %d rows and %d host warnings, want %d and %d", c.line, err, len(rs.msgs), len(rs.meta.NotOOMs.Strings()), c.rows, c.host)
		}
	}
}

// Less distinctive CUDA check macros were "no CUDA out-of-memory message"
// (real pastes, testdata/README.md; the synthetic file holds one line in
// each of three macros' forms, from their sources): each is one OOM
// message of the CUDA runtime or driver on the line the paste gives,
// whose printer CheckProgram names. darknet's perror line after its error
// ("CUDA Error: out of memory: No error", AlexeyAB/darknet#514 line 4)
// reads as the same words, so the analysis makes one OOM of the two.
func TestU47aCheckMacros(t *testing.T) {
	for _, c := range []struct {
		file    string
		lines   []int64
		lib     string
		program string // a prefix of CheckProgram's name, for every message
	}{
		{"cudacheck_gpuassert_nvwavenet87.txt", []int64{4}, "the CUDA runtime", "the program's gpuErrchk"},
		{"cudacheck_gpuassert_nospace_pointpillars2.txt", []int64{1}, "the CUDA runtime", "the program's gpuErrchk"},
		{"cudacheck_darknet_layer_darknet304.txt", []int64{6}, "the CUDA runtime", "darknet"},
		{"cudacheck_darknet_perror_alexeyab514.txt", []int64{3, 4}, "the CUDA runtime", "darknet"},
		{"cudacheck_func_line_noncerpro17.txt", []int64{1}, "the CUDA runtime", "the program's own CUDA check"},
		{"cudacheck_macros_synthetic.txt", []int64{1, 2, 3}, "", "the program's "},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		var lines []int64
		for _, m := range rs.msgs {
			lines = append(lines, m.line)
			who, _ := CheckProgram(m.prefix, m.text)
			if m.printer != "" {
				who = m.printer // named by the lines around it
			}
			if m.gen != string(GenCUDAError) || c.lib != "" && Library(m.text) != c.lib || !strings.HasPrefix(who, c.program) {
				t.Errorf("%s: line %d %s of %q by %q (%q), want cuda-error of %q by %q", c.file, m.line, m.gen, Library(m.text), who, m.text, c.lib, c.program)
			}
		}
		if !slices.Equal(lines, c.lines) {
			t.Errorf("%s: messages on lines %v, want %v", c.file, lines, c.lines)
		}
		if strings.Contains(c.file, "alexeyab514") && len(rs.msgs) == 2 && rs.msgs[0].text != rs.msgs[1].text {
			t.Errorf("%s: %q and %q differ: two OOMs", c.file, rs.msgs[0].text, rs.msgs[1].text)
		}
	}
	rs := readFile(t, "pastes/cudacheck_macros_synthetic.txt", false)
	if len(rs.msgs) == 3 && Library(rs.msgs[2].text) != "the CUDA driver" {
		t.Errorf("driver API check: %q, want the CUDA driver", Library(rs.msgs[2].text))
	}
	// The same macros with another error, and their words in a sentence
	// or source code, are no message.
	for _, line := range []string{
		"GPUassert: invalid argument main.cu 12",
		"Cuda error in func \"init\" at line 33: invalid device ordinal.",
		"CUDA Error: invalid device function",
		"I get CUDA Error: out of memory when I train yolo",
		`printf("CUDA Error: %s (err_num=%d)\n", cudaGetErrorString(a), a);`,
		"checkCudaErrors() Driver API error = 0001 \"CUDA_ERROR_INVALID_VALUE\" from file <a.cpp>, line 9.",
	} {
		rs, err := readText(t, "n.txt", line+"\n", false)
		if err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %v %+v, want no message", line, err, rs.msgs)
		}
	}
}

// llama.cpp's ggml Vulkan backend logs its failed allocation's size on
// the line before Vulkan's status ("ggml_vulkan: Device memory allocation
// of size N failed." then "ggml_vulkan: vk::Device::allocateMemory:
// ErrorOutOfDeviceMemory"): the status, on the second line, is one
// llama.cpp message whose request is N bytes exactly (it was a Vulkan
// message without a size), and its retry without pipeline parallelism is
// read as the CUDA backend's is (ggmlretry.go).
//
//   - ggml-org/llama.cpp#15256: 118497280 bytes, line 2.
//   - ggml-org/llama.cpp#29270 (in a code fence): 369827840, line 4.
//   - synthetic, the real lines of both with PR #26297's retry: the
//     retry succeeded (the compute buffer sizes on line 6): no OOM row,
//     one not-OOM warning; it failed (its own failure on lines 6-7, then
//     "failed to allocate compute pp buffers"): rows on lines 2 and 7,
//     5368709120 and 2684354560 bytes.
//   - the size line before a line that is no status, or two lines before
//     it, gives nothing.
func TestU47aVulkanSize(t *testing.T) {
	for _, c := range []struct {
		file      string
		lines     []int64
		requested []int64
		notOOM    int
	}{
		{"llamacpp_vulkan_size_llamacpp15256.txt", []int64{2}, []int64{118497280}, 0},
		{"llamacpp_vulkan_size_codefence_llamacpp29270.txt", []int64{4}, []int64{369827840}, 0},
		{"synthetic_llamacpp_vulkan_retry_recovered.txt", nil, nil, 1},
		{"synthetic_llamacpp_vulkan_retry_failed.txt", []int64{2, 7}, []int64{5368709120, 2684354560}, 0},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		var lines, req []int64
		for _, m := range rs.msgs {
			lines, req = append(lines, m.line), append(req, m.sizes["requested"])
			if Library(m.text) != "llama.cpp (ggml)" || m.backend != "Vulkan" {
				t.Errorf("%s: line %d of %q on %q, want llama.cpp (ggml) on Vulkan", c.file, m.line, Library(m.text), m.backend)
			}
		}
		if !slices.Equal(lines, c.lines) || !slices.Equal(req, c.requested) {
			t.Errorf("%s: rows on lines %v requesting %v, want %v and %v", c.file, lines, req, c.lines, c.requested)
		}
		if n := len(rs.meta.NotOOMs.Strings()); n != c.notOOM {
			t.Errorf("%s: %d not-OOM warnings, want %d: %q", c.file, n, c.notOOM, rs.meta.NotOOMs.Strings())
		}
	}
	for _, text := range []string{
		"ggml_vulkan: Device memory allocation of size 1024 failed.\nsomething else\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n",
	} {
		rs, err := readText(t, "v.txt", text, false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].sizes["requested"] > 0 || Library(rs.msgs[0].text) != "Vulkan" {
			t.Errorf("%q: %v %+v, want one Vulkan message without a size", text, err, rs.msgs)
		}
	}
}

// C++'s std::bad_alloc alone is a host allocation's failure
// (AdaptiveCpp/AdaptiveCpp#768: "what():  std::bad_alloc" on line 4, the
// terminate line before it naming the type): one host warning on line 4,
// no OOM row (it was "no CUDA out-of-memory message"). A GPU library's
// std::bad_alloc that names its CUDA error after it stays the GPU's OOM;
// the words in prose or code are nothing (synthetic).
func TestU47aBadAlloc(t *testing.T) {
	rs := readFile(t, "pastes/host_bad_alloc_adaptivecpp768.txt", false)
	w := rs.meta.NotOOMs.Strings()
	if len(rs.msgs) != 0 || len(w) != 1 || !strings.HasPrefix(w[0], "line 4: ") || !strings.Contains(w[0], "not counted as a GPU OOM") {
		t.Errorf("rows %+v, host warnings %q; want no row, one warning on line 4", rs.msgs, w)
	}
	for _, c := range []struct {
		text       string
		rows, host int
	}{
		{"MemoryError: std::bad_alloc\n", 0, 1},
		{"  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n", 1, 0},
		{"I think the std::bad_alloc is from the loader\n", 0, 0},
		{"    catch (const std::bad_alloc& e) {\n", 0, 0},
	} {
		rs, err := readText(t, "b.txt", c.text, false)
		if err != nil || len(rs.msgs) != c.rows || len(rs.meta.NotOOMs.Strings()) != c.host {
			t.Errorf("%q: %v, %d rows, %d host warnings; want %d and %d", c.text, err, len(rs.msgs), len(rs.meta.NotOOMs.Strings()), c.rows, c.host)
		}
	}
}

// llama.cpp's ggml SYCL backend's failed sycl::malloc_device,
// "ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate N Bytes of
// memory on device", was not read: it is one llama.cpp message on an XPU
// whose request is N bytes (intel/compute-runtime#984's paste, wrapped
// after the function's colon: line 2; the one-line form of the source's
// format string: line 1, synthetic). The words in a sentence (ggml-org/
// llama.cpp PR #28953's title) are not.
func TestU47aSYCLAlloc(t *testing.T) {
	for _, c := range []struct {
		file string
		line int64
	}{
		{"llamacpp_sycl_alloc_wrapped_computeruntime984.txt", 2},
		{"synthetic_llamacpp_sycl_alloc.txt", 1},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) != 1 || rs.msgs[0].line != c.line || rs.msgs[0].sizes["requested"] != 21583194624 || rs.msgs[0].backend != "XPU" || Library(rs.msgs[0].text) != "llama.cpp (ggml)" {
			t.Errorf("%s: %+v, want one llama.cpp message on line %d, XPU, 21583194624 bytes", c.file, rs.msgs, c.line)
		}
	}
	rs, err := readText(t, "t.txt", "[SYCL]fix the B70 mem allocate error when >19.3GB, can't allocate 2303168640 Bytes of memory on device\n", false)
	if err != nil || len(rs.msgs) != 0 {
		t.Errorf("the PR's title: %v %+v, want no message", err, rs.msgs)
	}
}
