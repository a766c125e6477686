// Package daily builds the daily memory report (gpuleak report): it walks
// directories of many jobs' and hosts' artifacts, groups the files by host
// and job, analyses each group on its own worker through one seam
// (AnalyzeFunc), keeps what falls in a time window, and folds the results
// into a report.Daily: leaks by site across jobs, each OOM with its cause,
// each GPU's and process's NVML trend, fragmentation, unreadable inputs,
// and what changed since a baseline. Memory is bounded by the largest
// group being analysed, not by the number of files: each group's report is
// folded in and dropped, and every listed section is bounded.
package daily

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxFiles bounds the files one report walks; more is an error that says
// so rather than a partial report.
const MaxFiles = 1_000_000

// File is one regular file found under a root, with the group it belongs to.
type File struct {
	Path string
	// Rel is Path relative to its root, with slashes; the base name for a
	// file given as a root.
	Rel string
	// Host and Job name its group ("" host: not known from the path).
	Host, Job string
	// ModUs is the file's modification time (µs since the epoch): its
	// date when its content has none.
	ModUs int64
}

// Group is the files of one job, analysed together (an OOM's log beside
// its snapshot, a GPU's --query-gpu log beside its --query-compute-apps log).
type Group struct {
	Host, Job string
	Files     []File
}

// Name is "host/job", or the job alone when the host is not known.
func (g Group) Name() string { return jobName(g.Host, g.Job) }

func jobName(host, job string) string {
	if host == "" {
		return job
	}
	return host + "/" + job
}

// Skip is an entry under a root that Walk did not list, with the reason:
// a dangling symbolic link, a directory that could not be read, a link
// back into a directory already walked (a loop, or a second way in).
type Skip struct {
	Path   string
	Reason string
	// Unreadable: the entry was meant as input and could not be read (a
	// dangling link, a directory without permission); false for a
	// directory already walked through another path.
	Unreadable bool
}

// readDir lists a directory (a variable so that a test can refuse one,
// as permissions cannot when tests run as root).
var readDir = os.ReadDir

// MaxSkips bounds the skipped entries Walk lists; the rest are counted.
const MaxSkips = 1000

// WalkResult is what Walk found: the groups of files, and what it skipped.
type WalkResult struct {
	Groups []Group
	// Skips lists at most MaxSkips skipped entries; Skipped counts them all.
	Skips   []Skip
	Skipped int
}

// Walk lists the regular files under roots (directories are walked
// recursively, following symbolic links to directories and files; hidden
// directories such as .git are skipped) and groups them: by pattern when
// given (see ParsePattern), else each directory is a job. A file or
// directory reached twice (two roots, a symbolic or hard link) is read
// once, by its device and inode where the OS gives them, and the second
// name is listed as skipped; a link back into a directory already
// walked, a dangling link and a subdirectory that cannot be read are
// skipped and listed with their reason.
// Errors: a root that cannot be read (nor, for a directory, listed), or
// more than MaxFiles files.
func Walk(roots []string, pattern *Pattern) (*WalkResult, error) {
	seen := map[any]string{}
	groups := map[[2]string]*Group{}
	res := &WalkResult{}
	n := 0
	skip := func(s Skip) {
		res.Skipped++
		if len(res.Skips) < MaxSkips {
			res.Skips = append(res.Skips, s)
		}
	}
	add := func(root string, rootIsDir bool, path string, info fs.FileInfo) error {
		id := fileID(path, info)
		if first, dup := seen[id]; dup {
			// Read twice, its findings would count twice (a hard link
			// rsync --link-dest left is yesterday's same file).
			skip(Skip{Path: path, Reason: "a second name (a symbolic or hard link, or a second root) of " + first + ", read once under that name"})
			return nil
		}
		seen[id] = path
		if n++; n > MaxFiles {
			return fmt.Errorf("%s: more than %d files: give fewer directories, or split the report", root, MaxFiles)
		}
		rel := filepath.Base(path)
		if rootIsDir {
			if r, err := filepath.Rel(root, path); err == nil {
				rel = r
			}
		}
		rel = filepath.ToSlash(rel)
		f := File{Path: path, Rel: rel, ModUs: info.ModTime().UnixMicro()}
		f.Host, f.Job = groupOf(root, rel, pattern)
		k := [2]string{f.Host, f.Job}
		g := groups[k]
		if g == nil {
			g = &Group{Host: f.Host, Job: f.Job}
			groups[k] = g
		}
		g.Files = append(g.Files, f)
		return nil
	}
	// dir walks one directory (info: its own, links followed); errors
	// are fatal (MaxFiles); an unreadable entry is skipped.
	var dir func(root, path string, info fs.FileInfo) error
	dir = func(root, path string, info fs.FileInfo) error {
		id := fileID(path, info)
		if first, dup := seen[id]; dup {
			skip(Skip{Path: path, Reason: "directory already walked as " + first + " (a symbolic link loop, or a second link to it): read once"})
			return nil
		}
		seen[id] = path
		ents, err := readDir(path)
		if err != nil {
			if path == root {
				return err
			}
			skip(Skip{Path: path, Reason: "directory could not be read: " + err.Error(), Unreadable: true})
			if len(ents) == 0 {
				return nil
			}
		}
		for _, e := range ents {
			p := filepath.Join(path, e.Name())
			st, err := os.Stat(p) // follows links
			if err != nil {
				if e.Type()&fs.ModeSymlink != 0 {
					to, _ := os.Readlink(p)
					skip(Skip{Path: p, Reason: fmt.Sprintf("symbolic link to %q cannot be followed: %v", to, errors.Unwrap(err)), Unreadable: true})
				} else {
					skip(Skip{Path: p, Reason: err.Error(), Unreadable: true})
				}
				continue
			}
			switch {
			case st.IsDir():
				if strings.HasPrefix(e.Name(), ".") {
					continue // .git and the like
				}
				if err := dir(root, p, st); err != nil {
					return err
				}
			case st.Mode().IsRegular():
				if err := add(root, true, p, st); err != nil {
					return err
				}
			}
			// a socket, a FIFO, a device: not an artifact
		}
		return nil
	}
	for _, root := range roots {
		st, err := os.Stat(root) // follows a symlinked root
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if err := add(root, false, root, st); err != nil {
				return nil, err
			}
			continue
		}
		if err := dir(root, root, st); err != nil {
			return nil, err
		}
	}
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.Files, func(i, j int) bool { return g.Files[i].Path < g.Files[j].Path })
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].Job < out[j].Job
	})
	sort.Slice(res.Skips, func(i, j int) bool { return res.Skips[i].Path < res.Skips[j].Path })
	res.Groups = out
	return res, nil
}

