package lazyre

// All returns every expression New has made (for the external tests).
func All() []*Regexp {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Regexp(nil), made...)
}

// Filter exposes an expression's filter to the external tests.
func (l *Regexp) Filter() (lits []string, fold, ok bool) {
	f := l.filter()
	if f == nil {
		return nil, false, false
	}
	return f.lits, f.fold, true
}
