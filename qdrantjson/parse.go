package qdrantjson

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Bodies are parsed with a parser of the package's own rather than
// encoding/json because Qdrant's wire format needs things encoding/json does
// not give: numbers kept as their literal text (u64 point ids above 2^53 and
// the integer/float distinction of payload values), member order and
// duplicate detection for objects, invalid UTF-8 and lone surrogates refused
// (encoding/json silently replaces them), a nesting bound, and error
// positions in serde_json's "at line L column C" form. Arrays made only of
// numbers, by far the bulk of a body (vectors), are kept as literal slices so
// that a large upsert costs 16 bytes per number instead of a tree node each.

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types. The zero Value is null, so an absent member reads as null.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "value"
}

// Value is one parsed JSON value. Which fields are set depends on Kind.
type Value struct {
	Kind Kind
	Bool bool   // a boolean's value
	Text string // a string's text (unescaped), or a number's literal
	// An array holds its elements in Elems, or, when every element is a
	// number, their literals in Nums (Elems is then nil). Items reads both.
	Elems []Value
	Nums  []string
	// An object's members in their order, repeated keys kept.
	Members []Member
}

// Member is one member of an object.
type Member struct {
	Key string
	Val Value
}

// maxDepth bounds nesting like serde_json's recursion limit.
const maxDepth = 128

// SyntaxError is input that is not JSON. Qdrant answers it with 400
// "Format error in JSON body: <Msg> at line L column C".
type SyntaxError struct {
	Msg          string
	Line, Column int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at line %d column %d", e.Msg, e.Line, e.Column)
}

type parser struct {
	in       string
	pos      int
	depth    int
	maxDepth int
}

// Parse parses exactly one JSON value (surrounded by optional whitespace).
// A malformed input is a *SyntaxError.
func Parse(in string) (Value, error) {
	return parse(in, maxDepth)
}

func parse(in string, depthLimit int) (Value, error) {
	p := parser{in: in, maxDepth: depthLimit}
	p.skipSpace()
	if p.pos >= len(p.in) {
		return Value{}, p.errAt(p.pos, "EOF while parsing a value")
	}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos < len(p.in) {
		return Value{}, p.errAt(p.pos+1, "trailing characters")
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
	return &SyntaxError{Msg: fmt.Sprintf(format, args...), Line: line, Column: col}
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

func (p *parser) value() (Value, error) {
	if p.pos >= len(p.in) {
		return Value{}, p.errAt(p.pos, "EOF while parsing a value")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return Value{Kind: KindString, Text: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := p.number()
		return Value{Kind: KindNumber, Text: n}, err
	case c == 't':
		return Value{Kind: KindBool, Bool: true}, p.literal("true")
	case c == 'f':
		return Value{Kind: KindBool}, p.literal("false")
	case c == 'n':
		return Value{Kind: KindNull}, p.literal("null")
	}
	return Value{}, p.errAt(p.pos+1, "expected value")
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
	if p.depth > p.maxDepth {
		return p.errAt(p.pos+1, "recursion limit exceeded")
	}
	return nil
}

func (p *parser) object() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '{'
	v := Value{Kind: KindObject}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) {
			return Value{}, p.errAt(p.pos, "EOF while parsing an object")
		}
		if p.in[p.pos] != '"' {
			return Value{}, p.errAt(p.pos+1, "key must be a string")
		}
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return Value{}, p.errAt(p.pos, "EOF while parsing an object")
		}
		if p.in[p.pos] != ':' {
			return Value{}, p.errAt(p.pos+1, "expected `:`")
		}
		p.pos++
		p.skipSpace()
		val, err := p.value()
		if err != nil {
			return Value{}, err
		}
		v.Members = append(v.Members, Member{Key: key, Val: val})
		p.skipSpace()
		if p.pos >= len(p.in) {
			return Value{}, p.errAt(p.pos, "EOF while parsing an object")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == '}' {
				return Value{}, p.errAt(p.pos+1, "trailing comma")
			}
		case '}':
			p.pos++
			p.depth--
			return v, nil
		default:
			return Value{}, p.errAt(p.pos+1, "expected `,` or `}`")
		}
	}
}

func (p *parser) array() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '['
	v := Value{Kind: KindArray}
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
			return Value{}, p.errAt(p.pos, "EOF while parsing a list")
		}
		if c := p.in[p.pos]; numeric && (c == '-' || (c >= '0' && c <= '9')) {
			n, err := p.number()
			if err != nil {
				return Value{}, err
			}
			v.Nums = append(v.Nums, n)
		} else {
			if numeric {
				numeric = false
				v.Elems = make([]Value, len(v.Nums), len(v.Nums)+1)
				for i, n := range v.Nums {
					v.Elems[i] = Value{Kind: KindNumber, Text: n}
				}
				v.Nums = nil
			}
			e, err := p.value()
			if err != nil {
				return Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return Value{}, p.errAt(p.pos, "EOF while parsing a list")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == ']' {
				return Value{}, p.errAt(p.pos+1, "trailing comma")
			}
		case ']':
			p.pos++
			p.depth--
			return v, nil
		default:
			return Value{}, p.errAt(p.pos+1, "expected `,` or `]`")
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

// Items returns the elements of an array, materialising number literals.
func (v Value) Items() []Value {
	if v.Nums == nil {
		return v.Elems
	}
	out := make([]Value, len(v.Nums))
	for i, n := range v.Nums {
		out[i] = Value{Kind: KindNumber, Text: n}
	}
	return out
}

// Len is the number of elements of an array.
func (v Value) Len() int {
	if v.Nums != nil {
		return len(v.Nums)
	}
	return len(v.Elems)
}

// Has says whether an object has a member named key (null included).
func (v Value) Has(key string) bool {
	for _, m := range v.Members {
		if m.Key == key {
			return true
		}
	}
	return false
}

// Describe renders a short form of v for error messages, like serde's
// "invalid type: string \"x\"".
func (v Value) Describe() string {
	switch v.Kind {
	case KindNull:
		return "null"
	case KindBool:
		return fmt.Sprintf("boolean `%t`", v.Bool)
	case KindNumber:
		if !IsIntLiteral(v.Text) {
			return fmt.Sprintf("floating point `%s`", v.Text)
		}
		return fmt.Sprintf("integer `%s`", v.Text)
	case KindString:
		s := v.Text
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return fmt.Sprintf("string %q", s)
	case KindArray:
		return "sequence"
	case KindObject:
		return "map"
	}
	return "value"
}

// IsIntLiteral says whether a number literal is written as an integer (no
// fraction, no exponent): Qdrant reads 3 as an integer and 3.0 as a float.
func IsIntLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }
