package cmd

import (
	"bytes"
	"fmt"
	"os"
	"time"

	ansanitizer "github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// loadSuppressions reads the --suppressions file ("" means none): the
// rules compute-sanitizer records take (those without min-bytes, not
// expired), and every rule as it applies to findings.
func loadSuppressions(path string) ([]ansanitizer.Suppression, []report.SuppressionRule, error) {
	if path == "" {
		return nil, nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--suppressions: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // an editor's byte order mark
	return splitSuppressions(path, data, time.Now())
}
