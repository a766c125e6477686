package daily

import (
	"bytes"
	"fmt"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// isDailyReport reports whether a file is a daily report's JSON
// (gpuleak.daily/v1), by its first bytes: the weekly review reads a week
// of daily reports as well as a week of artifacts.
func isDailyReport(path string) bool {
	in, err := parse.Open(path, nil)
	if err != nil {
		return false
	}
	defer in.Close()
	head, err := in.Head()
	if err != nil {
		return false
	}
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	// gpuleak writes "schema" first; another tool may reorder members:
	// the schema's value anywhere in the first bytes read (64 KiB) will do.
	return bytes.Contains(head, []byte(`"schema"`)) && bytes.Contains(head, []byte(`"`+report.DailySchema+`"`))
}

// mergeDaily folds an earlier daily report into this one: its findings
// dated inside the window, its leak sites (their days and jobs joined with
// this report's), its OOMs and their counts per day, its GPUs' series and
// lowest memory per day, its fragmentation, compute-sanitizer errors,
// unreadable inputs and inputs' warnings.
func (f *folder) mergeDaily(path string) {
	in, err := parse.Open(path, nil)
	if err != nil {
		f.unreadable(Group{}, path, err)
		return
	}
	d, err := ReadDaily(in.Reader(), path)
	in.Close()
	if err != nil {
		f.unreadable(Group{}, path, err)
		return
	}
	f.d.Summary.Read++
	f.d.Summary.Skipped += d.Summary.Skipped
	for _, sk := range d.Skipped {
		f.d.Skipped = insertSkipped(f.d.Skipped, sk)
	}
	f.d.Summary.Unreadable += d.Summary.Unreadable
	for _, u := range d.Unreadable {
		if len(f.d.Unreadable) < report.DailyMaxItems {
			f.d.Unreadable = append(f.d.Unreadable, u)
		}
	}
	f.d.Summary.ReadInPart += d.Summary.ReadInPart
	for _, u := range d.ReadInPart {
		if len(f.d.ReadInPart) < report.DailyMaxItems {
			f.d.ReadInPart = append(f.d.ReadInPart, u)
		}
	}
	// Its tool errors dated in the window; those it counts but does not
	// list (over its bound) cannot be dated, and are added.
	f.d.Summary.SanitizerReports += d.Summary.SanitizerReports
	// Its GPUs that only other inputs named: counted as it counted them
	// (its devices by job are not in it).
	f.d.Summary.OtherDevices += d.Summary.OtherDevices
	for _, k := range d.Summary.OtherDeviceKinds {
		if f.deviceKinds == nil {
			f.deviceKinds = map[string]bool{}
		}
		f.deviceKinds[k] = true
	}
	listed := 0
	for _, e := range d.ToolErrors {
		listed += max(e.Count, 1)
		if f.dayInWindow(e.Date) {
			f.toolError(e)
		}
	}
	f.d.Summary.ToolErrors += max(d.Summary.ToolErrors-listed, 0)
	// Those the earlier report counts but does not list cannot be dated:
	// counted, as its unreadable inputs are.
	f.d.Summary.InputsWithWarnings += max(d.Summary.InputsWithWarnings-len(d.InputWarnings), 0)
	for _, w := range d.InputWarnings {
		if f.dayInWindow(w.Date) {
			f.inputWarnings(w)
		}
	}
	f.merged++
	for _, day := range d.Days {
		if f.dayInWindow(day) {
			f.days[day] = true
		}
	}
	// A job seen on several days is one job; the jobs a report counts but
	// does not list (over its bound) cannot be matched, and are added.
	jobs := map[string]bool{}
	for _, j := range d.Jobs {
		jobs[jobName(j.Host, j.Job)] = true
		f.countJob(jobName(j.Host, j.Job))
		if j.Host != "" {
			f.hosts[j.Host] = true
		}
	}
	if d.Summary.Jobs > len(jobs) && len(d.Jobs) >= report.DailyMaxItems {
		f.d.Summary.Jobs += d.Summary.Jobs - len(jobs)
	}
	for _, s := range d.LeakSites {
		var days []string
		for _, day := range s.Days {
			if f.dayInWindow(day) {
				days = append(days, day)
			}
		}
		if len(days) == 0 {
			continue
		}
		acc := f.sites[s.Key]
		if acc == nil {
			c := s
			c.Jobs, c.Days, c.Curves, c.Devices = []string{}, []string{}, []report.DailyCurve{}, nil
			c.Findings, c.Bytes, c.Count, c.MaxBytesPerS, c.JobCount = 0, 0, 0, 0, 0
			acc = &c
			f.sites[s.Key] = acc
		}
		f.d.Summary.Leaks += s.Findings
		f.d.Summary.LeakBytes += s.Bytes
		acc.Findings += s.Findings
		acc.Bytes += s.Bytes
		acc.Count += s.Count
		acc.MaxBytesPerS = max(acc.MaxBytesPerS, s.MaxBytesPerS)
		// Its jobs are another day's: counted again, as the days are.
		acc.JobCount += s.JobCount
		for _, j := range s.Jobs {
			acc.Jobs = addBounded(acc.Jobs, j, report.DailyMaxSiteJobs)
		}
		for _, dv := range s.Devices {
			acc.Devices = addBounded(acc.Devices, dv, report.DailyMaxSiteJobs)
		}
		for _, day := range days {
			acc.Days = addSorted(acc.Days, day)
		}
		if acc.Message == "" {
			acc.Message = s.Message
		}
	}
	for _, o := range d.OOMs {
		if f.dayInWindow(o.Date) {
			f.d.OOMs = appendBounded(f.d.OOMs, o, report.DailyMaxItems, oomLess)
		}
	}
	// The counts per day cover OOMs beyond those the report lists.
	for _, c := range d.OOMsByDay {
		if f.dayInWindow(c.Date) {
			f.oomDays[[2]string{c.Date, c.Key}] += c.Count
			f.d.Summary.OOMs += c.Count
		}
	}
	for _, u := range d.UndescribedOOMs {
		if f.dayInWindow(u.Date) {
			f.addUndescribedOOMs(u)
		}
	}
	if f.d.Summary.OOMs > len(f.d.OOMs) {
		f.moreOOMs = f.d.Summary.OOMs - len(f.d.OOMs)
	}
	for _, g := range d.GPUs {
		for _, s := range g.Series {
			if !f.dayInWindow(s.Date) {
				continue
			}
			if s.Classification == "growing" {
				f.d.Summary.Growing++
				if s.PID != nil {
					f.d.Summary.GrowingProcesses++
				}
			}
			// The GPU's UUID where the day's report had mapped its index
			// to one: the same GPU on another day, not another GPU.
			uuidOf := map[string]string{}
			if s.GPU != nil && isGPUUUID(g.GPU) {
				uuidOf[s.Host+"|"+fmt.Sprint(*s.GPU)] = g.GPU
			}
			f.trend(Group{Host: g.Host, Job: g.Job}, s, uuidOf)
		}
	}
	for _, fr := range d.Fragmentation {
		if f.dayInWindow(fr.Date) {
			f.d.Summary.Fragmentation++
			f.d.Fragmentation = appendBounded(f.d.Fragmentation, fr, report.DailyMaxItems, fragLess)
		}
	}
	for _, w := range d.Summary.Worst {
		if f.dayInWindow(w.Date) {
			f.worst(w)
		}
	}
}

// dayInWindow: a date (YYYY-MM-DD, UTC) overlaps the window.
func (f *folder) dayInWindow(day string) bool {
	if !f.opt.From.IsZero() && day < date(f.opt.From.UnixMicro()) {
		return false
	}
	if !f.opt.To.IsZero() && day > date(f.opt.To.UnixMicro()-1) {
		return false
	}
	return true
}

func fragLess(a, b *report.DailyFinding) bool {
	if a.Bytes != b.Bytes {
		return a.Bytes > b.Bytes
	}
	return a.Path < b.Path
}
