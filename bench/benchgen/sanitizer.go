// Package benchgen makes the large inputs the benchmarks read out of the
// real ones in the repository, in memory: they are never committed.
package benchgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// SanitizerLeakLog generates a compute-sanitizer --leak-check full log of
// about size bytes from the records of real logs: every "Leaked",
// "Invalid" and "Program hit" record of the *.txt compute-sanitizer logs
// (default prefix) in dirs, repeated in turn, each leak at its own address
// (so that the run reads as one process) with its size varied, then the
// LEAK SUMMARY and ERROR SUMMARY that agree with the records. It returns
// the log and its number of records; nil and 0 when dirs hold no such log.
func SanitizerLeakLog(dirs []string, size int) ([]byte, int) {
	recs := records(dirs)
	if len(recs) == 0 {
		return nil, 0
	}
	var b bytes.Buffer
	b.WriteString("========= COMPUTE-SANITIZER\n")
	var n, leaks, leaked int64
	for i := 0; b.Len() < size; i++ {
		r := recs[i%len(recs)]
		if r.leak {
			sz := r.size + int64(i%7)*4096
			fmt.Fprintf(&b, "========= Leaked %s bytes at 0x%x%s\n", commas(sz), 0x7f0000000000+uint64(i)*0x200000, r.rest)
			leaks++
			leaked += sz
		} else {
			b.WriteString(r.first)
			b.WriteByte('\n')
		}
		b.WriteString(r.body)
		n++
	}
	fmt.Fprintf(&b, "========= LEAK SUMMARY: %s bytes leaked in %s allocations\n", commas(leaked), commas(leaks))
	fmt.Fprintf(&b, "========= ERROR SUMMARY: %s errors\n", commas(n))
	return b.Bytes(), int(n)
}

// record is one record of a real log: its first line (for a leak, the
// size and the text after the address) and its other lines.
type record struct {
	leak  bool
	first string
	size  int64
	rest  string
	body  string
}

var leakRe = regexp.MustCompile(`^========= Leaked ([\d,]+) bytes at 0x[0-9a-f]+(.*)$`)

func records(dirs []string) []record {
	var files []string
	for _, dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		files = append(files, m...)
	}
	var recs []record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(data, []byte("========= COMPUTE-SANITIZER\n")) {
			continue
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if !strings.HasPrefix(l, "========= Leaked ") && !strings.HasPrefix(l, "========= Invalid ") && !strings.HasPrefix(l, "========= Program hit ") {
				continue
			}
			r := record{first: l}
			if m := leakRe.FindStringSubmatch(l); m != nil {
				r.leak, r.rest = true, m[2]
				r.size, _ = strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			}
			var body strings.Builder
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "=========  "); i++ {
				body.WriteString(lines[i] + "\n")
			}
			body.WriteString("========= \n")
			r.body = body.String()
			recs = append(recs, r)
		}
	}
	return recs
}

// commas writes n with thousands separators, as compute-sanitizer does.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
