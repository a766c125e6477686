package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
)

// FormatSARIF is a SARIF 2.1.0 log for code scanning: the findings and
// tool errors of an analysis.
const FormatSARIF Format = "sarif"

func init() {
	register(FormatSARIF, Writer{
		Order:    20,
		Help:     "SARIF 2.1.0 for code scanning; see --source-root",
		Analysis: writeSARIF,
	})
}

// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), as
// GitHub code scanning ingests it: one run, one rule per finding kind (and
// per compute-sanitizer error kind), each result at the finding's
// innermost user frame. Only the members gpuleak fills are declared.

const sarifSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// sarifFingerprint names gpuleak's member of partialFingerprints: a hash
// of SiteKey, which holds no line numbers, paths or addresses, so that one
// site keeps its fingerprint across runs, machines and edits above it. A
// finding with no site (an OOM message without a traceback, a
// fragmentation finding) adds what tells it apart instead (siteless).
const sarifFingerprint = "gpuleakSite/v1"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool sarifTool `json:"tool"`
	// Invocations holds the one run of gpuleak: whether it read every
	// input, and a notification for each it could not read.
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	// OriginalURIBaseIDs documents SRCROOT when --source-root is given.
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Properties         map[string]any                   `json:"properties,omitempty"`
}

// sarifInvocation is SARIF's invocation object (3.20): executionSuccessful
// is false when an input could not be read, so that a consumer does not
// take a partial run's results for a clean one; toolExecutionNotifications
// (3.20.21) then names each such input and why.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

// sarifNotification is SARIF's notification object (3.58).
type sarifNotification struct {
	Descriptor *sarifDescriptorRef `json:"descriptor,omitempty"`
	Level      string              `json:"level"`
	Message    sarifText           `json:"message"`
	Locations  []sarifLocation     `json:"locations,omitempty"`
}

// sarifDescriptorRef is SARIF's reportingDescriptorReference (3.52).
type sarifDescriptorRef struct {
	ID string `json:"id"`
}

// sarifNotReadID identifies the notification of an input not read.
const sarifNotReadID = "gpuleak/input-not-read"

