package restapi

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The REST front parses request bodies with its own small JSON parser rather
// than encoding/json because Qdrant's wire format needs things encoding/json
// does not give: numbers kept as their literal text (u64 point ids above 2^53
// and the integer/float distinction of payload values), member order and
// duplicate detection for objects, invalid UTF-8 and lone surrogates refused
// (encoding/json silently replaces them), a nesting bound, and error positions
// in serde_json's "at line L column C" form. Arrays made only of numbers, by
// far the bulk of a body (vectors), are kept as literal slices so that a large
// upsert costs 16 bytes per number instead of a tree node each.

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "value"
}

// value is one parsed JSON value. For numbers s holds the literal; for
// strings the unescaped text. An array holds either elems or, when every
// element is a number, nums (the literals).
type value struct {
	kind    kind
	b       bool
	s       string
	elems   []value
	nums    []string
	members []member
}

type member struct {
	key string
	val value
}

// maxDepth bounds nesting like serde_json's recursion limit.
const maxDepth = 128

// syntaxError is a malformed body; Qdrant answers it with 400 "Format error in
// JSON body: <msg> at line L column C".
type syntaxError struct {
	msg          string
	line, column int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at line %d column %d", e.msg, e.line, e.column)
}

type parser struct {
	in    string
	pos   int
	depth int
}

// parseJSON parses exactly one JSON value (surrounded by optional whitespace).
func parseJSON(in string) (value, error) {
	p := parser{in: in}
	p.skipSpace()
	if p.pos >= len(p.in) {
		return value{}, p.errAt(p.pos, "EOF while parsing a value")
	}
	v, err := p.value()
	if err != nil {
		return value{}, err
	}
	p.skipSpace()
	if p.pos < len(p.in) {
		return value{}, p.errAt(p.pos+1, "trailing characters")
	}
	return v, nil
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	if pos > len(p.in) {
		pos = len(p.in)
	}
	// serde_json's column is the number of characters of the line read when
	// the error was found: the offending one included, or all of them at EOF.
	line := 1 + strings.Count(p.in[:pos], "\n")
	col := pos - (strings.LastIndexByte(p.in[:pos], '\n') + 1)
	return &syntaxError{msg: fmt.Sprintf(format, args...), line: line, column: col}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (value, error) {
	if p.pos >= len(p.in) {
		return value{}, p.errAt(p.pos, "EOF while parsing a value")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return value{kind: kindString, s: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := p.number()
		return value{kind: kindNumber, s: n}, err
	case c == 't':
		return value{kind: kindBool, b: true}, p.literal("true")
	case c == 'f':
		return value{kind: kindBool}, p.literal("false")
	case c == 'n':
		return value{kind: kindNull}, p.literal("null")
	}
	return value{}, p.errAt(p.pos+1, "expected value")
}

func (p *parser) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.in) {
			return p.errAt(p.pos, "EOF while parsing a value")
		}
		if p.in[p.pos] != word[i] {
			return p.errAt(p.pos+1, "expected ident")
		}
		p.pos++
	}
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errAt(p.pos+1, "recursion limit exceeded")
	}
	return nil
}

func (p *parser) object() (value, error) {
	if err := p.enter(); err != nil {
		return value{}, err
	}
	p.pos++ // '{'
	v := value{kind: kindObject}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errAt(p.pos, "EOF while parsing an object")
		}
		if p.in[p.pos] != '"' {
			return value{}, p.errAt(p.pos+1, "key must be a string")
		}
		key, err := p.str()
		if err != nil {
			return value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errAt(p.pos, "EOF while parsing an object")
		}
		if p.in[p.pos] != ':' {
			return value{}, p.errAt(p.pos+1, "expected `:`")
		}
		p.pos++
		p.skipSpace()
		val, err := p.value()
		if err != nil {
			return value{}, err
		}
		v.members = append(v.members, member{key: key, val: val})
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errAt(p.pos, "EOF while parsing an object")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == '}' {
				return value{}, p.errAt(p.pos+1, "trailing comma")
			}
		case '}':
			p.pos++
			p.depth--
			return v, nil
		default:
			return value{}, p.errAt(p.pos+1, "expected `,` or `}`")
		}
	}
}