// groupOf names a file's host and job: from the pattern when the file's
// path matches it, else the job is the file's directory under its root
// (the root's own name for a file directly in it).
func groupOf(root, rel string, p *Pattern) (host, job string) {
	if p != nil {
		if h, j, ok := p.Match(rel); ok {
			return h, j
		}
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	if dir == "." {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if st, err := os.Stat(abs); err == nil && !st.IsDir() {
			abs = filepath.Dir(abs)
		}
		return "", filepath.Base(abs)
	}
	return "", dir
}

// Pattern is a --group-by pattern of a file's directories under its root:
// slash-separated parts, each
// {host}, {job} (one path element bound to that name), * (any one
// element), a literal element, or a final ... (any number of elements).
// "{host}/{job}/..." reads host and job from the first two directories.
type Pattern struct {
	parts []string
	rest  bool
}

// ParsePattern reads a --group-by pattern. Errors: an empty pattern, an
// unknown {name}, ... before the end, or no {host} nor {job}.
func ParsePattern(s string) (*Pattern, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty --group-by pattern: want parts such as {host}/{job}/...")
	}
	p := &Pattern{}
	parts := strings.Split(strings.Trim(filepath.ToSlash(s), "/"), "/")
	named := false
	for i, part := range parts {
		switch {
		case part == "...":
			if i != len(parts)-1 {
				return nil, fmt.Errorf("--group-by %q: ... must be the last part", s)
			}
			p.rest = true
			continue
		case strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}"):
			if part != "{host}" && part != "{job}" {
				return nil, fmt.Errorf("--group-by %q: unknown %s (choose {host} or {job})", s, part)
			}
			named = true
		case strings.ContainsAny(part, "{}"):
			return nil, fmt.Errorf("--group-by %q: %q: a {name} must be a whole part", s, part)
		}
		p.parts = append(p.parts, part)
	}
	if !named {
		return nil, fmt.Errorf("--group-by %q names neither {host} nor {job}", s)
	}
	return p, nil
}

// Match binds host and job from the directories of rel (a slash-separated
// path under a root; its last element, the file's name, is not matched).
// ok is false when they do not fit the pattern. Without {job}, the job is
// the directories after the matched parts (or the host's name).
func (p *Pattern) Match(rel string) (host, job string, ok bool) {
	el := strings.Split(rel, "/")
	el = el[:len(el)-1]
	if len(el) < len(p.parts) || !p.rest && len(el) != len(p.parts) {
		return "", "", false
	}
	hasJob := false
	for i, part := range p.parts {
		switch part {
		case "{host}":
			host = el[i]
		case "{job}":
			job, hasJob = el[i], true
		case "*":
		default:
			if el[i] != part {
				return "", "", false
			}
		}
	}
	if !hasJob {
		job = strings.Join(el[len(p.parts):], "/")
		if job == "" {
			job = host
		}
	}
	return host, job, true
}
