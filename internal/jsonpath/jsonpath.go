// Package jsonpath parses and applies Qdrant's payload key paths ("a.b",
// "a[].b", "a[0]", "\"odd key\".c") over payloads held as go-client protobuf
// values, with the semantics of Qdrant's lib/segment/src/json_path (v1.19):
//
//   - a path is a first key followed by .key, [N] or [] items; keys made of
//     letters, digits, '_' and '-' may be bare, any other key is written in
//     double quotes (without escapes);
//   - Get never descends into an array through a .key item: "a.b" on
//     {"a": [{"b": 1}]} finds nothing, "a[].b" finds 1;
//   - Set merges an object at the path (creating objects on the way, a null
//     source value deleting the key), Remove deletes keys (never bare array
//     indices, which Qdrant refuses because that would not be idempotent).
//
// The store (its filters, indexes, updates and payload selectors) and the
// ranker (re-applying a caller's payload selector) share it, so the two
// follow one grammar.
//
// Integers and floats stay distinct because values are *qdrant.Value
// (integer_value vs double_value) all the way through.
package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
)

// ItemKind says what one step after the first key is.
type ItemKind uint8

// The kinds of path items.
const (
	Key      ItemKind = iota // .key
	Index                    // [N]
	Wildcard                 // []
)

// Item is one step of a path after its first key.
type Item struct {
	Kind  ItemKind
	Key   string // for Key
	Index int    // for Index
}

// Path is a parsed payload key path. The zero value is not a valid path.
type Path struct {
	First string
	Rest  []Item
}

// ErrInvalid is returned (wrapped) by Parse for text that is not a path.
var ErrInvalid = errors.New("invalid json path")

// maxLen bounds the text Parse accepts, so hostile input cannot make a path
// allocation proportional to an unbounded request field.
const maxLen = 1 << 16

// Parse parses a key path. It accepts exactly the grammar of Qdrant's
// json_path parser.
func Parse(s string) (Path, error) {
	if len(s) > maxLen {
		return Path{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalid, maxLen)
	}
	p := parser{s: s}
	first, ok := p.key()
	if !ok {
		return Path{}, fmt.Errorf("%w: %q", ErrInvalid, s)
	}
	path := Path{First: first}
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '.':
			p.i++
			k, ok := p.key()
			if !ok {
				return Path{}, fmt.Errorf("%w: %q", ErrInvalid, s)
			}
			path.Rest = append(path.Rest, Item{Kind: Key, Key: k})
		case '[':
			p.i++
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				path.Rest = append(path.Rest, Item{Kind: Wildcard})
				continue
			}
			start := p.i
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
			if start == p.i || p.i >= len(p.s) || p.s[p.i] != ']' {
				return Path{}, fmt.Errorf("%w: %q", ErrInvalid, s)
			}
			n, err := strconv.Atoi(p.s[start:p.i])
			if err != nil {
				return Path{}, fmt.Errorf("%w: %q", ErrInvalid, s)
			}
			p.i++
			path.Rest = append(path.Rest, Item{Kind: Index, Index: n})
		default:
			return Path{}, fmt.Errorf("%w: %q", ErrInvalid, s)
		}
	}
	return path, nil
}

type parser struct {
	s string
	i int
}

// key reads a bare key (one or more alphanumeric, '_' or '-' runes) or a
// double-quoted key (any runes but '"' and '\').
func (p *parser) key() (string, bool) {
	if p.i >= len(p.s) {
		return "", false
	}
	if p.s[p.i] == '"' {
		end := strings.IndexAny(p.s[p.i+1:], "\"\\")
		if end < 0 || p.s[p.i+1+end] != '"' {
			return "", false
		}
		k := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return k, true
	}
	start := p.i
	for p.i < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		if !isBare(r) {
			break
		}
		p.i += size
	}
	return p.s[start:p.i], p.i > start
}

// isBare mirrors Rust's char::is_alphanumeric (Alphabetic or Numeric) plus
// '_' and '-'.
func isBare(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsNumber(r) ||
		unicode.Is(unicode.Other_Alphabetic, r)
}

// needsQuoting reports whether a key cannot be written bare.
func needsQuoting(k string) bool {
	if k == "" {
		return true
	}
	for _, r := range k {
		if !isBare(r) {
			return true
		}
	}
	return false
}

// String formats the path the way Qdrant prints it (keys quoted when needed).
func (p Path) String() string {
	var b strings.Builder
	writeKey := func(k string) {
		if needsQuoting(k) {
			b.WriteByte('"')
			b.WriteString(k)
			b.WriteByte('"')
			return
		}
		b.WriteString(k)
	}
	writeKey(p.First)
	for _, it := range p.Rest {
		switch it.Kind {
		case Key:
			b.WriteByte('.')
			writeKey(it.Key)
		case Index:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(it.Index))
			b.WriteByte(']')
		case Wildcard:
			b.WriteString("[]")
		}
	}
	return b.String()
}

