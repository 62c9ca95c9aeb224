package dockerfile

import (
	"fmt"
	"strings"
)

// words splits s into words as Docker's shell lexer does for ARG, ENV,
// LABEL, EXPOSE, USER and friends: white space separates words, double
// quotes group and allow substitution, single quotes group literally, a
// backslash escapes the next character (inside double quotes only " \ $),
// and $VAR, ${VAR}, ${VAR:-default} and ${VAR:+alternative} are replaced
// from vars (unset: empty).
func words(s string, vars map[string]string) ([]string, error) {
	var (
		out    []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			n, err := doubleQuoted(s[i+1:], vars, &cur)
			if err != nil {
				return nil, err
			}
			i += n + 1
			inWord = true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
			inWord = true
		case c == '$':
			n, err := variable(s[i+1:], vars, &cur)
			if err != nil {
				return nil, err
			}
			i += n
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// doubleQuoted copies a double-quoted string's content (s starts after
// the opening quote) and returns how many bytes it used, closing quote
// included.
func doubleQuoted(s string, vars map[string]string, cur *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0:
			cur.WriteByte(s[i+1])
			i++
		case c == '$':
			n, err := variable(s[i+1:], vars, cur)
			if err != nil {
				return 0, err
			}
			i += n
		default:
			cur.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("unterminated \" in %q", s)
}

// variable substitutes the reference s starts with (just after the $)
// and returns how many bytes it used. A $ followed by nothing that can
// name a variable is kept as it is.
func variable(s string, vars map[string]string, cur *strings.Builder) (int, error) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return 0, fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := s[1:end]
		name, word, op := expr, "", ""
		if i := strings.Index(expr, ":"); i >= 0 && i+1 < len(expr) {
			name, op, word = expr[:i], expr[i:i+2], expr[i+2:]
		}
		if !validName(name) {
			return 0, fmt.Errorf("bad substitution ${%s}", expr)
		}
		v, set := vars[name]
		switch op {
		case "":
		case ":-":
			if !set || v == "" {
				v = word
			}
		case ":+":
			if set && v != "" {
				v = word
			} else {
				v = ""
			}
		default:
			return 0, fmt.Errorf("unsupported substitution ${%s}", expr)
		}
		cur.WriteString(v)
		return end + 1, nil
	}
	n := 0
	for n < len(s) && (s[n] == '_' || isAlnum(s[n])) {
		n++
	}
	if n == 0 {
		cur.WriteByte('$')
		return 0, nil
	}
	cur.WriteString(vars[s[:n]])
	return n, nil
}

func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '_' && !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
