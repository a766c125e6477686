package oom

import "strings"

// uniqueCauses makes each cause name appear once in r.Causes. A cause may
// be found twice by two rules that see the same figures: the rule every
// message without PyTorch's figures shares (a request beyond any GPU:
// aloneCapacity) and its printer's own (ONNX Runtime's request of 2^60
// bytes and more, say). The first found keeps its place; a later one of
// the same name adds its evidence where it says something the first does
// not, its numbers the first lacks, and its advice, written for its
// printer's words, in place of the first's.
func (r *Report) uniqueCauses() {
	if len(r.Causes) < 2 {
		return
	}
	out := r.Causes[:0]
	at := map[string]int{}
	for _, c := range r.Causes {
		k, seen := at[c.Name]
		if !seen {
			at[c.Name] = len(out)
			out = append(out, c)
			continue
		}
		first := &out[k]
		if c.Evidence != "" && !strings.Contains(first.Evidence, c.Evidence) {
			first.Evidence += "; " + c.Evidence
		}
		if len(c.Numbers) > 0 {
			nums := make(map[string]int64, len(first.Numbers)+len(c.Numbers))
			for n, v := range c.Numbers {
				nums[n] = v
			}
			for n, v := range first.Numbers {
				nums[n] = v
			}
			first.Numbers = nums
		}
		if c.Advice != "" {
			first.Advice = c.Advice
		}
	}
	clear(r.Causes[len(out):])
	r.Causes = out
}
