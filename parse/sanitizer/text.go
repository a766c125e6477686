package sanitizer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"io"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// maxLine is the longest line read: demangled C++ frames run to a few
// kilobytes; a line of megabytes is not a log.
const maxLine = 4 << 20

var (
	// A banner: whatever prefix, then the tool's name.
	bannerRe = lazyre.New(`^(.*?)(\S+)( +)(COMPUTE-SANITIZER|CUDA-MEMCHECK)\s*$`)
	// Starts of top-level lines that can follow unterminated program output.
	recordStartRe = lazyre.New(`^(COMPUTE-SANITIZER|CUDA-MEMCHECK|Leaked [\d,]+ bytes|LEAK SUMMARY: |ERROR SUMMARY: |RACECHECK SUMMARY: |Program hit |Invalid (?:__(?:global|shared|local|generic)__|global|shared|local|generic)\b|Malloc/Free error|Uninitialized (?:__global__|global)\b|Host API memory access error|Unused memory in allocation|Error: Race|Warning: Race|(ERROR|WARN|INFO): Race reported|Barrier error|(Error|Warning|ERROR|WARN|INFO): ?(\([^)]*\) ?)?Potential )`)

	leakSummaryRe = lazyre.New(`^LEAK SUMMARY: ([\d,]+) bytes? leaked in ([\d,]+) allocations?`)
	notPrintedRe  = lazyre.New(`^ERROR SUMMARY: ([\d,]+) errors? (were|was) not printed`)
	errSummaryRe  = lazyre.New(`^ERROR SUMMARY: ([\d,]+) errors?`)
	raceSummaryRe = lazyre.New(`^RACECHECK SUMMARY: ([\d,]+) hazards? displayed`)
	apiLegacyRe   = lazyre.New(`^Program hit error (\d+) on CUDA API call to\s+(\w+)`)
	apiCallRe     = lazyre.New(`on (?:CUDA )?API call to\s+(\w+)`)
	hwRe          = lazyre.New(`^(Warp|Lane|Device) .*(Address|Instruction|Exception|Error|PC)|^(Illegal Instruction|Illegal Address|Invalid PC|Out-of-range|Misaligned|Hardware Exception|Stack overflow)`)

	threadRe   = lazyre.New(`^by thread (\([\d, ]+\)) in block (\([\d, ]+\))`)
	addrLineRe = lazyre.New(`^(?:Address|Access (?:to|at)) (0x[0-9a-fA-F]+)`)

	funcOffsetRe = lazyre.New(`^(.*)\+(0x[0-9a-fA-F]+)$`)
	legacyAtRe   = lazyre.New(`^(.+?):(\d+):(.+)$`)
	// "synchronization.jl:12:kernel (kernel : 0x46c0)"
	legacyDevOffsetRe = lazyre.New(`^(.*\S) \((\S+) : (0x[0-9a-fA-F]+)\)$`)
)

// textSource reads records from a text log.
type textSource struct {
	name string
	rd   *Reader
	br   *bufio.Reader
	line int64
	eof  bool
	cut  bool // the line just read has no line ending: the input ends in it

	// The prefix: core is its last word ("========="), base the spaces
	// after it on a top-level line, lead whether text may precede it.
	core    string
	base    int
	lead    bool
	seenAny bool

	allRuns []*run
	cur     *run
	rec     *record
	out     *record

	sawCont, sawLegacy bool // layout hints of the open record
	// lastLine is the line that added the open record's last frame
	// (lastFrame) or detail line (else); 0 when none did.
	lastLine      int64
	lastFrame     bool
	lastWasLeak   bool  // the previous record of the run was a leak
	programSince  bool  // program output since the previous record ended
	toolLines     int64 // lines after the prefix, all runs
	coreLine      int64 // the line the prefix was learned from
	unmatched     int64 // lines like records that did not match the prefix
	unmatchedLine int64 // the first of them
	scratch       []byte
	// early holds the first lines read before the prefix was learned
	// (at most maxEarly, with their line numbers): once it is, those that
	// carry it at a detail's indentation are the end of a record whose
	// start is not in the input (an excerpt that begins mid-record).
	early []earlyLine

	// spare is the record next returned last: the Reader has copied it
	// into its builders by the time the next record starts, so its frame
	// and detail slices are used again.
	spare *record
	// lines interns recent lines and hostFrames the parse of recent host
	// frames, by their text: a leak log repeats a few dozen frame lines in
	// every record. Each holds at most maxInterned entries, and starts
	// over when full.
	lines      map[string]string
	hostFrames map[string]parsedFrame

	// program receives the program's output lines, the tool's blanked
	// (WithProgramOutput); nil when not asked for. isProgram says whether
	// the line just handled was the program's.
	program   io.Writer
	isProgram bool
}

// parsedFrame is a host frame as hostFrame parsed it, and whether it was
// of the legacy layout.
type parsedFrame struct {
	f      frame
	legacy bool
}

// maxInterned bounds the tables of interned lines and parsed frames
// (entries), and maxInternedLine the length of a line or frame kept in
// them (bytes): together at most about 8 MiB of text.
const (
	maxInterned     = 4096
	maxInternedLine = 1024
)

func newTextSource(r io.Reader, name string, rd *Reader) *textSource {
	return &textSource{name: name, rd: rd, br: bufio.NewReaderSize(crReader{bufio.NewReaderSize(r, 64<<10)}, 64<<10), program: rd.programOutput}
}

func (s *textSource) runs() []*run { return s.allRuns }

func (s *textSource) errf(format string, args ...any) error {
	return parse.LineErrorf(s.name, int(s.line), format, args...)
}

// readLine returns the next line without its line ending.
func (s *textSource) readLine() (string, bool, error) {
	s.scratch = s.scratch[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.scratch = append(s.scratch, chunk...)
		if len(s.scratch) > maxLine {
			if !s.seenAny {
				// No tool line yet: nothing says this is a report (a
				// long log scanned for one, see pipeline/longtext.go).
				return "", false, &parse.Error{File: s.name, Offset: -1, Line: int(s.line + 1), Err: parse.ErrNotMine,
					Msg: fmt.Sprintf("line longer than %d MiB before any compute-sanitizer line: not a compute-sanitizer report", maxLine>>20)}
			}
			return "", false, parse.LineErrorf(s.name, int(s.line+1), "line longer than %d MiB: not a text log", maxLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", false, &parse.Error{File: s.name, Offset: -1, Line: int(s.line + 1), Msg: "reading", Err: err}
		}
		if len(s.scratch) == 0 && err != nil {
			return "", false, nil
		}
		s.line++
		s.cut = !bytes.HasSuffix(s.scratch, []byte("\n"))
		b := bytes.TrimRight(s.scratch, "\r\n")
		return s.intern(b), true, nil
	}
}

// joinWrapped joins to a tool line that ends in a backslash the lines
// after it that do not carry the prefix: a paste from an editor that
// wraps long lines so (Emacs marks a wrapped line with "\\" at the
// terminal's edge), where a host frame's function goes on in the next
// line, "...std::all\\" then "ocator<char> > const&, ...) in
// /code/lib/cuda/cudaInputData.cpp:23 [0x53be5f]". Without the join the
// frame lost its source line and the rest was taken for program output.
// The next line is peeked at, not read, unless it is joined.
//
// An editor wraps at the window's edge, so every piece but the last has
// the first's width: a line is wrapped only when it is at least
// minWrapWidth bytes, a later piece ending in a backslash only when it
// has that width, and at most maxWrapJoins pieces are joined. A line
// that already ends a frame ("[0x53be5f]\\") was not cut. So program
// output after a tool line (C macros, shell lines, each ending in a
// backslash) is not glued onto the frame, and a run of such lines costs
// no more than the lines themselves.
func (s *textSource) joinWrapped(text string) (string, error) {
	width := len(text)
	if s.core == "" || s.cut || width < minWrapWidth || !strings.HasSuffix(text, "\\") || !strings.Contains(text, s.core) ||
		frameEndRe.MatchString(text[:width-1]) {
		return text, nil
	}
	for n := 0; n < maxWrapJoins && strings.HasSuffix(text, "\\"); n++ {
		head, _ := s.br.Peek(4096)
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			head = head[:i]
		}
		head = bytes.TrimRight(head, "\r")
		if len(bytes.TrimSpace(head)) == 0 || bytes.Contains(head, []byte(s.core)) ||
			bytes.HasSuffix(head, []byte("\\")) && len(head) != width {
			break
		}
		first := text[:len(text)-1]
		next, ok, err := s.readLine()
		if err != nil || !ok {
			return first, err
		}
		text = first + next
	}
	return text, nil
}

