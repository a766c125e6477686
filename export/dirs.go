package export

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Dirs creates directories as os.MkdirAll does and remembers the ones it
// made, so that those left empty can be taken away again: an export that
// writes nothing (an error, or no input read) leaves no empty directory
// behind, and a directory that existed before is never removed. Safe for
// concurrent use; the zero value is ready.
type Dirs struct {
	mu      sync.Mutex
	created []string
}

// MkdirAll makes path and any parents it lacks, mode perm (before the
// umask), remembering each one it made.
func (d *Dirs) MkdirAll(path string, perm fs.FileMode) error {
	path = filepath.Clean(path)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: path, Err: errors.New("not a directory")}
	}
	// The missing levels, outermost first.
	var missing []string
	for p := path; ; {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		missing = append(missing, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], perm)
		switch {
		case err == nil:
			d.mu.Lock()
			d.created = append(d.created, missing[i])
			d.mu.Unlock()
		case errors.Is(err, fs.ErrExist):
			// Made meanwhile (another worker, another process): not ours.
			if fi, serr := os.Stat(missing[i]); serr != nil || !fi.IsDir() {
				return err
			}
		default:
			return err
		}
	}
	return nil
}

// RemoveEmpty removes the directories MkdirAll made that are empty now,
// the deepest first (so that a parent left empty by its children goes
// too). A directory that holds anything stays; errors are ignored: what
// cannot be removed is left as it is.
func (d *Dirs) RemoveEmpty() {
	d.mu.Lock()
	dirs := append([]string(nil), d.created...)
	d.created = nil
	d.mu.Unlock()
	sort.SliceStable(dirs, func(i, j int) bool {
		return strings.Count(dirs[i], string(filepath.Separator)) > strings.Count(dirs[j], string(filepath.Separator))
	})
	for _, p := range dirs {
		os.Remove(p) // fails, as it should, on a directory that is not empty
	}
}
