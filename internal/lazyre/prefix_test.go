package lazyre

import "testing"

// StartsMatch: the starts of a match (cut at any byte) are, texts that
// depart from the form are not; a whole match is a start too.
func TestStartsMatch(t *testing.T) {
	re := New(`^Failed to allocate request for [0-9.]+ ?[KMGTPE]?i?B \([0-9]+B\) on device ordinal [0-9]+`)
	for s, want := range map[string]bool{
		"Failed to allocate request for":                                          true,
		"Failed to allocate request for 32.00MiB (":                               true,
		"Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0": true,
		"Failed to allocate request for stream":                                   false,
		"Failed to allocate request for 32.00MiB 7":                               false,
		"failed": false,
	} {
		if got := re.StartsMatch(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