const (
	// minWrapWidth is the narrowest line taken for one an editor wrapped
	// (kotekan#1234's were 138 bytes); maxWrapJoins the most pieces
	// joined to it (a 2,000-byte C++ name at 138 columns is 15).
	minWrapWidth = 60
	maxWrapJoins = 24
)

// frameEndRe matches a host frame's end, its address: a line ending so
// was not cut by a wrap.
var frameEndRe = lazyre.New(`\[0x[0-9a-fA-F]+\]\s*$`)

// intern returns b as a string, the one made for an earlier line of the
// same text when there is one among the recent lines.
func (s *textSource) intern(b []byte) string {
	if len(b) > maxInternedLine {
		return string(b)
	}
	if t, ok := s.lines[string(b)]; ok {
		return t
	}
	if s.lines == nil || len(s.lines) >= maxInterned {
		s.lines = make(map[string]string, 256)
	}
	t := string(b)
	s.lines[t] = t
	return t
}

func (s *textSource) next() (*record, error) {
	for s.out == nil {
		if s.eof {
			return nil, nil
		}
		text, ok, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if !ok {
			s.eof = true
			s.dropCutLast()
			s.closeRecord()
			if !s.seenAny {
				msg := "no compute-sanitizer output: no line has a tool prefix (=========) and a record"
				if s.line == 0 {
					msg = "empty input"
				}
				return nil, &parse.Error{File: s.name, Offset: -1, Msg: msg, Err: parse.ErrNotMine}
			}
			if err := s.checkUnmatched(); err != nil {
				return nil, err
			}
			continue
		}
		if text, err = s.joinWrapped(text); err != nil {
			return nil, err
		}
		s.isProgram = false
		err = s.handle(text)
		if s.program != nil {
			if werr := s.writeProgram(text); werr != nil {
				return nil, &parse.Error{File: s.name, Offset: -1, Line: int(s.line), Msg: "writing the program's output", Err: werr}
			}
		}
		if err != nil {
			var pe *parse.Error
			if s.cut && errors.As(err, &pe) {
				// The last line of a log cut short (a job killed, a
				// log truncated): what came before stands.
				s.rd.meta.Warnings.Once("cut", parse.LineNote(int(s.line), "the log ends in the middle of a line, which was skipped: %s", pe.Msg))
				continue
			}
			return nil, err
		}
	}
	r := s.out
	s.out, s.spare = nil, r
	return r, nil
}

// writeProgram writes the line just handled to s.program: its text when it
// was the program's, else nothing; then a line feed.
func (s *textSource) writeProgram(text string) error {
	if s.isProgram {
		if _, err := io.WriteString(s.program, text); err != nil {
			return err
		}
	}
	_, err := s.program.Write(lineFeed)
	return err
}

// lineFeed is what writeProgram ends each line with (never written to).
var lineFeed = []byte{'\n'}

// checkUnmatched keeps a log whose records do not match its prefix from
// reading as clean: lines that read like leak records or summaries but do
// not start with the prefix learned from the banner are an error when no
// tool line matched the prefix at all (nothing could be read), and a
// warning beside the records that were read otherwise.
func (s *textSource) checkUnmatched() error {
	if s.unmatched == 0 {
		return nil
	}
	lines, first := fmt.Sprintf("%d lines", s.unmatched), fmt.Sprintf("%d lines (the first at line %d)", s.unmatched, s.unmatchedLine)
	verb, pronoun := "read like compute-sanitizer records but do not", "they were"
	if s.unmatched == 1 {
		lines, first = "1 line", fmt.Sprintf("1 line (line %d)", s.unmatchedLine)
		verb, pronoun = "reads like a compute-sanitizer record but does not", "it was"
	}
	if s.toolLines == 0 {
		return parse.LineErrorf(s.name, int(s.unmatchedLine),
			"%s %s start with the prefix %q learned at line %d: the report cannot be read (a damaged log, or another tool's prefix?)",
			lines, verb, s.core, s.coreLine)
	}
	s.rd.meta.Warnings.Once("unmatched", parse.InlineNote(int(s.unmatchedLine), -1, "%s %s start with the prefix %q learned at line %d: %s not read, and the findings may be incomplete",
		first, verb, s.core, s.coreLine, pronoun))
	return nil
}

// learn sets the prefix from a banner or a record line; it reports
// whether text is one. Cheap substring tests come before the regular
// expressions, which would otherwise backtrack on every line of a long log
// that holds no tool output.
func (s *textSource) learn(text string) (banner bool, ok bool) {
	if hasToolName(text) {
		if m := bannerRe.FindStringSubmatch(text); m != nil {
			if core, junk := prefixCore(m[2]); core != "" && (core == s.core || strings.ContainsFunc(core, isPunct)) {
				s.core, s.base, s.lead, s.coreLine = core, len(m[3]), m[1] != "" || junk, s.line
				return true, true
			}
		}
	}
	if s.core != "" || !hasRecordStart(text) {
		return false, false
	}
	if lead, word, spaces, ok := firstRecord(text); ok {
		if core, junk := prefixCore(word); core != "" {
			s.core, s.base, s.lead, s.coreLine = core, spaces, lead != "" || junk, s.line
			return false, true
		}
	}
	return false, false
}

// firstRecord finds the earliest record start in text that follows a
// prefix: a word of marks (no space, letter or digit), then spaces. It
// returns the text before that word, the word and the number of spaces.
// (By hand: as a regular expression, "^(.*?)([^\sA-Za-z0-9]+)( +)Leaked"
// backtracks on every line that mentions a record's words.)
func firstRecord(text string) (lead, word string, spaces int, ok bool) {
	best := -1
	for _, p := range recordStarts {
		for from := 0; from < len(text); {
			i := strings.Index(text[from:], p)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if best >= 0 && i >= best {
				break
			}
			// The whole form, not the literal alone: program output
			// (">> ERROR: Potential overflow in config", "*** Invalid
			// global size") must not teach its marks as the prefix.
			if !recordFormRe.MatchString(text[i:]) {
				continue
			}
			j := i
			for j > 0 && text[j-1] == ' ' {
				j--
			}
			k := j
			for k > 0 && isMark(text[k-1]) {
				k--
			}
			if j == i || k == j {
				continue
			}
			best, lead, word, spaces = i, text[:k], text[k:j], i-j
			break
		}
	}
	return lead, word, spaces, best >= 0
}

