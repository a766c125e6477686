package report

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// SuppressionExtraHelp documents the keys every source's findings take in
// a suppressions file, besides compute-sanitizer's record keys.
const SuppressionExtraHelp = `Rules apply to the findings of every input too (snapshots, OOM logs, NVML
logs): kind then names any finding kind (leak, live, retained, oom,
fragmentation, trend, ...), function= and file= match any frame of the
finding's stack, message= its message, and three more keys apply:
min-bytes=SIZE (the finding holds at least this), expires=YYYY-MM-DD (the
rule stops applying after that day, UTC, and a warning says so) and
reason=TEXT (shown with the counts). What rules leave out is counted in the
report, never dropped silently. Example:
  kind=retained file=model\.py$ min-bytes=1GiB expires=2027-03-31 reason="weights, held on purpose"`

// SuppressionRule is one rule of a suppressions file, as it applies to
// findings. Zero fields match anything; a rule has at least one matcher.
type SuppressionRule struct {
	// Name labels the rule in counts: name=, else FILE:LINE.
	Name string
	Kind string
	// Allocator matches a compute-sanitizer finding's allocator class.
	Allocator string
	// Function and File match any frame of the stack (or the site);
	// Message the finding's message. Module (a frame's shared object)
	// matches compute-sanitizer records only: findings do not keep it.
	Function, File, Message, Module *regexp.Regexp
	MinBytes                        int64
	// Expires: the last day the rule applies (UTC); nil for ever.
	Expires *time.Time
	Reason  string
	// Records is the rule as compute-sanitizer records take it (the keys
	// sanitizer.ParseSuppressions reads), "" when it cannot apply to them
	// (min-bytes, or a kind records do not have).
	Records string
}

// recordKinds are the kinds compute-sanitizer records take (analyze).
var recordKinds = map[string]bool{
	"leak": true, "retained": true, "api": true, "memory-access": true, "race": true,
	"malloc-free": true, "uninitialized": true, "unused-memory": true, "sync": true,
	"hardware-exception": true, "other": true,
}

// maxSuppressionRules bounds a suppressions file.
const maxSuppressionRules = 10000

// ParseSuppressionRules reads a suppressions file: the compute-sanitizer
// keys (sanitizer.SuppressionsHelp) and min-bytes, expires and reason
// (SuppressionExtraHelp). name names the file in errors, which give the
// line.
func ParseSuppressionRules(name string, data []byte) ([]SuppressionRule, error) {
	var out []SuppressionRule
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(out) == maxSuppressionRules {
			return nil, fmt.Errorf("%s:%d: more than %d rules", name, i+1, maxSuppressionRules)
		}
		at := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", name, i+1, fmt.Sprintf(format, a...))
		}
		fields, err := splitRule(line)
		if err != nil {
			return nil, at("%v", err)
		}
		r := SuppressionRule{Name: fmt.Sprintf("%s:%d", name, i+1)}
		var records []string
		seen := map[string]bool{}
		matchers := 0
		for _, f := range fields {
			k, v, _ := strings.Cut(f, "=")
			if seen[k] {
				return nil, at("%q given twice in one rule (a rule's fields must all match; write two rules for either)", k)
			}
			seen[k] = true
			switch k {
			case "min-bytes":
				n, err := humanize.ParseBytes(v)
				if err != nil || strings.HasPrefix(v, "-") || n > 1<<62 {
					return nil, at("bad min-bytes %q: want a size such as 64MiB", v)
				}
				r.MinBytes = int64(n)
				matchers++
				continue
			case "expires":
				d, err := time.Parse("2006-01-02", v)
				if err != nil {
					return nil, at("bad expires %q: want a date such as 2027-03-31", v)
				}
				r.Expires = &d
				continue
			case "reason":
				r.Reason = v
				continue
			case "name":
				r.Name = v
			case "kind":
				if !KnownKind(Kind(v)) && !recordKinds[v] {
					return nil, at("unknown kind %q (a finding kind: %s; or a compute-sanitizer error kind)", v, kindList())
				}
				r.Kind = v
				matchers++
			case "allocator":
				switch v {
				case "device", "async", "pinned", "managed", "device-heap":
				default:
					return nil, at("unknown allocator %q (device, async, pinned, managed, device-heap)", v)
				}
				r.Allocator = v
				matchers++
			case "function", "file", "message", "module":
				re, err := regexp.Compile(v)
				if err != nil {
					return nil, at("bad %s pattern: %v", k, err)
				}
				switch k {
				case "function":
					r.Function = re
				case "file":
					r.File = re
				case "message":
					r.Message = re
				default:
					r.Module = re
				}
				matchers++
			default:
				return nil, at("unknown key %q (kind, function, module, file, message, allocator, min-bytes, expires, reason, name)", k)
			}
			records = append(records, quoteField(k, v))
		}
		if matchers == 0 {
			return nil, at("a rule needs at least one of kind, function, module, file, message, allocator, min-bytes")
		}
		if r.MinBytes == 0 && (r.Kind == "" || recordKinds[r.Kind]) {
			if !seen["name"] {
				records = append(records, quoteField("name", r.Name))
			}
			r.Records = strings.Join(records, " ")
		}
		out = append(out, r)
	}
	return out, nil
}