func (p *parser) array() (value, error) {
	if err := p.enter(); err != nil {
		return value{}, err
	}
	p.pos++ // '['
	v := value{kind: kindArray}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		p.depth--
		return v, nil
	}
	numeric := true
	for {
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errAt(p.pos, "EOF while parsing a list")
		}
		if c := p.in[p.pos]; numeric && (c == '-' || (c >= '0' && c <= '9')) {
			n, err := p.number()
			if err != nil {
				return value{}, err
			}
			v.nums = append(v.nums, n)
		} else {
			if numeric {
				numeric = false
				v.elems = make([]value, len(v.nums), len(v.nums)+1)
				for i, n := range v.nums {
					v.elems[i] = value{kind: kindNumber, s: n}
				}
				v.nums = nil
			}
			e, err := p.value()
			if err != nil {
				return value{}, err
			}
			v.elems = append(v.elems, e)
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errAt(p.pos, "EOF while parsing a list")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == ']' {
				return value{}, p.errAt(p.pos+1, "trailing comma")
			}
		case ']':
			p.pos++
			p.depth--
			return v, nil
		default:
			return value{}, p.errAt(p.pos+1, "expected `,` or `]`")
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) number() (string, error) {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(p.in) {
		return "", p.errAt(p.pos, "EOF while parsing a value")
	}
	switch c := p.in[p.pos]; {
	case c == '0':
		p.pos++
		if p.pos < len(p.in) && isDigit(p.in[p.pos]) {
			return "", p.errAt(p.pos+1, "invalid number")
		}
	case isDigit(c):
		for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
			p.pos++
		}
	default:
		return "", p.errAt(p.pos+1, "invalid number")
	}
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if p.pos >= len(p.in) {
			return "", p.errAt(p.pos, "EOF while parsing a value")
		}
		if !isDigit(p.in[p.pos]) {
			return "", p.errAt(p.pos+1, "invalid number")
		}
		for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
			p.pos++
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(p.in) {
			return "", p.errAt(p.pos, "EOF while parsing a value")
		}
		if !isDigit(p.in[p.pos]) {
			return "", p.errAt(p.pos+1, "invalid number")
		}
		for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
			p.pos++
		}
	}
	return p.in[start:p.pos], nil
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		if c == '"' {
			s := p.in[start:p.pos]
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errAt(p.pos+1, "control character (\\u0000-\\u001F) found while parsing a string")
		}
		if c < utf8.RuneSelf {
			p.pos++
			continue
		}
		r, size := utf8.DecodeRuneInString(p.in[p.pos:])
		if r == utf8.RuneError && size <= 1 {
			return "", p.errAt(p.pos+1, "invalid unicode code point")
		}
		p.pos += size
	}
	if p.pos >= len(p.in) {
		return "", p.errAt(p.pos, "EOF while parsing a string")
	}
	var b strings.Builder
	b.WriteString(p.in[start:p.pos])
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			p.pos++
			if p.pos >= len(p.in) {
				return "", p.errAt(p.pos, "EOF while parsing a string")
			}
			e := p.in[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 {
						return "", p.errAt(p.pos, "lone leading surrogate in hex escape")
					}
					if p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
						return "", p.errAt(p.pos, "unexpected end of hex escape")
					}
					p.pos += 2
					r2, err := p.hex4()
					if err != nil {
						return "", err
					}
					r = utf16.DecodeRune(r, r2)
					if r == utf8.RuneError {
						return "", p.errAt(p.pos, "lone leading surrogate in hex escape")
					}
				}
				b.WriteRune(r)
			default:
				return "", p.errAt(p.pos, "invalid escape")
			}
		case c < 0x20:
			return "", p.errAt(p.pos+1, "control character (\\u0000-\\u001F) found while parsing a string")
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.in[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errAt(p.pos+1, "invalid unicode code point")
			}
			b.WriteString(p.in[p.pos : p.pos+size])
			p.pos += size
		}
	}
	return "", p.errAt(p.pos, "EOF while parsing a string")
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.in) {
		p.pos = len(p.in)
		return 0, p.errAt(p.pos, "EOF while parsing a string")
	}
	n, err := strconv.ParseUint(p.in[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, p.errAt(p.pos+1, "invalid escape")
	}
	p.pos += 4
	return rune(n), nil
}

// items returns the elements of an array, materialising number literals.
func (v value) items() []value {
	if v.nums == nil {
		return v.elems
	}
	out := make([]value, len(v.nums))
	for i, n := range v.nums {
		out[i] = value{kind: kindNumber, s: n}
	}
	return out
}

// length is the number of elements of an array.
func (v value) length() int {
	if v.nums != nil {
		return len(v.nums)
	}
	return len(v.elems)
}

// describe renders a short form of v for error messages, like serde's
// "invalid type: string \"x\"".
func (v value) describe() string {
	switch v.kind {
	case kindNull:
		return "null"
	case kindBool:
		return fmt.Sprintf("boolean `%t`", v.b)
	case kindNumber:
		if strings.ContainsAny(v.s, ".eE") {
			return fmt.Sprintf("floating point `%s`", v.s)
		}
		return fmt.Sprintf("integer `%s`", v.s)
	case kindString:
		s := v.s
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return fmt.Sprintf("string %q", s)
	case kindArray:
		return "sequence"
	case kindObject:
		return "map"
	}
	return "value"
}