// recordFormRe is the start of a record in its whole form, each of
// recordStarts followed by the words the tool writes after it.
var recordFormRe = lazyre.New(`^(?:Leaked [\d,]+ bytes at 0x|LEAK SUMMARY: [\d,]+ bytes? leaked|ERROR SUMMARY: [\d,]+ errors?|RACECHECK SUMMARY: [\d,]+ hazards?|Program hit \w+ |` +
	`Invalid (?:__\w+__|global|shared|local|generic) (?:read|write|atomic|access)|Malloc/Free error|Uninitialized (?:__\w+__|global) memory|Host API memory access error|Unused memory in allocation 0x|` +
	`(?:Error|Warning|ERROR|WARN|INFO): Race reported|(?:Error|Warning|ERROR|WARN|INFO): ?(?:\([^)]*\) ?)?Potential \w+ hazard|Barrier error)`)

// isMark reports a byte that may be part of a prefix word: neither ASCII
// white space nor a letter or digit.
func isMark(c byte) bool {
	return !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
		c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
}

// hasToolName reports whether a line ends in the tool's name (then white
// space only), as a banner does and as bannerRe requires: a test of the
// line's end, not a search of every line.
func hasToolName(text string) bool {
	text = strings.TrimRight(text, " \t\n\f\r")
	return strings.HasSuffix(text, "COMPUTE-SANITIZER") || strings.HasSuffix(text, "CUDA-MEMCHECK")
}

// recordStarts are the literal starts of the records firstRecord
// learns a prefix from.
var recordStarts = []string{"Leaked ", "LEAK SUMMARY: ", "ERROR SUMMARY: ", "RACECHECK SUMMARY: ", "Program hit ", "Invalid __", "Malloc/Free error", "Uninitialized __", "Host API memory access error", "Unused memory in allocation", "Error: Race reported", "Warning: Race reported", "Barrier error", "WARN:(", "ERROR:(", "INFO:(",
	"ERROR: Race reported", "WARN: Race reported", "INFO: Race reported", "ERROR: Potential ", "WARN: Potential ", "INFO: Potential ",
	"Error: Potential ", "Warning: Potential ", "Error: (", "Warning: (",
	"Invalid global ", "Invalid shared ", "Invalid local ", "Uninitialized global "}