// sarifReadInPartID identifies the notification of an input read in part
// (lines that could not be read skipped): its results come from the rest.
const sarifReadInPartID = "gpuleak/input-read-in-part"

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	DefaultConfiguration sarifRuleLevel `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifRuleLevel struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

type sarifLocation struct {
	ID               *int                   `json:"id,omitempty"`
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
	Message          *sarifText             `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int64 `json:"startLine"`
	StartColumn int   `json:"startColumn"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

// sarifRuleInfo describes one rule: its short and full descriptions, help
// and level.
type sarifRuleInfo struct {
	name, short, full, help, level string
}

// sarifRules describes gpuleak's finding kinds. A kind not listed (one
// added later) gets a generic rule.
var sarifRules = map[string]sarifRuleInfo{
	"leak": {"GPUMemoryLeak", "GPU memory leak at a call site",
		"Memory allocated at this call site was still live at the end of the run and kept growing through it (PyTorch snapshot), or was never freed (compute-sanitizer leak check).",
		"Find what still references the allocations: a list, dict, cache or attribute that is never cleared, or a tensor kept with its autograd graph (store loss.item() or .detach()). For CUDA code, free each allocation (cudaFree, cudaFreeAsync, cudaFreeHost) once it is no longer needed.",
		"error"},
	"oom": {"CUDAOutOfMemory", "CUDA out-of-memory error",
		"The run failed to allocate GPU memory; the message names the causes gpuleak found (accumulation, fragmentation, other processes, the per-process limit).",
		"Run 'gpuleak oom' on the same inputs for the full postmortem: what held memory at the error and why the request could not be served.",
		"error"},
	"fragmentation": {"GPUMemoryFragmentation", "GPU memory fragmented in PyTorch's caching allocator",
		"Much memory was reserved by PyTorch's caching allocator but split into free blocks around live ones, too small for large requests.",
		"Try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, allocate large long-lived tensors first, or free blocks in the order they were allocated.",
		"warning"},
	"trend": {"GPUMemoryTrend", "GPU memory trend from NVML samples",
		"How one GPU's or one process's used memory moved through an NVML sample log (growing, sawtooth, step or flat).",
		"A growing series is the sign of a leak in a running job: take a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot) to see which call site grows.",
		"note"},
	"live": {"GPUMemoryLive", "GPU memory live at the end of the run, growth unknown",
		"Memory held at the end of the run whose allocation the trace does not cover, so the input cannot tell whether it grew.",
		"Record the allocation history from the start of the run (torch.cuda.memory._record_memory_history) to tell a leak from memory held on purpose.",
		"note"},
	"retained": {"GPUMemoryRetained", "GPU memory allocated once and held",
		"Memory allocated once and held without growing: weights, optimizer state, workspaces, or a framework's caching pool. Not a leak unless it should have been freed.",
		"Free it (del the tensor, torch.cuda.empty_cache()) only if the run no longer needs it.",
		"note"},
}

// sarifRuleID is the stable rule id of a finding kind or sanitizer error kind.
func sarifRuleID(kind string) string { return "gpuleak/" + kind }

// writeSARIF renders r as a SARIF 2.1.0 log.
func writeSARIF(w io.Writer, r *Report, opt Options) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "gpuleak", Version: r.Tool.Version, Rules: []sarifRule{}}},
		Results: []sarifResult{}}
	root := normRoot(opt.SourceRoot)
	if root != "" {
		u := url.URL{Scheme: "file", Path: root}
		run.OriginalURIBaseIDs = map[string]sarifArtifactLocation{"SRCROOT": {URI: u.String()}}
	}
	ruleIndex := map[string]int{}
	// Rules in a stable order: every kind that has results, sorted by id.
	var ids []string
	want := map[string]sarifRule{}
	for _, f := range r.Findings {
		id := sarifRuleID(string(f.Kind))
		if _, ok := want[id]; !ok {
			want[id] = findingRule(string(f.Kind))
			ids = append(ids, id)
		}
	}
	for _, e := range r.Errors {
		id := sarifRuleID("sanitizer-" + e.Kind)
		if _, ok := want[id]; !ok {
			want[id] = sanitizerRule(e.Kind)
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for i, id := range ids {
		ruleIndex[id] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, want[id])
	}

	keys := SiteKeys(r.Findings)
	for i := range r.Findings {
		f := &r.Findings[i]
		id := sarifRuleID(string(f.Kind))
		res := sarifResult{
			RuleID: id, RuleIndex: ruleIndex[id], Level: want[id].DefaultConfiguration.Level,
			Message:             sarifText{Text: clean(f.Message)},
			PartialFingerprints: map[string]string{sarifFingerprint: fingerprint(keys[i] + siteless(f, root))},
			Properties:          map[string]any{"bytes": f.Bytes, "count": f.Count, "input": f.Path, "source": f.Source},
		}
		if f.Device != nil {
			res.Properties["device"] = *f.Device
		}
		if f.DeviceType != "" {
			res.Properties["device_type"] = f.DeviceType
		}
		if f.Baseline != nil {
			res.Properties["baseline"] = f.Baseline.Status
		}
		if f.Kind == KindTrend && f.Classification == "growing" {
			res.Level = "warning"
		}
		res.Locations, res.RelatedLocations = resultLocations(f.Site, f.Stack, root, f.Path)
		run.Results = append(run.Results, res)
	}
	for i := range r.Errors {
		e := &r.Errors[i]
		id := sarifRuleID("sanitizer-" + e.Kind)
		res := sarifResult{
			RuleID: id, RuleIndex: ruleIndex[id], Level: "error",
			Message:             sarifText{Text: clean(e.Message)},
			PartialFingerprints: map[string]string{sarifFingerprint: fingerprint(toolErrorKey(e))},
			Properties:          map[string]any{"count": e.Count, "input": e.Path, "source": e.Source},
		}
		res.Locations, res.RelatedLocations = resultLocations(e.Site, e.Stack, root, e.Path)
		run.Results = append(run.Results, res)
	}
	run.Invocations = []sarifInvocation{invocation(r)}
	if r.FindingsTotal > len(r.Findings) {
		run.Properties = map[string]any{"findingsNotShown": r.FindingsTotal - len(r.Findings)}
	}
	log := sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(&log)
}

// invocation says whether every input was read: an error notification
// per input that was not (its message names the file and the byte offset
// or line), at the input as given (a relative path stays relative), and a
// warning notification per input read in part.
func invocation(r *Report) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: true}
	for _, in := range r.Inputs {
		if in.Error == "" {
			continue
		}
		inv.ExecutionSuccessful = false
		n := sarifNotification{Descriptor: &sarifDescriptorRef{ID: sarifNotReadID}, Level: "error",
			Message: sarifText{Text: "NOT READ: " + clean(in.Error)}}
		if in.Path != "-" {
			n.Locations = []sarifLocation{{PhysicalLocation: &sarifPhysicalLocation{ArtifactLocation: artifactLocation(in.Path, "")}}}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	for _, in := range r.Inputs {
		note := ReadInPart(in)
		if in.Error != "" || note == "" {
			continue
		}
		// Read, but not whole: a warning, so that the results are not
		// taken for those of the whole input.
		n := sarifNotification{Descriptor: &sarifDescriptorRef{ID: sarifReadInPartID}, Level: "warning",
			Message: sarifText{Text: "READ IN PART: " + in.Path + ": " + note + "; what is reported of it comes from the rest"}}
		if in.Path != "-" {
			n.Locations = []sarifLocation{{PhysicalLocation: &sarifPhysicalLocation{ArtifactLocation: artifactLocation(in.Path, "")}}}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	return inv
}

func findingRule(kind string) sarifRule {
	info, ok := sarifRules[kind]
	if !ok {
		info = sarifRuleInfo{"GPUMemory" + strings.ReplaceAll(kind, "-", ""), "GPU memory finding: " + kind,
			"A finding of kind " + kind + " (see gpuleak's README, JSON report).", "See the finding's message.", "warning"}
	}
	return sarifRule{ID: sarifRuleID(kind), Name: info.name,
		ShortDescription:     sarifText{Text: info.short},
		FullDescription:      sarifText{Text: info.full},
		Help:                 sarifText{Text: info.help},
		DefaultConfiguration: sarifRuleLevel{Level: info.level},
		Properties:           map[string]any{"tags": []string{"gpu", "memory", kind}}}
}

func sanitizerRule(kind string) sarifRule {
	return sarifRule{ID: sarifRuleID("sanitizer-" + kind), Name: "ComputeSanitizer" + camel(kind),
		ShortDescription:     sarifText{Text: "compute-sanitizer error: " + kind},
		FullDescription:      sarifText{Text: "An error compute-sanitizer reported that is not a leak (kind " + kind + "): an invalid memory access, a failing CUDA API call, a race, ..."},
		Help:                 sarifText{Text: "Fix the first error reported: later ones (cudaErrorLaunchFailure and other sticky errors) are often its consequence."},
		DefaultConfiguration: sarifRuleLevel{Level: "error"},
		Properties:           map[string]any{"tags": []string{"cuda", "compute-sanitizer", kind}}}
}

func camel(s string) string {
	var b strings.Builder
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == ' ' }) {
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// siteless is what a finding with neither a stack nor a site adds to its
// SiteKey for its SARIF fingerprint, "" for others. Without it every such
// OOM of one device was one fingerprint ("oom|dev0|no stack|"), and code
// scanning merged different OOMs into one alert. It adds the input, as
// given (relative to --source-root when under it), and for an OOM the
// request in bytes ("?" when not known), the message's form
// (message_generation: 1.x, 2.x, async, mps, ...) and the exception; for
// fragmentation, where it was measured (at). All stay the same when one
// input is analysed again; no line number enters, so log lines added
// above the message (other noise, another step) do not make it a new
// alert. Two OOMs of one input with the same request and form share a
// fingerprint: the same failure repeated.
func siteless(f *Finding, root string) string {
	if len(f.Stack) > 0 || f.Site != (Frame{}) || (f.Kind != KindOOM && f.Kind != KindFragmentation) {
		return ""
	}
	key := "|input " + strings.TrimPrefix(strings.ReplaceAll(f.Path, "\\", "/"), root) // root "" trims nothing
	if d := f.OOMDetail; d != nil {
		req := "?"
		if d.RequestedBytes != nil {
			req = strconv.FormatInt(*d.RequestedBytes, 10)
		}
		key += "|request " + req
		if d.MessageGeneration != nil {
			key += "|form " + *d.MessageGeneration
		}
		if d.Exception != nil {
			key += "|" + *d.Exception
		}
	}
	if d := f.FragmentationDetail; d != nil {
		key += "|at " + d.At
	}
	return key
}

func fingerprint(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:16])
}

// normRoot cleans --source-root to a slash path ending in "/"; "" for none.
func normRoot(root string) string {
	if root == "" {
		return ""
	}
	root = path.Clean(strings.ReplaceAll(root, "\\", "/"))
	if !strings.HasSuffix(root, "/") {
		root += "/"
	}
	return root
}

// hasSourceFile reports whether a frame names a source file code scanning
// can show: not a pseudo-file such as "<frozen runpy>" or "??".
func hasSourceFile(f Frame) bool {
	return f.File != "" && f.File != "??" && !strings.HasPrefix(f.File, "<") && f.Line > 0
}

// frameLocation places a result at frame f: a file and line, relative to
// root when it lies below it, with the function as a logical location; a
// logical location only (the function, else the input) without a file.
func frameLocation(f Frame, root, input string) sarifLocation {
	var loc sarifLocation
	if f.Function != "" {
		loc.LogicalLocations = []sarifLogicalLocation{{Name: shortFunc(f.Function), FullyQualifiedName: f.Function, Kind: "function"}}
	}
	if hasSourceFile(f) {
		al := artifactLocation(f.File, root)
		loc.PhysicalLocation = &sarifPhysicalLocation{ArtifactLocation: al, Region: &sarifRegion{StartLine: f.Line, StartColumn: 1}}
	}
	if loc.PhysicalLocation == nil && loc.LogicalLocations == nil {
		loc.LogicalLocations = []sarifLogicalLocation{{Name: "(no stack)", FullyQualifiedName: input, Kind: "module"}}
	}
	return loc
}

// resultLocations places a result at its site; a site without a source
// file (a profiler trace's op, aten::linear; a compute-sanitizer frame
// built without line information) keeps its function as the logical
// location and takes the file and line of the innermost frame of its
// stack that has them (the Python line that called the op), which code
// scanning needs to show it. The other framed callers are related
// locations.
func resultLocations(site Frame, stack []Frame, root, input string) ([]sarifLocation, []sarifLocation) {
	loc := frameLocation(site, root, input)
	at := site
	if loc.PhysicalLocation == nil {
		for _, fr := range stack {
			if fr != site && hasSourceFile(fr) {
				loc.PhysicalLocation = frameLocation(fr, root, input).PhysicalLocation
				at = fr
				break
			}
		}
	}
	return []sarifLocation{loc}, relatedFrames(stack, at, root)
}

// artifactLocation turns a recorded path into a URI: relative to SRCROOT
// when under root; a file: URI when absolute; as recorded otherwise.
func artifactLocation(file, root string) sarifArtifactLocation {
	p := strings.ReplaceAll(file, "\\", "/")
	if root != "" && strings.HasPrefix(p, root) {
		return sarifArtifactLocation{URI: (&url.URL{Path: strings.TrimPrefix(p, root)}).String(), URIBaseID: "SRCROOT"}
	}
	if strings.HasPrefix(p, "/") {
		return sarifArtifactLocation{URI: (&url.URL{Scheme: "file", Path: p}).String()}
	}
	if len(p) > 2 && p[1] == ':' && p[2] == '/' { // C:/...
		return sarifArtifactLocation{URI: (&url.URL{Scheme: "file", Path: "/" + p}).String()}
	}
	return sarifArtifactLocation{URI: (&url.URL{Path: p}).String()}
}

// maxRelated bounds the frames listed as related locations.
const maxRelated = 10

// relatedFrames lists the callers of a result's frame that have a file.
func relatedFrames(stack []Frame, site Frame, root string) []sarifLocation {
	var out []sarifLocation
	for _, fr := range stack {
		if fr == site || !hasSourceFile(fr) {
			continue
		}
		if len(out) == maxRelated {
			break
		}
		id := len(out) + 1
		loc := frameLocation(fr, root, "")
		loc.ID = &id
		loc.Message = &sarifText{Text: fmt.Sprintf("called from %s", clean(fr.String()))}
		out = append(out, loc)
	}
	return out
}
