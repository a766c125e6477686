package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchema compiles the OASIS SARIF 2.1.0 schema in testdata/sarif
// (testdata/README.md says where it came from), asserting formats (uri,
// uri-reference, date-time) too.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(td + "sarif/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type sarifDoc struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription struct{ Text string }
					FullDescription  struct{ Text string }
					Help             struct{ Text string }
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine   int `json:"startLine"`
						StartColumn int `json:"startColumn"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name               string `json:"name"`
					FullyQualifiedName string `json:"fullyQualifiedName"`
				} `json:"logicalLocations"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

// analyzeSARIF runs analyze --format sarif, validates the log against
// the schema and decodes it.
func analyzeSARIF(t *testing.T, schema *jsonschema.Schema, args ...string) *sarifDoc {
	t.Helper()
	code, out, errOut := run(t, nil, append([]string{"analyze", "--format", "sarif", "--top", "0"}, args...)...)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("%v: the SARIF log does not validate against the SARIF 2.1.0 schema: %v", args, err)
	}
	var d sarifDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Version != "2.1.0" || len(d.Runs) != 1 {
		t.Fatalf("version %q, %d runs", d.Version, len(d.Runs))
	}
	return &d
}

// SARIF logs of every kind of input validate against the official
// schema; results sit at the innermost user frame with the path below
// --source-root, line and column 1; each rule has its texts; fingerprints
// do not change from run to run (nor between a text and an XML log of one
// program); results without a source file keep a logical location.
func TestSARIF(t *testing.T) {
	schema := sarifSchema(t)
	for _, in := range []string{
		"pytorch/multi_gpu_leak.pickle", "pytorch/oom_observer.pickle", "pytorch/fragmentation_oom.pickle",
		"pytorch/oom_error.txt", "sanitizer/leak_with_oob.txt", "sanitizer/leak_nobacktrace.txt",
		"sanitizer/leak_cupy.txt", "nvml/query_apps.csv", "pytorch/hf_gpt2_leak.pickle.gz",
	} {
		analyzeSARIF(t, schema, td+in)
	}

	// Fixtures README: the leak is 40 blocks from forward (leak_train_loop.py:11),
	// recorded under /home/user/train.
	d := analyzeSARIF(t, schema, "--source-root", "/home/user/", td+"pytorch/leak_train_loop.pickle")
	run0 := d.Runs[0]
	rules := map[string]int{}
	for i, r := range run0.Tool.Driver.Rules {
		rules[r.ID] = i
		if r.ShortDescription.Text == "" || r.FullDescription.Text == "" || r.Help.Text == "" {
			t.Errorf("rule %s lacks a text", r.ID)
		}
	}
	res := run0.Results[0]
	if res.RuleID != "gpuleak/leak" || rules[res.RuleID] != res.RuleIndex || res.Level != "error" {
		t.Fatalf("first result: %s (index %d) level %s", res.RuleID, res.RuleIndex, res.Level)
	}
	pl := res.Locations[0].PhysicalLocation
	if pl == nil || pl.ArtifactLocation.URI != "train/leak_train_loop.py" || pl.ArtifactLocation.URIBaseID != "SRCROOT" ||
		pl.Region.StartLine != 11 || pl.Region.StartColumn != 1 {
		t.Errorf("leak location %+v", pl)
	}
	// Without --source-root the recorded absolute path is a file: URI.
	d2 := analyzeSARIF(t, schema, td+"pytorch/leak_train_loop.pickle")
	if u := d2.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI; u != "file:///home/user/train/leak_train_loop.py" {
		t.Errorf("uri without --source-root: %q", u)
	}
	// The 32 MiB block with no Python frames: a logical location only.
	noFile := 0
	for i, r := range run0.Results {
		if r.Locations[0].PhysicalLocation == nil {
			noFile++
			if len(r.Locations[0].LogicalLocations) == 0 {
				t.Errorf("result %d has neither a physical nor a logical location", i)
			}
		}
		if fp := r.PartialFingerprints["gpuleakSite/v1"]; fp == "" || fp != d2.Runs[0].Results[i].PartialFingerprints["gpuleakSite/v1"] {
			t.Errorf("result %d: fingerprint %q differs between runs", i, fp)
		}
	}
	if noFile != 1 {
		t.Errorf("%d results without a file, want 1 (the block with no frames)", noFile)
	}
	text := analyzeSARIF(t, schema, td+"sanitizer/leak_full.txt")
	xml := analyzeSARIF(t, schema, td+"sanitizer/leak_save.xml")
	fps := map[string]bool{}
	for _, r := range text.Runs[0].Results {
		fps[r.PartialFingerprints["gpuleakSite/v1"]] = true
	}
	for _, r := range xml.Runs[0].Results {
		if !fps[r.PartialFingerprints["gpuleakSite/v1"]] {
			t.Errorf("XML result %s at %+v: fingerprint not among the text log's", r.RuleID, r.Locations[0].PhysicalLocation)
		}
	}
	// Tool errors are results of their own rules.
	oob := analyzeSARIF(t, schema, td+"sanitizer/leak_with_oob.txt")
	errs := 0
	for _, r := range oob.Runs[0].Results {
		if strings.HasPrefix(r.RuleID, "gpuleak/sanitizer-") {
			errs++
		}
	}
	if errs == 0 {
		t.Error("leak_with_oob.txt: no compute-sanitizer error results")
	}
}

// A profiler trace's site is the op that allocated (aten::linear), which
// has no file; the Python frame that called it does. The fixture's leak
// is 8 blocks at aten::linear called from <module> (profile_mem.py:8):
// its result sits there, with the op as its logical location, so that
// code scanning can place it. A memory timeline's categories have no
// frame at all: a logical location only.
func TestSARIFOpSiteAtItsCaller(t *testing.T) {
	schema := sarifSchema(t)
	d := analyzeSARIF(t, schema, td+"pytorch/kineto_trace.json")
	res := d.Runs[0].Results[0]
	if res.RuleID != "gpuleak/leak" {
		t.Fatalf("first result %s, want the leak", res.RuleID)
	}
	loc := res.Locations[0]
	if loc.PhysicalLocation == nil || loc.PhysicalLocation.ArtifactLocation.URI != "profile_mem.py" || loc.PhysicalLocation.Region.StartLine != 8 ||
		len(loc.LogicalLocations) == 0 || loc.LogicalLocations[0].FullyQualifiedName != "aten::linear" {
		t.Errorf("leak at %+v, logical %+v; want profile_mem.py:8, aten::linear", loc.PhysicalLocation, loc.LogicalLocations)
	}
	tl := analyzeSARIF(t, schema, td+"kineto/profile_keep_outputs_memory_timeline.json")
	for _, r := range tl.Runs[0].Results {
		if r.Locations[0].PhysicalLocation != nil || len(r.Locations[0].LogicalLocations) == 0 {
			t.Errorf("timeline result %s at %+v", r.RuleID, r.Locations[0])
		}
	}
}