// hasRecordStart reports whether a line holds the start of a record
// (anywhere: the prefix comes before it).
func hasRecordStart(text string) bool {
	for _, p := range recordStarts {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// looksLikeRecord reports whether a line that did not match the prefix
// still reads like a leak record or a summary: the sign of a prefix
// learned wrong, or of tool output under another prefix.
func looksLikeRecord(text string) bool {
	if i := strings.Index(text, "Leaked "); i >= 0 {
		return strings.Contains(text[i:], " bytes at 0x")
	}
	return strings.Contains(text, "LEAK SUMMARY: ") || strings.Contains(text, "ERROR SUMMARY: ")
}

// prefixCore returns the prefix of a banner or record line from w, the
// word just before the tool's words, and whether junk was glued before it
// (and dropped): control bytes (the NUL padding logrotate's copytruncate
// leaves, the remains of a terminal escape sequence), or text without a
// line ending before a run of one repeated punctuation mark, the shape of
// the default prefix "=========". A custom --prefix made of other marks
// ("[sanitizer]") is kept whole.
func prefixCore(w string) (string, bool) {
	junk := false
	if i := strings.LastIndexFunc(w, isControl); i >= 0 {
		w, junk = w[i+1:], true
	}
	if w == "" {
		return "", junk
	}
	last := w[len(w)-1]
	run := len(w)
	for run > 0 && w[run-1] == last {
		run--
	}
	if isPunct(rune(last)) && len(w)-run >= 3 && run > 0 && strings.ContainsFunc(w[:run], func(r rune) bool { return !isPunct(r) }) {
		return w[run:], true
	}
	return w, junk
}

// isControl reports control characters, which no prefix holds.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// split matches text against the prefix: it returns the content after the
// prefix and its spaces, the number of those spaces, and whether the line
// is a tool line at all.
func (s *textSource) split(text string) (string, int, bool) {
	if s.core == "" {
		return "", 0, false
	}
	i := strings.Index(text, s.core)
	if i < 0 {
		return "", 0, false
	}
	rest := text[i+len(s.core):]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		// One mark more than the prefix learned ("========" on a
		// record's first line, "=========" on its details: a prefix
		// mistyped in a paste): the open record's detail line, when it
		// is one.
		last := s.core[len(s.core)-1]
		j := 0
		for j < len(rest) && rest[j] == last {
			j++
		}
		if s.rec == nil || j == 0 || j > 2 || j == len(rest) || rest[j] != ' ' || !isDetailStart(strings.TrimLeft(rest[j:], " \t")) {
			return "", 0, false
		}
		rest = rest[j:]
	}
	n := 0
	for n < len(rest) && (rest[n] == ' ' || rest[n] == '\t') {
		n++
	}
	content := rest[n:]
	if i > 0 && !s.lead && !recordStartRe.MatchString(content) && !s.gluedFrame(content, n) {
		return "", 0, false
	}
	return content, n, true
}

// gluedFrame reports whether content, found after other text on its line,
// is a frame line of the open record: program output without a line
// ending glued before the tool's line ("719=========     Host
// Frame:./obj [0x59799]"), as a record start may be. Only frame lines, at
// a detail's indentation, are taken: other detail text after program
// output is too loose a sign of the tool's line.
func (s *textSource) gluedFrame(content string, spaces int) bool {
	return s.rec != nil && spaces > s.base &&
		(strings.HasPrefix(content, "Host Frame:") || strings.HasPrefix(content, "Device Frame:"))
}

func (s *textSource) handle(text string) error {
	if s.core == "" || hasToolName(text) {
		learned := s.core == ""
		banner, ok := s.learn(text)
		if learned && s.core != "" {
			s.checkEarly()
		}
		if ok && banner {
			s.closeRecord()
			s.startRun(text)
			return nil
		}
	}
	if s.core == "" && len(s.early) < maxEarly {
		s.early = append(s.early, earlyLine{text, s.line})
	}
	content, spaces, ok := s.split(text)
	if !ok {
		s.isProgram = true
		s.rd.meta.ProgramLines++
		if s.core != "" && looksLikeRecord(text) {
			if s.unmatched == 0 {
				s.unmatchedLine = s.line
			}
			s.unmatched++
		}
		if s.rec == nil {
			s.programSince = true
		}
		return nil
	}
	s.seenAny = true
	s.toolLines++
	if content == "" {
		s.closeRecord()
		return nil
	}
	if s.rec != nil && (spaces > s.base || isDetailStart(content)) {
		return s.detail(content)
	}
	if spaces > s.base && !recordStartRe.MatchString(content) {
		// A record's first line indented deeper than the banner
		// ("=========  Unused memory in allocation ...", initcheck's
		// --track-unused-memory record, two spaces in) starts a record.
		s.rd.meta.Warnings.Once("orphan", parse.LineNote(int(s.line), "detail lines outside a record were skipped (the log starts in the middle of a record?)"))
		return nil
	}
	return s.top(content)
}

// maxEarly bounds textSource.early.
const maxEarly = 16

// checkEarly warns, once the prefix is learned, when lines read before it
// carry it at a detail's indentation ("=========     and Read access at
// ..."): the input starts inside a record whose first line is not in it,
// so that record is not counted. They were taken for program output.
func (s *textSource) checkEarly() {
	for _, e := range s.early {
		if _, spaces, ok := s.split(e.text); ok && spaces > s.base {
			s.rd.meta.Warnings.Once("orphan", parse.LineNote(int(e.line), "detail lines outside a record were skipped (the log starts in the middle of a record?): that record is not counted"))
			break
		}
	}
	s.early = nil
}

// detailStarts are the words only a record's detail line starts with.
var detailStarts = []string{"at ", "by thread (", "Address 0x", "and is ", "and Read access", "and Write access", "and Atomic access",
	"Read Thread (", "Write Thread (", "Atomic Thread (", "Current Value", "Incoming Value", "Uninitialized access",
	"Saved host backtrace", "Host Frame:", "Device Frame:"}

// earlyLine is a line read before the prefix was learned, and its number.
type earlyLine struct {
	text string
	line int64
}

// isDetailStart reports whether c, a line at a record line's indentation,
// can only be a detail of the open record: the location ("at 0x... in
// kernel", "at kernel()+0x50 in file.cu:34"), "by thread (...)",
// "Address 0x..." and "and is inside the nearest allocation ...",
// racecheck's second access ("and Read access at ...") and hazard lines
// ("Write Thread (0,0,0) at ...", "Current Value : 0"), the backtrace's
// lines. A paste through Markdown or a chat, or text copied from the
// rendered HTML of NVIDIA's manual, collapses the indentation that sets
// details apart ("========= at unaligned_kernel()+0x50"), and no record
// starts with these words.
func isDetailStart(c string) bool {
	for _, w := range detailStarts {
		if strings.HasPrefix(c, w) {
			return true
		}
	}
	return false
}

func (s *textSource) startRun(text string) {
	tool := ToolComputeSanitizer
	if strings.Contains(text, "CUDA-MEMCHECK") {
		tool = ToolCudaMemcheck
	}
	s.seenAny = true
	prefix := s.core
	// A run without a banner that holds nothing yet takes this banner.
	if s.cur != nil && s.cur.line == 0 && s.cur.records == 0 && !s.cur.hasLeak && !s.cur.hasErrors {
		s.cur.tool, s.cur.prefix, s.cur.line = tool, prefix, s.line
		return
	}
	s.cur = &run{tool: tool, prefix: prefix, line: s.line, from: s.line, processes: 1}
	s.allRuns = append(s.allRuns, s.cur)
	s.lastWasLeak, s.programSince = false, false
}

func (s *textSource) run() *run {
	if s.cur == nil {
		s.cur = &run{prefix: s.core, from: s.line, processes: 1}
		s.allRuns = append(s.allRuns, s.cur)
	}
	return s.cur
}

// endsRun reports whether c, a top-level line, cannot belong to the run
// ru, whose summaries it follows, and so starts another run (one without
// a banner: runs pasted one after the other, "Before fix" and "After
// fix", with only their summaries; a CI log that kept the tool's lines
// of several runs and not their banners). The tool prints a run's LEAK
// SUMMARY after its every record (its leak check runs at the process's
// exit, once for all its processes and device resets), then its ERROR
// SUMMARY, then, with --print-limit, "N errors were not printed": after
// an ERROR SUMMARY only that line belongs to the run; after a LEAK
// SUMMARY only the ERROR SUMMARY does. Notices (the tool's status lines)
// and program output start nothing.
func endsRun(ru *run, c string) bool {
	if !ru.hasLeak && !ru.hasErrors {
		return false
	}
	switch {
	case strings.HasPrefix(c, "LEAK SUMMARY:"):
		return true
	case strings.HasPrefix(c, "ERROR SUMMARY:"):
		if notPrintedRe.MatchString(c) {
			return ru.hasNotPrinted // a second one
		}
		return ru.hasErrors
	case strings.HasPrefix(c, "RACECHECK SUMMARY:"), isOtherSummary(c),
		strings.HasPrefix(c, "Target application returned an error"),
		strings.HasPrefix(c, "Warning: Maximum number of "):
		return false
	}
	k := classify(c)
	return k != KindNotice && k != KindOther
}

// top handles a top-level line: a summary or the start of a record.
func (s *textSource) top(c string) error {
	s.closeRecord()
	ru := s.run()
	if endsRun(ru, c) {
		s.cur = &run{prefix: s.core, from: s.line, processes: 1}
		s.allRuns = append(s.allRuns, s.cur)
		s.lastWasLeak, s.programSince = false, false
		ru = s.cur
	}
	switch {
	case strings.HasPrefix(c, "LEAK SUMMARY:"):
		m := leakSummaryRe.FindStringSubmatch(c)
		if m == nil {
			return s.errf("malformed LEAK SUMMARY %q", c)
		}
		b, err := s.count(m[1])
		if err != nil {
			return err
		}
		n, err := s.count(m[2])
		if err != nil {
			return err
		}
		ru.leakBytes, ru.leakAllocs, ru.hasLeak = ru.leakBytes+b, ru.leakAllocs+n, true
		return nil
	case strings.HasPrefix(c, "ERROR SUMMARY:"):
		if m := notPrintedRe.FindStringSubmatch(c); m != nil {
			n, err := s.count(m[1])
			if err != nil {
				return err
			}
			ru.notPrinted, ru.hasNotPrinted = ru.notPrinted+n, true
			return nil
		}
		m := errSummaryRe.FindStringSubmatch(c)
		if m == nil {
			return s.errf("malformed ERROR SUMMARY %q", c)
		}
		n, err := s.count(m[1])
		if err != nil {
			return err
		}
		ru.errors, ru.hasErrors = ru.errors+n, true
		return nil
	case strings.HasPrefix(c, "RACECHECK SUMMARY:"):
		// racecheck ends its run with this line instead of an ERROR
		// SUMMARY: "N hazards displayed (E errors, W warnings)", N the
		// race records it printed (each may stand for many hazards,
		// "[4 hazards]"), so N is the run's count of records when it
		// has no ERROR SUMMARY.
		m := raceSummaryRe.FindStringSubmatch(c)
		if m == nil {
			return s.errf("malformed RACECHECK SUMMARY %q", c)
		}
		n, err := s.count(m[1])
		if err != nil {
			return err
		}
		ru.races, ru.hasRaces = ru.races+n, true
		return nil
	case strings.HasPrefix(c, "Warning: Maximum number of "):
		// The tool's own notice that it stopped recording (racecheck's
		// NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS): not a record, but
		// the counts after it are lower bounds.
		s.rd.meta.Warnings.Once("tool-limit", parse.LineNote(int(s.line), "the tool says: %s: the records after it are not all it found", strings.TrimSuffix(strings.TrimPrefix(c, "Warning: "), ".")))
		return nil
	case isOtherSummary(c):
		return nil
	case strings.HasPrefix(c, "Target application returned an error"):
		ru.targetError = true
		return nil
	}
	rec := s.newRecord()
	*rec = record{run: int32(len(s.allRuns) - 1), message: c, line: s.line, offset: -1, kind: KindOther, frames: rec.frames[:0], details: rec.details[:0]}
	s.rec = rec
	s.sawCont, s.sawLegacy, s.lastLine = false, false, 0
	rec.kind = classify(c)
	switch rec.kind {
	case KindLeak:
		m, ok := matchLeak(c)
		if !ok {
			return s.errf("malformed leak record %q", c)
		}
		size, err := s.count(m[1])
		if err != nil {
			return err
		}
		addr, err := s.hex(m[2])
		if err != nil {
			return err
		}
		rec.size, rec.hasSize, rec.address, rec.hasAddress = size, true, addr, true
		if strings.Contains(m[3], "device heap") {
			rec.memoryType = "device heap"
		}
		if _, name, ok := strings.Cut(m[3], " called "); ok {
			// --nvtx yes: the name the program gave the allocation
			// (nvtxMemRegionsName), "Leaked 1 bytes at 0x7f26c3000000
			// called My allocation".
			rec.name = strings.TrimSpace(name)
		}
		// A new process: program output between two leak reports (each
		// process prints its leaks in one go at exit), or an address
		// this process already leaked.
		if (s.lastWasLeak && s.programSince) || ru.leaked.Has(addr) {
			ru.processes++
			ru.leaked.Reset()
		}
		if ru.leaked.Len() < maxLeakedAddrs {
			ru.leaked.Add(addr)
		} else {
			s.rd.meta.Warnings.Once("leaked-addrs", parse.LineNote(int(s.line), "a process leaked more than %s allocations: a later process is told from it by a repeat of one of its first %s leaked addresses, or by program output between them, not by a repeat of the others",
				withCommas(maxLeakedAddrs), withCommas(maxLeakedAddrs)))
		}
	case KindAPI:
		if m, ok := matchAPI(c); ok {
			rec.err, rec.errMessage, rec.api = m[1], m[3], m[4]
			rec.result, rec.hasResult = atoi(m[2])
		} else if m := apiLegacyRe.FindStringSubmatch(c); m != nil {
			rec.api = m[2]
			rec.result, rec.hasResult = atoi(m[1])
		} else if m := apiCallRe.FindStringSubmatch(c); m != nil {
			rec.api = m[1]
		}
	case KindMemoryAccess, KindUninitialized:
		match := matchAccess
		if rec.kind == KindUninitialized {
			match = matchUninit
		}
		if n, ok := match(c); ok {
			size, err := s.count(n)
			if err != nil {
				return err
			}
			rec.size, rec.hasSize = size, true
		}
	}
	s.programSince = false
	return nil
}

// matchAPI splits an API error's first line as the regular expression
// ^Program hit (\w+) \(error (\d+)\) due to "(.*)" on CUDA API call to\s+(\w+)
// would (by hand: a regexp backtracking over the quoted message cost
// microseconds a record): the error, its number, its message and the API.
func matchAPI(c string) (m [5]string, ok bool) {
	t, ok := strings.CutPrefix(c, "Program hit ")
	n := wordLen(t)
	if !ok || n == 0 {
		return m, false
	}
	m[1] = t[:n]
	if t, ok = strings.CutPrefix(t[n:], " (error "); !ok {
		return m, false
	}
	n = 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 {
		return m, false
	}
	m[2] = t[:n]
	if t, ok = strings.CutPrefix(t[n:], ") due to \""); !ok {
		return m, false
	}
	// (.*) stops at a line feed and takes all it can: the last separator
	// before one that a word follows.
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	// Windows logs may pad the API's name with spaces ("API call to
	// cudaLaunchKernel."): \s+ before the name.
	const sep = "\" on CUDA API call to "
	for end := len(t); ; {
		i := strings.LastIndex(t[:end], sep)
		if i < 0 {
			return m, false
		}
		name := strings.TrimLeft(t[i+len(sep):], " \t")
		if w := wordLen(name); w > 0 {
			m[3], m[4] = t[:i], name[:w]
			return m, true
		}
		end = i + len(sep) - 1
	}
}

// matchAccess returns the size of a memory access error's first line, as
// the regular expression ^Invalid (?:__\w+__ )?(?:\w+ )?of size ([\d,]+)
// would capture it (by hand, trying its optional groups in its order).
func matchAccess(c string) (string, bool) {
	t, ok := strings.CutPrefix(c, "Invalid ")
	if !ok {
		return "", false
	}
	var tries [4]string
	k := 0
	if u, ok := cutSpaceName(t); ok {
		if v, ok := cutWord(u); ok {
			tries[k], k = v, k+1
		}
		tries[k], k = u, k+1
	}
	if v, ok := cutWord(t); ok {
		tries[k], k = v, k+1
	}
	tries[k], k = t, k+1
	for _, t := range tries[:k] {
		if n, ok := ofSize(t); ok {
			return n, true
		}
	}
	return "", false
}

// matchUninit returns the size of an uninitialized access's first line,
// as ^Uninitialized __\w+__ memory (?:\w+ )?of size ([\d,]+) would capture
// it.
func matchUninit(c string) (string, bool) {
	t, ok := strings.CutPrefix(c, "Uninitialized ")
	if !ok {
		return "", false
	}
	if t, ok = cutSpaceName(t); !ok {
		return "", false
	}
	if t, ok = strings.CutPrefix(t, "memory "); !ok {
		return "", false
	}
	if v, ok := cutWord(t); ok {
		if n, ok := ofSize(v); ok {
			return n, true
		}
	}
	return ofSize(t)
}

// wordLen is the length of the run of \w characters ([0-9A-Za-z_]) that
// starts s.
func wordLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_') {
			break
		}
		n++
	}
	return n
}

