package pytorchtext

import "testing"

// torch-directml's "Could not allocate tensor with N bytes. There is not
// enough GPU video memory available!" (ComfyUI, stable-diffusion-webui's
// AMD fork on Windows) was "no CUDA out-of-memory message in it". It is
// now a directml message whose request is the N printed (530841600 and
// 4915840 bytes). The form is read whole: a title that writes the size as
// "XXXXXXXX" is not a message, and one wrapped after "bytes." is joined
// (the size is still read).
func TestHunt45DirectML(t *testing.T) {
	for _, c := range []struct {
		file  string
		line  int64
		bytes int64
	}{
		{"pastes/directml_traceback_hunyuanwrapper211.txt", 6, 530841600},
		{"pastes/directml_webui_amdgpu592.txt", 4, 4915840},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1; warnings %.200q", c.file, len(rs.msgs), rs.meta.Warnings.Strings())
		}
		if m := rs.msgs[0]; m.line != c.line || m.gen != string(GenDirectML) || m.sizes["requested"] != c.bytes || m.reason != "" || m.exception != "RuntimeError" {
			t.Errorf("%s: %+v, want line %d, directml, %d bytes, after RuntimeError", c.file, m, c.line, c.bytes)
		}
	}
	for _, c := range []struct {
		text  string
		n     int
		bytes int64
	}{
		{"Could not allocate tensor with XXXXXXXX bytes. There is not enough GPU video memory available!\n", 0, 0},
		{"RuntimeError: Could not allocate tensor with 150994944 bytes.\n    There is not enough GPU video memory available!\n", 1, 150994944},
	} {
		rs, err := readText(t, "t", c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != c.n || c.n == 1 && rs.msgs[0].sizes["requested"] != c.bytes {
			t.Errorf("%.80q: %+v, want %d messages of %d bytes", c.text, rs.msgs, c.n, c.bytes)
		}
	}
}
