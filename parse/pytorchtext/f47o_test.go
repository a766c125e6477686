package pytorchtext

import "testing"

// TFTensorBytes: elements times the type's size as TensorFlow prints
// them; -1 for a type of no fixed size, a cut shape, or a product past
// 2^62.
func TestF47oTFTensorBytes(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
	}{
		// 16*1*892800*8*4*2*2 = 1828454400 elements, 4 bytes each.
		{"OOM when allocating tensor with shape[16,1,892800,8,4,2,2] and type float on /job:localhost", 7313817600},
		// 64*64*3*3 = 36864 elements of 2 bytes.
		{"OOM when allocating tensor with shape[64,64,3,3] and type half on", 73728},
		{"OOM when allocating tensor with shape[] and type double on", 8}, // a scalar
		{"OOM when allocating tensor with shape[10] and type string on", -1},
		{"OOM when allocating tensor with shape[1", -1},
		{"OOM when allocating tensor with shape[4294967296,4294967296] and type float on", -1},
	} {
		if got, _, _ := TFTensorBytes(c.text); got != c.want {
			t.Errorf("%q: %d, want %d", c.text, got, c.want)
		}
	}
}