// cutSpaceName cuts a memory space ("__global__ ": __\w+__ and a space)
// from the start of s, or one whose underscores Markdown took (a paste
// rendered as bold: "global ", "shared ", "local ").
func cutSpaceName(s string) (string, bool) {
	n := wordLen(s)
	if n >= 5 && n < len(s) && s[n] == ' ' && strings.HasPrefix(s, "__") && s[n-2:n] == "__" {
		return s[n+1:], true
	}
	for _, w := range []string{"global ", "shared ", "local "} {
		if strings.HasPrefix(s, w) {
			return s[len(w):], true
		}
	}
	return s, false
}

// cutWord cuts a word and a space (\w+ ) from the start of s.
func cutWord(s string) (string, bool) {
	if n := wordLen(s); n > 0 && n < len(s) && s[n] == ' ' {
		return s[n+1:], true
	}
	return s, false
}

// ofSize returns N of "of size N..." (N of digits and commas) at the start
// of s.
func ofSize(s string) (string, bool) {
	t, ok := strings.CutPrefix(s, "of size ")
	n := 0
	for n < len(t) && (t[n] >= '0' && t[n] <= '9' || t[n] == ',') {
		n++
	}
	return t[:n], ok && n > 0
}

// isOtherSummary reports whether c is another summary line of the tool
// ("RACECHECK SUMMARY: ..."), as the regular expression
// ^[A-Z][A-Z ]* SUMMARY: would (by hand: it is tried on the first line of
// every record).
func isOtherSummary(c string) bool {
	if c == "" || c[0] < 'A' || c[0] > 'Z' {
		return false
	}
	j := 1
	for j < len(c) && (c[j] >= 'A' && c[j] <= 'Z' || c[j] == ' ') {
		j++
	}
	// ":" ends the run of capitals and spaces; " SUMMARY" must end it,
	// after the first capital.
	return j < len(c) && c[j] == ':' && j-len(" SUMMARY") >= 1 && c[j-len(" SUMMARY"):j] == " SUMMARY"
}