// Equal reports whether two paths are the same.
func (p Path) Equal(q Path) bool {
	if p.First != q.First || len(p.Rest) != len(q.Rest) {
		return false
	}
	for i := range p.Rest {
		if p.Rest[i] != q.Rest[i] {
			return false
		}
	}
	return true
}

// ArrayKey returns the path with a trailing [] (unless it already has one):
// the elements a nested condition iterates over.
func (p Path) ArrayKey() Path {
	rest := make([]Item, len(p.Rest), len(p.Rest)+1)
	copy(rest, p.Rest)
	if len(rest) == 0 || rest[len(rest)-1].Kind != Wildcard {
		rest = append(rest, Item{Kind: Wildcard})
	}
	return Path{First: p.First, Rest: rest}
}

// Get calls visit for every value found at the path, in document order
// (Qdrant's value_get). A missing key yields no value; a present null yields
// the null value.
func (p Path) Get(fields map[string]*qdrant.Value, visit func(*qdrant.Value)) {
	v, ok := fields[p.First]
	if !ok {
		return
	}
	get(p.Rest, v, visit)
}

func get(rest []Item, v *qdrant.Value, visit func(*qdrant.Value)) {
	for len(rest) > 0 {
		it := rest[0]
		rest = rest[1:]
		switch it.Kind {
		case Key:
			s := v.GetStructValue()
			if s == nil {
				return
			}
			next, ok := s.GetFields()[it.Key]
			if !ok {
				return
			}
			v = next
		case Index:
			l := v.GetListValue()
			if l == nil || it.Index >= len(l.GetValues()) {
				return
			}
			v = l.GetValues()[it.Index]
		case Wildcard:
			l := v.GetListValue()
			if l == nil {
				return
			}
			for _, e := range l.GetValues() {
				get(rest, e, visit)
			}
			return
		}
	}
	visit(v)
}

// Values returns the values at the path (a convenience over Get).
func (p Path) Values(fields map[string]*qdrant.Value) []*qdrant.Value {
	var out []*qdrant.Value
	p.Get(fields, func(v *qdrant.Value) { out = append(out, v) })
	return out
}

// Merge merges src into dest at the top level: keys of src replace keys of
// dest, and a null value in src deletes the key (Qdrant's merge_map).
func Merge(dest, src map[string]*qdrant.Value) {
	for k, v := range src {
		if IsNull(v) {
			delete(dest, k)
			continue
		}
		dest[k] = v
	}
}

// Set merges src into the object at the path in dest (Qdrant's value_set):
// missing or non-object values on the way are replaced by objects, [N]
// targets an existing element only, [] every element of an existing array.
// A nil dest is left alone (there is nowhere to put the result).
func (p Path) Set(dest, src map[string]*qdrant.Value) {
	if dest == nil {
		return
	}
	setInMap(p.First, p.Rest, dest, src)
}

func setInMap(key string, rest []Item, dest, src map[string]*qdrant.Value) {
	v, ok := dest[key]
	if !ok || v == nil {
		v = NewNull()
		dest[key] = v
	}
	setValue(rest, v, src)
}

// setValue mutates v in place; the caller's map keeps pointing at it.
func setValue(rest []Item, v *qdrant.Value, src map[string]*qdrant.Value) {
	if len(rest) == 0 {
		s := v.GetStructValue()
		if s == nil {
			s = &qdrant.Struct{Fields: map[string]*qdrant.Value{}}
			v.Kind = &qdrant.Value_StructValue{StructValue: s}
		}
		if s.Fields == nil {
			s.Fields = map[string]*qdrant.Value{}
		}
		Merge(s.Fields, src)
		return
	}
	it := rest[0]
	switch it.Kind {
	case Key:
		s := v.GetStructValue()
		if s == nil {
			s = &qdrant.Struct{Fields: map[string]*qdrant.Value{}}
			v.Kind = &qdrant.Value_StructValue{StructValue: s}
		}
		if s.Fields == nil {
			s.Fields = map[string]*qdrant.Value{}
		}
		setInMap(it.Key, rest[1:], s.Fields, src)
	case Index:
		l := v.GetListValue()
		if l == nil {
			v.Kind = &qdrant.Value_ListValue{ListValue: &qdrant.ListValue{}}
			return
		}
		if it.Index < len(l.Values) && l.Values[it.Index] != nil {
			setValue(rest[1:], l.Values[it.Index], src)
		}
	case Wildcard:
		l := v.GetListValue()
		if l == nil {
			v.Kind = &qdrant.Value_ListValue{ListValue: &qdrant.ListValue{}}
			return
		}
		for i, e := range l.Values {
			if e == nil {
				e = NewNull()
				l.Values[i] = e
			}
			setValue(rest[1:], e, src)
		}
	}
}

