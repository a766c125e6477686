package pipeline

import (
	"bytes"
	"fmt"

	"github.com/gpuleak/gpuleak/parse"
)

// containerError is the error for an input that holds other files or
// another compression than gzip (head its first bytes, after gzip's
// removal): an archive of a job's artifacts read as one text would give
// the findings of the first file it recognises and drop the rest without
// a word (a .tar.gz of an OOM log and a pmon log read as the OOM log).
// nil for anything else.
func containerError(path string, head []byte) error {
	var what, do string
	switch {
	case isTarHeader(head):
		what, do = "a tar archive", "extract it (tar xf) and give its files, or gpuleak report the directory they are in"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		what, do = "a zip archive", "extract it (unzip) and give its files, or gpuleak report the directory they are in"
	case bytes.HasPrefix(head, []byte("7z\xbc\xaf\x27\x1c")):
		what, do = "a 7-Zip archive", "extract it (7z x) and give its files, or gpuleak report the directory they are in"
	case bytes.HasPrefix(head, []byte("\x28\xb5\x2f\xfd")):
		what, do = "zstd-compressed", "decompress it first (zstd -d FILE, or zstd -dc FILE piped to \"-\"); gpuleak removes gzip only"
	case bytes.HasPrefix(head, []byte("\xfd7zXZ\x00")):
		what, do = "xz-compressed", "decompress it first (xz -d FILE, or xz -dc FILE piped to \"-\"); gpuleak removes gzip only"
	case len(head) >= 10 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' && bytes.Equal(head[4:10], []byte("1AY&SY")):
		what, do = "bzip2-compressed", "decompress it first (bzip2 -d FILE, or bzip2 -dc FILE piped to \"-\"); gpuleak removes gzip only"
	default:
		return nil
	}
	return &parse.Error{File: path, Offset: 0, Err: parse.ErrContainer,
		Msg: fmt.Sprintf("%s, not an input: %s", what, do)}
}

// isTarHeader: head starts with a tar header block, POSIX ustar or GNU
// (the magic at byte 257), whose checksum holds: text that merely has
// "ustar" there is no archive.
func isTarHeader(head []byte) bool {
	if len(head) < 512 || !bytes.Equal(head[257:262], []byte("ustar")) {
		return false
	}
	// The checksum: the sum of the block's bytes, its own 8 counted as
	// spaces, in octal at 148.
	var sum int64
	for i, c := range head[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	field := bytes.Trim(head[148:156], " \x00")
	var want int64
	if len(field) == 0 {
		return false
	}
	for _, c := range field {
		if c < '0' || c > '7' {
			return false
		}
		want = want*8 + int64(c-'0')
	}
	return sum == want
}