// matchLeak splits a leak record's first line as the regular expression
// ^Leaked ([\d,]+) bytes? at (0x[0-9a-fA-F]+)(.*)$ would (by hand: it is
// the first line of most records): the size, the address and the rest.
func matchLeak(c string) (m [4]string, ok bool) {
	t, ok := strings.CutPrefix(c, "Leaked ")
	if !ok {
		return m, false
	}
	n := 0
	for n < len(t) && (t[n] >= '0' && t[n] <= '9' || t[n] == ',') {
		n++
	}
	if n == 0 {
		return m, false
	}
	size := t[:n]
	if t, ok = strings.CutPrefix(t[n:], " byte"); !ok {
		return m, false
	}
	t = strings.TrimPrefix(t, "s")
	if t, ok = strings.CutPrefix(t, " at 0x"); !ok {
		return m, false
	}
	h := 0
	for h < len(t) && isHex(t[h:h+1]) {
		h++
	}
	if h == 0 || strings.Contains(t[h:], "\n") {
		return m, false
	}
	return [4]string{c, size, c[len(c)-len(t)-2 : len(c)-len(t)+h], t[h:]}, true
}

// matchSaved reads a "Saved host backtrace" line as the regular expression
// ^Saved host backtrace up to driver entry point(?: at (.+?))?\.?$ would:
// the save location ("at allocation time"), or "" when none is given.
func matchSaved(c string) (string, bool) {
	t, ok := strings.CutPrefix(c, "Saved host backtrace up to driver entry point")
	if !ok || strings.Contains(t, "\n") {
		return "", false
	}
	if t == "" || t == "." {
		return "", true
	}
	loc, ok := strings.CutPrefix(t, " at ")
	if !ok || loc == "" {
		return "", false
	}
	if len(loc) > 1 {
		loc = strings.TrimSuffix(loc, ".")
	}
	return loc, true
}

// newRecord returns the spare record, or a new one.
func (s *textSource) newRecord() *record {
	if r := s.spare; r != nil {
		s.spare = nil
		return r
	}
	return &record{}
}

// noticeRe matches the first line of the tool's own notices: about
// itself (cuda-memcheck 11's deprecation, which it prints under its
// banner in every run), its failures ("Internal error (7)", "No
// CUDA-MEMCHECK results found", "Error: No attachable process found",
// "--xml was enabled but no save location was specified"),
// and the end of the target process ("Error: process didn't terminate
// successfully", which ERROR SUMMARY does not count: "ERROR SUMMARY: 0
// errors" follows it). A notice holds no finding of the tool's about the
// program.
var noticeRe = lazyre.New(`^(This tool is deprecated\b|Please use the compute-sanitizer tool\b|Error: process didn't terminate successfully|The application may have hit an error when dereferencing Unified Memory|No (CUDA-MEMCHECK|COMPUTE-SANITIZER|compute-sanitizer) results found|Tracking kernels launched by child processes requires\b|Default timeout can be adjusted with --launch-timeout|Internal (Memcheck |Sanitizer |Racecheck |Initcheck |Synccheck )?[Ee]rror\b|Error: (No attachable process|Target application terminated before|Device not supported|Unable to|Failed to|Could not)\b|(Error: )?--xml was enabled but no save location was specified)`)

// classify returns the record kind of a record's first line.
func classify(c string) string {
	switch {
	case strings.HasPrefix(c, "Leaked "):
		return KindLeak
	case strings.HasPrefix(c, "Program hit "):
		return KindAPI
	case strings.HasPrefix(c, "Invalid "):
		return KindMemoryAccess
	case isNotice(c):
		return KindNotice
	case strings.HasPrefix(c, "Malloc/Free error"):
		return KindMallocFree
	case strings.Contains(c, "Race reported") || strings.Contains(c, "hazard"):
		return KindRace
	case strings.HasPrefix(c, "Uninitialized "):
		return KindUninitialized
	case strings.HasPrefix(c, "Host API memory access error"):
		// memcheck's and initcheck's record of a host API call (cudaMemcpy)
		// reading or writing bad memory; a detail line "Uninitialized
		// access at ..." makes it initcheck's uninitialized read.
		return KindMemoryAccess
	case strings.HasPrefix(c, "Unused memory"):
		return KindUnusedMemory
	case strings.HasPrefix(c, "Barrier error"):
		return KindSync
	case hwRe.MatchString(c):
		return KindHardwareException
	}
	return KindOther
}

// isNotice reports whether c is the first line of one of the tool's own
// notices (noticeRe), testing the words its alternatives start with before
// the regular expression.
func isNotice(c string) bool {
	for _, w := range []string{"This ", "Please ", "Error: ", "The application ", "No ", "Tracking ", "Default ", "Internal ", "--xml "} {
		if strings.HasPrefix(c, w) {
			return noticeRe.MatchString(c)
		}
	}
	return false
}

// closeRecord finishes the open record, if any, and queues it.
func (s *textSource) closeRecord() {
	rec := s.rec
	if rec == nil {
		return
	}
	s.rec = nil
	for i := range rec.frames {
		f := &rec.frames[i]
		if !f.tentative {
			continue
		}
		f.tentative = false
		if !s.sawCont && (s.sawLegacy || s.cur.tool == ToolCudaMemcheck || looksLikeModule(f.function)) {
			f.module, f.function = f.function, ""
		}
	}
	ru := s.run()
	rec.process = ru.processes - 1
	if rec.kind != KindNotice {
		ru.records++
	}
	s.lastWasLeak = rec.kind == KindLeak
	s.out = rec
}

// looksLikeModule reports whether s names a shared object or executable
// by path rather than a function.
func looksLikeModule(s string) bool {
	if strings.ContainsAny(s, "/\\") && !strings.Contains(s, "(") {
		return true
	}
	for _, ext := range []string{".so", ".dll", ".exe", ".dylib"} {
		if strings.HasSuffix(s, ext) || strings.Contains(s, ext+".") {
			return true
		}
	}
	return false
}

// cutBeforeFunction reports whether t, a host frame's text that the input
// ends in, stops inside the source path of cuda-memcheck's
// "FILE:LINE:FUNCTION [0x...]" layout: a path ("/", "C:\\") without the
// ":LINE:" that would lead to the function.
func cutBeforeFunction(t string) bool {
	path := strings.HasPrefix(t, "/") || len(t) >= 3 && t[1] == ':' && (t[2] == '\\' || t[2] == '/')
	return path && !strings.HasSuffix(t, "]") && !legacyAtRe.MatchString(t)
}

// hasAddressedHostFrame reports whether frames hold a host frame with its
// address ("[0x2b035]"): the record's layout ends each host frame so.
func hasAddressedHostFrame(frames []frame) bool {
	for i := range frames {
		if frames[i].kind == FrameHost && frames[i].hasPC {
			return true
		}
	}
	return false
}

// detail handles a line inside the open record, and notes whether it
// added a frame or a detail line (for dropCutLast).
func (s *textSource) detail(c string) error {
	frames, details := len(s.rec.frames), len(s.rec.details)
	err := s.detailLine(c)
	if s.rec != nil && (len(s.rec.frames) > frames || len(s.rec.details) > details) {
		s.lastLine, s.lastFrame = s.line, len(s.rec.frames) > frames
	}
	return err
}