// Remove deletes the values at the path from fields (Qdrant's value_remove).
// A path ending in [N] removes nothing; one ending in [] empties the array.
func (p Path) Remove(fields map[string]*qdrant.Value) {
	if len(p.Rest) == 0 {
		delete(fields, p.First)
		return
	}
	v, ok := fields[p.First]
	if !ok || v == nil {
		return
	}
	remove(p.Rest[0], p.Rest[1:], v)
}

func remove(head Item, rest []Item, v *qdrant.Value) {
	if len(rest) > 0 {
		switch head.Kind {
		case Key:
			if s := v.GetStructValue(); s != nil {
				if next, ok := s.Fields[head.Key]; ok && next != nil {
					remove(rest[0], rest[1:], next)
				}
			}
		case Index:
			if l := v.GetListValue(); l != nil && head.Index < len(l.Values) && l.Values[head.Index] != nil {
				remove(rest[0], rest[1:], l.Values[head.Index])
			}
		case Wildcard:
			if l := v.GetListValue(); l != nil {
				for _, e := range l.Values {
					if e != nil {
						remove(rest[0], rest[1:], e)
					}
				}
			}
		}
		return
	}
	switch head.Kind {
	case Key:
		if s := v.GetStructValue(); s != nil {
			delete(s.Fields, head.Key)
		}
	case Index:
		// Deleting an array index is not idempotent; Qdrant ignores it.
	case Wildcard:
		if l := v.GetListValue(); l != nil {
			l.Values = nil
		}
	}
}

// matchesInclude is Qdrant's check_include_pattern: one path is a prefix of
// the other.
func matchesInclude(pattern Path, key []Item, first string) bool {
	if pattern.First != first {
		return false
	}
	n := min(len(pattern.Rest), len(key))
	for i := 0; i < n; i++ {
		if pattern.Rest[i] != key[i] {
			return false
		}
	}
	return true
}

// matchesExclude is Qdrant's check_exclude_pattern: the pattern is a prefix
// of the key.
func matchesExclude(pattern Path, key []Item, first string) bool {
	if pattern.First != first || len(key) < len(pattern.Rest) {
		return false
	}
	for i := range pattern.Rest {
		if pattern.Rest[i] != key[i] {
			return false
		}
	}
	return true
}

// Include returns a copy of fields keeping only what the include patterns
// select (Qdrant's PayloadSelectorInclude).
func Include(fields map[string]*qdrant.Value, patterns []Path) map[string]*qdrant.Value {
	return filterMap(fields, func(first string, key []Item) bool {
		for _, p := range patterns {
			if matchesInclude(p, key, first) {
				return true
			}
		}
		return false
	})
}

// Exclude returns a copy of fields without what the exclude patterns select
// (Qdrant's PayloadSelectorExclude).
func Exclude(fields map[string]*qdrant.Value, patterns []Path) map[string]*qdrant.Value {
	return filterMap(fields, func(first string, key []Item) bool {
		for _, p := range patterns {
			if matchesExclude(p, key, first) {
				return false
			}
		}
		return true
	})
}

// filterMap is Qdrant's value_filter: it walks objects by key and arrays as
// [] and keeps what keep accepts.
func filterMap(fields map[string]*qdrant.Value, keep func(first string, key []Item) bool) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(fields))
	var key []Item
	for k, v := range fields {
		key = key[:0]
		if !keep(k, key) {
			continue
		}
		out[k] = filterValue(k, &key, v, keep)
	}
	return out
}

func filterValue(first string, key *[]Item, v *qdrant.Value, keep func(string, []Item) bool) *qdrant.Value {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_ListValue:
		*key = append(*key, Item{Kind: Wildcard})
		var vals []*qdrant.Value
		for _, e := range k.ListValue.GetValues() {
			if keep(first, *key) {
				vals = append(vals, filterValue(first, key, e, keep))
			}
		}
		*key = (*key)[:len(*key)-1]
		return &qdrant.Value{Kind: &qdrant.Value_ListValue{ListValue: &qdrant.ListValue{Values: vals}}}
	case *qdrant.Value_StructValue:
		fields := make(map[string]*qdrant.Value, len(k.StructValue.GetFields()))
		for name, e := range k.StructValue.GetFields() {
			*key = append(*key, Item{Kind: Key, Key: name})
			if keep(first, *key) {
				fields[name] = filterValue(first, key, e, keep)
			}
			*key = (*key)[:len(*key)-1]
		}
		return &qdrant.Value{Kind: &qdrant.Value_StructValue{StructValue: &qdrant.Struct{Fields: fields}}}
	default:
		return v
	}
}

// NewNull returns a JSON null value.
func NewNull() *qdrant.Value {
	return &qdrant.Value{Kind: &qdrant.Value_NullValue{}}
}

// IsNull reports whether v is JSON null. A nil value or a value without a
// kind counts as null, as in Qdrant's proto-to-JSON conversion.
func IsNull(v *qdrant.Value) bool {
	if v == nil || v.Kind == nil {
		return true
	}
	_, ok := v.Kind.(*qdrant.Value_NullValue)
	return ok
}
