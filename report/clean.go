package report

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// clean makes text from an input safe to print on a terminal: control
// characters (a newline or an escape sequence inside a function name or a
// path) are shown as \n, \x1b and the like, and so are bytes that are not
// UTF-8 (a raw 0x9b is a terminal's one-byte CSI), so an input cannot
// forge rows of a table or drive the terminal. JSON needs no cleaning:
// encoding/json escapes control characters itself.
func clean(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// Clean is clean for callers outside the package (error messages).
func Clean(s string) string { return clean(s) }

// cleaned returns a copy of r with clean applied to every string in it, for
// the text renderers: whatever an input holds (a newline in a function name,
// an escape sequence in a path), a table or a postmortem shows it escaped.
// r itself is not changed.
func cleaned(r *Report) *Report {
	c := cleanValue(reflect.ValueOf(r).Elem()).Interface().(Report)
	return &c
}

func cleanValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		out := reflect.New(v.Type()).Elem()
		out.SetString(clean(v.String()))
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(cleanValue(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(cleanValue(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(cleanValue(it.Key()), cleanValue(it.Value()))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if out.Field(i).CanSet() {
				out.Field(i).Set(cleanValue(v.Field(i)))
			}
		}
		return out
	}
	return v
}
