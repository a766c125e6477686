package callsite

import "strings"

// ShortName drops a C++ name's clone suffix, parameters and return type:
// "cudaError cudaMalloc<float>(float**, unsigned long)" -> "cudaMalloc<float>".
func ShortName(name string) string {
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, "[clone ") {
		// compute-sanitizer's device function cloned into a kernel,
		// named first: "[clone myKernel(int *, int *)] outlineSync()" is
		// outlineSync (NVIDIA's synccheck manual).
		depth := 0
		for i := 0; i < len(name); i++ {
			switch name[i] {
			case '[':
				depth++
			case ']':
				depth--
			}
			if depth == 0 {
				if rest := strings.TrimSpace(name[i+1:]); rest != "" {
					name = rest
				}
				break
			}
		}
	}
	if i := strings.Index(name, " [clone "); i >= 0 {
		name = name[:i]
	}
	name = strings.ReplaceAll(name, "(anonymous namespace)", "{anonymous}")
	depth := 0
cut:
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case '(':
			if depth != 0 || i == 0 {
				continue
			}
			if strings.HasSuffix(name[:i], "operator") && strings.HasPrefix(name[i:], "()") {
				i++
				continue
			}
			name = name[:i]
			break cut
		}
	}
	depth = 0
	last := -1
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth == 0 && !strings.HasSuffix(name[:i], "operator") {
				last = i
			}
		}
	}
	if short := strings.TrimLeft(name[last+1:], "*&"); short != "" {
		return short
	}
	return name
}
