package pytorchtext

import (
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A C++ exception no code catches ends the process through
// std::terminate, whose handler (libstdc++'s verbose terminate handler)
// prints the exception's type on one line and its what() on the next:
//
//	terminate called after throwing an instance of 'thrust::system::system_error'
//	  what():  parallel_for failed: cudaErrorMemoryAllocation: out of memory
//
// The what() line holds the error's words alone; the type, which names
// the library that threw it (thrust, dlib, PMacc, c10 for PyTorch's C++
// checks), is on the line before. The reader gives a message read on the
// what() line that type as its Exception.

// terminateRe matches the handler's type line; its group is the type.
var terminateRe = lazyre.New(`terminate called after throwing an instance of '([^']{1,300})'`)

// maxTerminateLines is how far (lines) a what() line may follow its type
// line: the next line, or the one after a blank line (a paste's).
const maxTerminateLines = 2

// seeTerminate remembers the type a terminate handler's line names
// (terminateRe).
func (r *Reader) seeTerminate(line string) {
	if !strings.Contains(line, "terminate called after throwing") {
		return
	}
	if m := terminateRe.FindStringSubmatch(line); m != nil {
		r.thrown, r.thrownLine = m[1], r.line
	}
}

// thrownException returns the type of the C++ exception whose what() the
// message at line[at] is: the type named by a terminate handler's line
// at most maxTerminateLines before it, where "what():" is before the
// message on its line; "" otherwise.
func (r *Reader) thrownException(line string, at int) string {
	if r.thrown == "" || r.line-r.thrownLine > maxTerminateLines || r.line == r.thrownLine {
		return ""
	}
	if !strings.Contains(line[:at], "what():") {
		return ""
	}
	return r.thrown
}