// splitRule splits a rule into key=value fields; a value may be quoted
// ("..." with \" for a quote).
func splitRule(line string) ([]string, error) {
	var out []string
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		eq := strings.IndexByte(line[i:], '=')
		sp := strings.IndexAny(line[i:], " \t")
		if eq < 0 || (sp >= 0 && sp < eq) {
			end := len(line)
			if sp >= 0 {
				end = i + sp
			}
			return nil, fmt.Errorf("%q is not key=value", line[i:end])
		}
		key := line[i : i+eq]
		i += eq + 1
		var val strings.Builder
		if i < len(line) && line[i] == '"' {
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '"' {
					val.WriteByte('"')
					i += 2
					continue
				}
				if c == '"' {
					closed = true
					i++
					break
				}
				val.WriteByte(c)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quote in %s", key)
			}
		} else {
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				val.WriteByte(line[i])
				i++
			}
		}
		if val.Len() == 0 {
			return nil, fmt.Errorf("%q has no value", key)
		}
		out = append(out, key+"="+val.String())
	}
	return out, nil
}

func quoteField(k, v string) string {
	if strings.ContainsAny(v, " \t\"") {
		return k + `="` + strings.ReplaceAll(v, `"`, `\"`) + `"`
	}
	return k + "=" + v
}

// Expired reports whether the rule no longer applies at now.
func (r *SuppressionRule) Expired(now time.Time) bool {
	return r.Expires != nil && now.UTC().After(r.Expires.Add(24*time.Hour))
}

// Matches reports whether the rule leaves f out.
func (r *SuppressionRule) Matches(f *Finding) bool {
	if r.Module != nil {
		return false // findings do not keep modules
	}
	if r.Kind != "" && r.Kind != string(f.Kind) || r.Allocator != "" && r.Allocator != f.Allocator ||
		f.Bytes < r.MinBytes || r.Message != nil && !r.Message.MatchString(f.Message) {
		return false
	}
	frames := f.Stack
	if len(frames) == 0 {
		frames = []Frame{f.Site}
	}
	anyFrame := func(re *regexp.Regexp, get func(Frame) string) bool {
		if re == nil {
			return true
		}
		for _, fr := range frames {
			if re.MatchString(get(fr)) {
				return true
			}
		}
		return false
	}
	return anyFrame(r.Function, func(fr Frame) string { return fr.Function }) &&
		anyFrame(r.File, func(fr Frame) string { return fr.File })
}

// SuppressedFindings counts what one rule left out of the findings.
type SuppressedFindings struct {
	Rule     string `json:"rule"`
	Reason   string `json:"reason,omitempty"`
	Findings int    `json:"findings"`
	Bytes    int64  `json:"bytes"`
	// Expires is the rule's last day (YYYY-MM-DD); Expired: it has passed
	// and the rule left nothing out.
	Expires string `json:"expires,omitempty"`
	Expired bool   `json:"expired,omitempty"`
}

// Suppress leaves out of fs the findings a rule matches (the first rule
// that matches counts it) and returns the others and the counts, one per
// rule that matched or expired.
func Suppress(fs []Finding, rules []SuppressionRule, now time.Time) ([]Finding, []SuppressedFindings) {
	if len(rules) == 0 {
		return fs, nil
	}
	counts := make([]SuppressedFindings, len(rules))
	for i := range rules {
		counts[i] = SuppressedFindings{Rule: rules[i].Name, Reason: rules[i].Reason, Expired: rules[i].Expired(now)}
		if rules[i].Expires != nil {
			counts[i].Expires = rules[i].Expires.Format("2006-01-02")
		}
	}
	kept := fs[:0:0]
next:
	for _, f := range fs {
		for i := range rules {
			if !counts[i].Expired && rules[i].Matches(&f) {
				counts[i].Findings++
				counts[i].Bytes = satAdd(counts[i].Bytes, f.Bytes)
				continue next
			}
		}
		kept = append(kept, f)
	}
	var out []SuppressedFindings
	for _, c := range counts {
		if c.Findings > 0 || c.Expired {
			out = append(out, c)
		}
	}
	return kept, out
}