// dropCutLast handles the last line of the input when it added the open
// record's last frame or detail line: a record still open at the end
// (no "=========" line, summary or other record after it) may have been
// cut inside that line by whoever copied the log, whose line ending a
// paste or the search corpus adds back. The line is left out, with a
// warning, when its text shows the cut: a host frame without the
// address every other host frame of the record ends in ("Host
// Frame:libcuda" after "... [0x9afad]"), a frame whose function is a
// path ("Device Frame:/home/aznb/.../build_cuda_debug/_d") or leaves a
// bracket open ("...:119:Load<cub::CUB_200"), a detail line that is the
// start of a detail's words ("H" of "Host Frame:"). A cut frame's text is
// no name: taken whole it named the site or the kernel.
func (s *textSource) dropCutLast() {
	rec := s.rec
	if rec == nil || s.lastLine == 0 || s.lastLine != s.line {
		return
	}
	if !s.lastFrame {
		c := rec.details[len(rec.details)-1]
		for _, w := range detailStarts {
			if len(c) < len(w) && strings.HasPrefix(w, c) {
				rec.details, rec.cut = rec.details[:len(rec.details)-1], true
				s.rd.meta.Warnings.Once("cut-last", parse.LineNote(int(s.line), "the log ends inside a line of its last record (%q, the start of %q): cut, the line is left out", c, strings.TrimSpace(w)))
				return
			}
		}
		return
	}
	n := len(rec.frames) - 1
	f := rec.frames[n]
	name := f.function
	if name == "" {
		name = f.module
	}
	var why string
	switch {
	case f.kind == FrameHost && !f.hasPC && f.file == "" && hasAddressedHostFrame(rec.frames[:n]):
		why = "without the address every other host frame of its record ends in"
		if i := strings.Index(f.function, " in "); i > 0 {
			// "llama_backend_init in /home/daniel/code/l": the function
			// is whole, its source path cut.
			rec.frames[n].function, rec.cut = f.function[:i], true
			s.rd.meta.Warnings.Once("cut-last", parse.LineNote(int(s.line), "the log ends inside a frame of its last record (%q, %s): cut, its source location is left out, and that record's backtrace is not whole", name, why))
			return
		}
		if unbalanced(f.function) {
			// A C++ name cut inside its template arguments: kept as
			// far as it goes, an outer frame's (the site is further in).
			rec.cut = true
			s.rd.meta.Warnings.Once("cut-last", parse.LineNote(int(s.line), "the log ends inside a frame of its last record (%q, %s): cut, that record's backtrace is not whole", name, why))
			return
		}
	case f.kind == FrameDevice && unbalanced(name):
		if p := strings.IndexAny(name, "<("); p > 0 {
			// Cut inside its template arguments or parameters
			// ("...:119:Load<cub::CUB_200"): the name before them is
			// whole, and stands; the frames after it are not shown.
			rec.cut = true
			s.rd.meta.Warnings.Once("cut-last", parse.LineNote(int(s.line), "the log ends inside a frame of its last record (%q, a bracket left open): cut, that record's backtrace is not whole", name))
			return
		}
		why = "a bracket left open"
	case f.kind == FrameDevice && looksLikeModule(f.function) && f.file == "":
		why = "its function a path"
	default:
		return
	}
	rec.frames, rec.cut = rec.frames[:n], true
	if f.kind == FrameDevice && rec.kernel == f.function && n == 0 {
		rec.kernel = ""
	}
	s.rd.meta.Warnings.Once("cut-last", parse.LineNote(int(s.line), "the log ends inside a frame of its last record (%q, %s): cut, the frame is left out, and that record's backtrace is not whole", name, why))
}

// unbalanced reports whether name opens more brackets ("(", "<", "[")
// than it closes: a C++ name cut short ("Load<cub::CUB_200"). Operators
// named by their bracket ("operator<", "operator()") are not counted.
func unbalanced(name string) bool {
	name = strings.NewReplacer("operator<<=", "", "operator<<", "", "operator<=", "", "operator<", "", "operator>", "", "operator()", "", "operator[]", "", "->", "").Replace(name)
	return strings.Count(name, "(") > strings.Count(name, ")") || strings.Count(name, "<") > strings.Count(name, ">") ||
		strings.Count(name, "[") > strings.Count(name, "]")
}

// detailLine handles a line inside the open record.
func (s *textSource) detailLine(c string) error {
	rec := s.rec
	switch {
	case strings.HasPrefix(c, "Host Frame:"):
		t := strings.TrimSpace(c[len("Host Frame:"):])
		if s.cut && cutBeforeFunction(t) {
			// The input ends inside this frame's source path, before its
			// function ("Host Frame:/scr" of "FILE:LINE:FUNCTION"): no
			// function to show. A function cut short is kept, as far as
			// it goes.
			return nil
		}
		if cutBeforeFunction(t) && hasAddressedHostFrame(rec.frames) {
			// A path with neither its function nor the address that
			// every host frame of this record's layout ends in: a frame
			// cut by a paste ("Host Frame:/home/alexander/git/Quansight/py"
			// after frames ending in "[0x2b035]", pytorch/pytorch#52253),
			// whose line ending came with the rest of the paste. The path
			// fragment is no function nor module: the frame is left out,
			// and the record's whole frames stand.
			s.rd.meta.Warnings.Once("cut-frame", parse.LineNote(int(s.line), "a host frame ends in the middle of its path (%q), without the address every other host frame of its record has: cut by the paste, it is left out", t))
			return nil
		}
		p, ok := s.hostFrames[t]
		if !ok {
			legacy := s.sawLegacy
			s.sawLegacy = false
			f, err := s.hostFrame(t)
			if err != nil {
				return err
			}
			p = parsedFrame{f, s.sawLegacy}
			s.sawLegacy = legacy
			if len(t) <= maxInternedLine { // a line of megabytes is not kept
				if s.hostFrames == nil || len(s.hostFrames) >= maxInterned {
					s.hostFrames = make(map[string]parsedFrame, 256)
				}
				s.hostFrames[t] = p
			}
		}
		s.sawLegacy = s.sawLegacy || p.legacy
		f := p.f
		if s.cut && !f.hasPC && f.line > 0 && len(rec.frames) > 0 && rec.frames[len(rec.frames)-1].kind == FrameHost && rec.frames[len(rec.frames)-1].hasPC {
			// The input ends inside this frame, after its line number
			// but before the address the record's other host frames
			// carry: the number may be cut ("main in leaky.cu:3" of
			// ":31"), and would name a line the program does not have.
			// The function and file stand; the line is left out.
			f.line = 0
			s.rd.meta.Warnings.Once("cut", parse.LineNote(int(s.line), "the log ends in the middle of a line: its host frame's line number may be cut, and is left out"))
		}
		rec.frames = append(rec.frames, f)
		return nil
	case strings.HasPrefix(c, "Device Frame:"):
		f, err := s.deviceLocation(strings.TrimSpace(c[len("Device Frame:"):]))
		if err != nil {
			return err
		}
		rec.frames = append(rec.frames, f)
		return nil
	case strings.HasPrefix(c, "in ") && len(rec.frames) > 0:
		last := &rec.frames[len(rec.frames)-1]
		if last.kind == FrameHost && (last.tentative || last.module == "") {
			last.module = strings.TrimSpace(c[3:])
			last.tentative = false
			s.sawCont = true
			return nil
		}
	case strings.HasPrefix(c, "Saved host backtrace"):
		if loc, ok := matchSaved(c); ok {
			rec.saveLocation = loc
			return nil
		}
	case strings.HasPrefix(c, "at ") && rec.kernel == "" && rec.kind != KindLeak:
		f, err := s.deviceLocation(strings.TrimSpace(c[3:]))
		if err != nil {
			return err
		}
		rec.kernel = f.function
		rec.frames = append(rec.frames, f)
		return nil
	case strings.HasPrefix(c, "by thread "):
		if m := threadRe.FindStringSubmatch(c); m != nil {
			rec.thread, rec.block = m[1], m[2]
			return nil
		}
	}
	if rec.kind == KindMemoryAccess && strings.HasPrefix(c, "Uninitialized access") {
		rec.kind = KindUninitialized
	}
	if m := addrLineRe.FindStringSubmatch(c); m != nil && !rec.hasAddress {
		if a, err := strconv.ParseUint(m[1], 0, 64); err == nil {
			rec.address, rec.hasAddress = a, true
		}
	}
	rec.details = append(rec.details, c)
	return nil
}

