package pickle

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// unquotePy2 decodes the argument of protocol 0's STRING opcode: a Python
// 2 str repr in single or double quotes, with backslash escapes. The bytes
// are read as Latin-1.
func unquotePy2(s string) (string, error) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", errors.New("argument is not a quoted string")
	}
	s = s[1 : len(s)-1]
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("trailing backslash")
		}
		switch c = s[i]; c {
		case '\\', '\'', '"':
			b = append(b, c)
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'a':
			b = append(b, 7)
		case 'b':
			b = append(b, 8)
		case 'f':
			b = append(b, 12)
		case 'v':
			b = append(b, 11)
		case '\n':
		case 'x':
			if i+3 > len(s) {
				return "", errors.New("short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", errors.New("bad \\x escape")
			}
			b = append(b, byte(v))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b = append(b, byte(v))
			i = j - 1
		default:
			b = append(b, '\\', c)
		}
	}
	return latin1(b), nil
}

// rawUnicodeEscape decodes Python's raw-unicode-escape codec, the argument
// of protocol 0's UNICODE opcode: \uXXXX and \UXXXXXXXX escapes, every
// other byte a Latin-1 character.
func rawUnicodeEscape(s string) (string, error) {
	if !strings.Contains(s, "\\u") && !strings.Contains(s, "\\U") {
		return latin1([]byte(s)), nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			n := 4
			if s[i+1] == 'U' {
				n = 8
			}
			if i+2+n > len(s) {
				return "", errors.New("short \\u escape")
			}
			v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", errors.New("bad \\u escape")
			}
			b.WriteRune(rune(v))
			i += 1 + n
			continue
		}
		b.WriteRune(rune(c))
	}
	return b.String(), nil
}
