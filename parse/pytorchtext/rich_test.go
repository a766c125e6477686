package pytorchtext

import (
	"strings"
	"testing"
)

// A Rich traceback's frames are read as a Python traceback's are. The real
// paste (maybleMyers/H1111#23) is a Windows subprocess's Rich panel cut
// above its last frame: "SUBPROCESS: │ C:\H1111\modules\
// custom_offloading_utils.py:105 in weighs_to_device │" (line 3), its
// numbered source with "> 105" (a legacy console's marker), the square
// box's bottom "└───┘", then "SUBPROCESS: RuntimeError: CUDA error: out of
// memory" (line 13). Its one frame is the OOM's site; the source line 247
// above it (line 1) is no frame.
func TestRichTracebackRealPaste(t *testing.T) {
	rs := readFile(t, "pastes/rich_square_windows_subprocess_h1111_23.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 13 || rs.msgs[0].gen != "cuda-error" {
		t.Fatalf("messages %+v", rs.msgs)
	}
	want := tbFrame{`C:\H1111\modules\custom_offloading_utils.py`, 105, "weighs_to_device"}
	if f := rs.frames[rs.msgs[0].id]; len(f) != 1 || f[0] != want {
		t.Errorf("frames %+v", f)
	}
}

// Rich's forms, from rich/traceback.py's _render_stack (a panel titled
// "Traceback (most recent call last)", each frame "PATH:LINE in NAME"
// after a blank line, "in NAME:LINE" for a file that does not exist,
// numbered source with "❱" at the frame's line, a locals panel nested,
// "... N frames hidden ..."), in the boxes real pastes show: rounded
// (ZenML's docs), square with a header wrapped before its name (a Windows
// pytest log: "...smart_router_nodes.py:120 in │" then "│
// smart_triage_node │"), and Streamlit's boxless panel whose long path is
// folded at the width ("...streamlit/runtime/scriptru" then
// "nner/exec_code.py:121 in exec_func_with_error_handling"). Frames come
// innermost first; the OOM after the panel gets them.
func TestRichTracebackForms(t *testing.T) {
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 8.00 MiB is free. Including non-PyTorch memory, this process has 7.77 GiB memory in use. Of the allocated memory 7.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated."
	for _, c := range []struct {
		name, text string
		want       []tbFrame // innermost first
	}{
		{"rounded", `╭───────────────────── Traceback (most recent call last) ──────────────────────╮
│ /home/user/proj/train.py:88 in <module>                                      │
│                                                                              │
│   85 if __name__ == "__main__":                                              │
│ ❱ 88 │   main()                                                              │
│                                                                              │
│ in run_step:3                                                                │
│                                                                              │
│                         ... 4 frames hidden ...                              │
│                                                                              │
│ /home/user/proj/model.py:42 in forward                                       │
│                                                                              │
│   41 │   def forward(self, x):                                               │
│ ❱ 42 │   │   return self.proj(x) # "a.py:1 in b" in a comment                │
│ ╭──────── locals ────────╮                                                   │
│ │ note = 'x.py:7 in y'   │                                                   │
│ ╰────────────────────────╯                                                   │
╰──────────────────────────────────────────────────────────────────────────────╯
` + oom + "\n", []tbFrame{{"/home/user/proj/model.py", 42, "forward"}, {"/home/user/proj/train.py", 88, "<module>"}}},
		{"square wrapped", `[rank0]: ┌──────────────── Traceback (most recent call last) ────────────────┐
[rank0]: │ D:\work\proj\pipeline\stages\generation_stage.py:120 in             │
[rank0]: │ run_generation_stage                                                │
[rank0]: │                                                                     │
[rank0]: │ > 120 │   │   images = self.pipe(prompt)                            │
[rank0]: └─────────────────────────────────────────────────────────────────────┘
[rank0]: ` + oom + "\n", []tbFrame{{`D:\work\proj\pipeline\stages\generation_stage.py`, 120, "run_generation_stage"}}},
		{"boxless folded", `────────────────────── Traceback (most recent call last) ───────────────────────
  /home/adminuser/venv/lib/python3.13/site-packages/streamlit/runtime/scriptru  
  nner/exec_code.py:121 in exec_func_with_error_handling                        
                                                                                
  /mount/src/app/app.py:67 in <module>                                          
                                                                                
    64 st.subheader("x")                                                        
  ❱ 67 out = model(batch)                                                       
────────────────────────────────────────────────────────────────────────────────
` + oom + "\n", []tbFrame{{"/mount/src/app/app.py", 67, "<module>"}, {"/home/adminuser/venv/lib/python3.13/site-packages/streamlit/runtime/scriptrunner/exec_code.py", 121, "exec_func_with_error_handling"}}},
		{"prose title", "The Traceback (most recent call last) shows /x/a.py:3 in f\n" + oom + "\n", nil},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: messages %+v", c.name, rs.msgs)
		}
		got := rs.frames[rs.msgs[0].id]
		if len(got) != len(c.want) {
			t.Errorf("%s: frames %+v, want %+v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: frame %d %+v, want %+v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// A source line in a Rich panel that quotes the OOM's words is not the
// error: the panel goes on until its exception line.
func TestRichSourceQuotingOOMIsNoMessage(t *testing.T) {
	text := "╭──── Traceback (most recent call last) ────╮\n│ /p/a.py:3 in f                              │\n│                                             │\n│ ❱ 3 raise RuntimeError(\"CUDA error: out of memory\") │\n╰─────────────────────────────────────────────╯\nValueError: bad value\n"
	rs, err := readText(t, "x.log", text, false)
	if err != nil || len(rs.msgs) != 0 || strings.Contains(strings.Join(rs.meta.Warnings.Strings(), " "), "out-of-memory") {
		t.Errorf("%+v %v %q", rs.msgs, err, rs.meta.Warnings.Strings())
	}
}
