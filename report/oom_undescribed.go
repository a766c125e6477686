package report

import "fmt"

// undescribedOOMs is the most out-of-memory errors an allocator
// statistics set of r counts (num_ooms) that no input describes
// (AllocatorStats.UndescribedOOMs), and where that set is ("path:line");
// 0, "" when none does. The counts are not added: a run's counter
// printed several times counts the same OOMs again.
func undescribedOOMs(r *Report) (int64, string) {
	var most int64
	where := ""
	for _, in := range r.Inputs {
		for _, s := range in.AllocatorStats {
			if s.UndescribedOOMs > most {
				most = s.UndescribedOOMs
				where = in.Path
				if s.Line > 1 {
					where += fmt.Sprintf(":%d", s.Line)
				}
			}
		}
	}
	return most, where
}

// undescribedHeadline is the postmortem's headline when no input holds an
// out-of-memory message but an allocator statistics set counts OOMs that
// none describes (undescribedOOMs): the gate trips on those, so "no
// out-of-memory error" would contradict it. "" when no set counts any.
func undescribedHeadline(r *Report) string {
	most, where := undescribedOOMs(r)
	if most == 0 {
		return ""
	}
	it, its := "it", "its"
	if most > 1 {
		it, its = "them", "their"
	}
	return fmt.Sprintf("No out-of-memory message in the inputs, but the allocator's statistics count %s before they were taken (num_ooms, %s): the program caught %s, or %s message is not among the inputs; %s size, cause and time are not known.",
		plural(int(most), "OOM", "OOMs"), where, it, its, its)
}

// undescribedLine is what the analysis table adds to "No findings." when
// a statistics set counts OOMs no input describes (undescribedOOMs):
// --fail-on oom trips on them. "" when none does.
func undescribedLine(r *Report) string {
	most, where := undescribedOOMs(r)
	if most == 0 {
		return ""
	}
	return fmt.Sprintf("The allocator's statistics count %s that no out-of-memory message in the inputs describes (num_ooms, %s); --fail-on oom counts %s.",
		plural(int(most), "OOM", "OOMs"), where, map[bool]string{false: "it", true: "them"}[most > 1])
}
