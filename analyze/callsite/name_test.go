package callsite

import "testing"

// TestShortName holds the C++ names on which the two shorteners that
// were disagreed (this one, which was the sanitizer analysis's, and the
// report's, which showed frames and is now this one for names with "::"),
// with the reason the answer here is the right one, and names they agreed
// on, which must not move.
func TestShortName(t *testing.T) {
	cases := []struct {
		name, want, why string
	}{
		// Disagreements. The report's shortener cuts at the first '(' and
		// splits at the last space, with no notion of operator names or
		// clone suffixes.
		{"void ns::Foo::operator()(int)", "ns::Foo::operator()",
			"the function is the call operator, operator(); the report's gives \"ns::Foo::operator\", which names no function"},
		{"ns::f [clone .isra.0]", "ns::f",
			"a GCC clone suffix is not part of the name; the report's splits at its space and gives \".isra.0]\""},
		{"int *ns::make(int)", "ns::make",
			"the '*' belongs to the return type; the report's gives \"*ns::make\""},
		{"bool ns::Ptr::operator->() const", "ns::Ptr::operator->",
			"the '>' of operator-> opens no template; the report's counts it as one and keeps the whole signature"},
		{"cudaError cudaMalloc<float>(float**, unsigned long)", "cudaMalloc<float>",
			"a C++ name without namespace is still a signature; report.shortFunc leaves names without \"::\" whole, on purpose: Python and profiler names (\"autograd backward\") have spaces too"},
		// Agreements.
		{"void at::cuda::blas::gemm<float>(char, long)", "at::cuda::blas::gemm<float>", ""},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<int, std::allocator<int> >::push_back", ""},
		{"(anonymous namespace)::helper(float*)", "{anonymous}::helper", ""},
		{"ns::f(int) [clone .cold]", "ns::f", ""},
		{"at::native::add_kernel", "at::native::add_kernel", ""},
	}
	for _, c := range cases {
		got := ShortName(c.name)
		if got != c.want {
			t.Errorf("ShortName(%q) = %q, want %q: %s", c.name, got, c.want, c.why)
		}
		// The report shortens names the sanitizer analysis already
		// shortened: a second pass must not change them.
		if again := ShortName(got); again != got {
			t.Errorf("ShortName(%q) = %q, not idempotent (first pass %q)", got, again, c.name)
		}
	}
}