// hostFrame parses the text after "Host Frame:" in any of its layouts.
// (Hand-written rather than regular expressions: frames are most of a
// log's lines.)
func (s *textSource) hostFrame(t string) (frame, error) {
	f := frame{kind: FrameHost}
	if i := strings.LastIndex(t, "[0x"); i >= 0 {
		// "[0x400ef8 ]": a space before the bracket (Alibaba HGGC's
		// memcheck, which writes compute-sanitizer's layout) is no part
		// of the address.
		if j := strings.IndexByte(t[i:], ']'); j > 3 && isHex(strings.TrimRight(t[i+3:i+j], " ")) {
			rest := t[i+j+1:]
			if rest == "" || strings.HasPrefix(rest, " in ") {
				pc, err := s.hex(strings.TrimRight(t[i+1:i+j], " "))
				if err != nil {
					return f, err
				}
				f.pc, f.hasPC = pc, true
				head := strings.TrimSpace(t[:i])
				if rest == "" {
					// Legacy: "MODULE (FUNC + 0xOFF)", or "(FUNC + 0xOFF)"
					// without the module (HGGC's memcheck).
					open, plus := strings.Index(head, " ("), strings.LastIndex(head, " + 0x")
					if strings.HasPrefix(head, "(") {
						open = -1
					}
					if strings.HasSuffix(head, ")") && (open > 0 || open == -1 && strings.HasPrefix(head, "(")) && plus > open+1 && isHex(head[plus+5:len(head)-1]) {
						off, err := s.hex(head[plus+3 : len(head)-1])
						if err != nil {
							return f, err
						}
						f.module, f.function, f.offset, f.hasOffset = head[:max(open, 0)], head[open+2:plus], off, true
						s.sawLegacy = true
						return f, nil
					}
				}
				if err := s.funcFileLine(&f, head); err != nil {
					return f, err
				}
				f.module = strings.TrimSpace(strings.TrimPrefix(rest, " in "))
				if f.module == "" && f.file == "" {
					f.tentative = true
				}
				return f, nil
			}
		}
	}
	if err := s.funcFileLine(&f, t); err != nil {
		return f, err
	}
	if f.file != "" && (strings.HasSuffix(f.file, ".py") || strings.HasPrefix(f.file, "<")) {
		f.kind = FramePython
	}
	return f, nil
}

func isHex(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isDigits(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// funcFileLine splits "func in file:line" (either part may be missing).
func (s *textSource) funcFileLine(f *frame, t string) error {
	t = strings.TrimSpace(t)
	// The last " in " of " "+t, without building it.
	fn, loc, found := "", "", false
	if i := strings.LastIndex(t, " in "); i >= 0 {
		fn, loc, found = t[:i], t[i+4:], true
	} else if strings.HasPrefix(t, "in ") {
		loc, found = t[3:], true
	}
	if found {
		if c := strings.LastIndexByte(loc, ':'); c > 0 && isDigits(loc[c+1:]) {
			line, err := s.count(loc[c+1:])
			if err != nil {
				return err
			}
			f.function = strings.TrimSpace(fn)
			f.file, f.line = loc[:c], line
			return nil
		}
	}
	f.function = t
	return nil
}

// deviceLocation parses the text after "at " or "Device Frame:":
//
//	fill(float *, int, float)+0xc0 in leaky.cu:9
//	col_kernel(const unsigned int *, unsigned int *)+0x490
//	0x3b0 in void kernel<int>(int*)                 (2022)
//	0x00000050 in /path/test.cu:5:kernel(int*)      (cuda-memcheck)
func (s *textSource) deviceLocation(t string) (frame, error) {
	f := frame{kind: FrameDevice}
	if strings.HasPrefix(t, "0x") {
		if i := strings.Index(t, " in "); i > 0 {
			off, err := s.hex(t[:i])
			if err != nil {
				return f, err
			}
			f.offset, f.hasOffset = off, true
			rest := t[i+4:]
			if m := legacyAtRe.FindStringSubmatch(rest); m != nil && !strings.Contains(m[1], "(") {
				line, err := s.count(m[2])
				if err != nil {
					return f, err
				}
				f.file, f.line, f.function = m[1], line, m[3]
				return f, nil
			}
			f.function = rest
			return f, nil
		}
	}
	// cuda-memcheck's device frames end in the function and the offset
	// again: "file.jl:12:kernel (kernel : 0x46c0)".
	if m := legacyDevOffsetRe.FindStringSubmatch(t); m != nil && strings.HasSuffix(m[1], m[2]) {
		off, err := s.hex(m[3])
		if err != nil {
			return f, err
		}
		t, f.offset, f.hasOffset = m[1], off, true
	}
	if err := s.funcFileLine(&f, t); err != nil {
		return f, err
	}
	if m := funcOffsetRe.FindStringSubmatch(f.function); m != nil {
		off, err := s.hex(m[2])
		if err != nil {
			return f, err
		}
		f.function, f.offset, f.hasOffset = m[1], off, true
	}
	return f, nil
}

// count parses a decimal count with optional thousands separators.
func (s *textSource) count(t string) (int64, error) {
	n, err := strconv.ParseInt(strings.ReplaceAll(t, ",", ""), 10, 64)
	if err != nil || n < 0 {
		return 0, s.errf("bad number %q", t)
	}
	return n, nil
}

func (s *textSource) hex(t string) (uint64, error) {
	n, err := strconv.ParseUint(t, 0, 64)
	if err != nil {
		return 0, s.errf("bad address %q", t)
	}
	return n, nil
}

// isPunct: prefixes are made of punctuation ("=========", "###"), which
// tells them from words of the program's output. Control characters are
// not punctuation.
func isPunct(r rune) bool {
	return r > ' ' && r < 0x7f && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

func atoi(t string) (int64, bool) {
	n, err := strconv.ParseInt(t, 10, 64)
	return n, err == nil
}

// crReader turns a lone carriage return into a line feed, so that a log
// whose lines end in CR only (an old Mac tool, a terminal capture of a
// progress bar) splits into its lines; CRLF is left for readLine to trim.
type crReader struct{ br *bufio.Reader }

func (c crReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	buf := p[:n]
	for i := bytes.IndexByte(buf, '\r'); i >= 0; {
		var next byte
		if i+1 < len(buf) {
			next = buf[i+1]
		} else if b, perr := c.br.Peek(1); perr == nil {
			next = b[0]
		}
		if next != '\n' {
			buf[i] = '\n'
		}
		j := bytes.IndexByte(buf[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return n, err
}
