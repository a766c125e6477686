package report

import "fmt"

// undescribedHeadline is the postmortem's headline when no input holds an
// out-of-memory message but an allocator statistics set counts OOMs
// (num_ooms) that none describes (AllocatorStats.UndescribedOOMs): the
// gate trips on those, so "no out-of-memory error" would contradict it.
// It names the set with the largest count (a run's counter printed
// several times counts the same OOMs again, so the counts are not
// added); "" when no set counts any.
func undescribedHeadline(r *Report) string {
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
