package jsonpath_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/internal/jsonpath"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want jsonpath.Path
		str  string
	}{
		{"foo", jsonpath.Path{First: "foo"}, "foo"},
		// Qdrant's own parser test case.
		{`foo[1][50].bar-baz[]."qux[.]quux"`, jsonpath.Path{First: "foo", Rest: []jsonpath.Item{
			{Kind: jsonpath.Index, Index: 1}, {Kind: jsonpath.Index, Index: 50}, {Kind: jsonpath.Key, Key: "bar-baz"},
			{Kind: jsonpath.Wildcard}, {Kind: jsonpath.Key, Key: "qux[.]quux"},
		}}, `foo[1][50].bar-baz[]."qux[.]quux"`},
		{`"a b".c`, jsonpath.Path{First: "a b", Rest: []jsonpath.Item{{Kind: jsonpath.Key, Key: "c"}}}, `"a b".c`},
		{`"plain"`, jsonpath.Path{First: "plain"}, "plain"},
		{"ключ.значение", jsonpath.Path{First: "ключ", Rest: []jsonpath.Item{{Kind: jsonpath.Key, Key: "значение"}}}, "ключ.значение"},
		{"access_counts.replica-a", jsonpath.Path{First: "access_counts", Rest: []jsonpath.Item{{Kind: jsonpath.Key, Key: "replica-a"}}}, "access_counts.replica-a"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := jsonpath.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if got.String() != tc.str {
				t.Fatalf("String() = %q, want %q", got.String(), tc.str)
			}
		})
	}
	for _, bad := range []string{"", ".a", "a.", "a..b", "a[", "a[x]", "a[-1]", "[0]", "a b", `"a`, `"a\"b"`, "a.[0]", "a[99999999999999999999999]", "a]"} {
		if _, err := jsonpath.Parse(bad); !errors.Is(err, jsonpath.ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func payload(t *testing.T, m map[string]any) map[string]*qdrant.Value {
	t.Helper()
	s, err := qdrant.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s.GetFields()
}

func mustParse(t *testing.T, s string) jsonpath.Path {
	t.Helper()
	p, err := jsonpath.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGet(t *testing.T) {
	doc := payload(t, map[string]any{
		"a":   map[string]any{"b": 1},
		"arr": []any{map[string]any{"x": 1}, map[string]any{"x": []any{2, 3}}, 4},
		"n":   nil,
	})
	tests := []struct {
		path string
		want []any
	}{
		{"a.b", []any{1}},
		{"a", []any{map[string]any{"b": 1}}},
		{"arr[].x", []any{1, []any{2, 3}}},
		{"arr[1].x", []any{[]any{2, 3}}},
		{"arr[5]", nil},
		{"arr.x", nil}, // a key never enters an array
		{"n", []any{nil}},
		{"missing", nil},
		{"a.b.c", nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var want []*qdrant.Value
			for _, v := range tc.want {
				val, err := qdrant.NewValue(v)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, val)
			}
			if diff := cmp.Diff(want, mustParse(t, tc.path).Values(doc), protocmp.Transform()); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetAndRemove(t *testing.T) {
	src := func() map[string]*qdrant.Value { return payload(t, map[string]any{"k": 1, "gone": nil}) }
	tests := []struct {
		name, path string
		set        bool
		before     map[string]any
		want       map[string]any
	}{
		{"set creates objects", "a.b", true, map[string]any{}, map[string]any{"a": map[string]any{"b": map[string]any{"k": 1}}}},
		{"set merges and null deletes", "a", true, map[string]any{"a": map[string]any{"gone": 1, "x": 2}}, map[string]any{"a": map[string]any{"k": 1, "x": 2}}},
		{"set replaces a scalar", "a", true, map[string]any{"a": 5}, map[string]any{"a": map[string]any{"k": 1}}},
		{"set on each element", "l[]", true, map[string]any{"l": []any{map[string]any{}, 3}}, map[string]any{"l": []any{map[string]any{"k": 1}, map[string]any{"k": 1}}}},
		{"set on one element", "l[1]", true, map[string]any{"l": []any{map[string]any{}, map[string]any{}}}, map[string]any{"l": []any{map[string]any{}, map[string]any{"k": 1}}}},
		{"set index past the end does nothing", "l[5]", true, map[string]any{"l": []any{}}, map[string]any{"l": []any{}}},
		{"set [] on a non-array makes it an empty array", "l[]", true, map[string]any{"l": 1}, map[string]any{"l": []any{}}},
		{"remove nested key", "a.b", false, map[string]any{"a": map[string]any{"b": 1, "c": 2}}, map[string]any{"a": map[string]any{"c": 2}}},
		{"remove in each element", "l[].x", false, map[string]any{"l": []any{map[string]any{"x": 1}, map[string]any{"y": 2}}}, map[string]any{"l": []any{map[string]any{}, map[string]any{"y": 2}}}},
		{"remove a bare index is ignored", "l[0]", false, map[string]any{"l": []any{1}}, map[string]any{"l": []any{1}}},
		{"remove [] empties the array", "l[]", false, map[string]any{"l": []any{1, 2}}, map[string]any{"l": []any{}}},
		{"remove top level", "a", false, map[string]any{"a": 1, "b": 2}, map[string]any{"b": 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := payload(t, tc.before)
			p := mustParse(t, tc.path)
			if tc.set {
				p.Set(doc, src())
			} else {
				p.Remove(doc)
			}
			if diff := cmp.Diff(payload(t, tc.want), doc, protocmp.Transform()); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestIncludeExclude(t *testing.T) {
	doc := payload(t, map[string]any{"a": map[string]any{"b": 1, "c": 2}, "d": 3, "arr": []any{map[string]any{"x": 1, "y": 2}}})
	paths := func(ss ...string) []jsonpath.Path {
		var out []jsonpath.Path
		for _, s := range ss {
			out = append(out, mustParse(t, s))
		}
		return out
	}
	if diff := cmp.Diff(payload(t, map[string]any{"a": map[string]any{"b": 1}, "arr": []any{map[string]any{"y": 2}}}),
		jsonpath.Include(doc, paths("a.b", "arr[].y")), protocmp.Transform()); diff != "" {
		t.Errorf("include (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(payload(t, map[string]any{"a": map[string]any{"c": 2}, "arr": []any{map[string]any{"x": 1, "y": 2}}}),
		jsonpath.Exclude(doc, paths("a.b", "d")), protocmp.Transform()); diff != "" {
		t.Errorf("exclude (-want +got):\n%s", diff)
	}
	// A .key pattern does not select inside arrays (arrays are walked as []).
	if diff := cmp.Diff(payload(t, map[string]any{"arr": []any{}}), jsonpath.Include(doc, paths("arr.x")), protocmp.Transform()); diff != "" {
		t.Errorf("include arr.x (-want +got):\n%s", diff)
	}
}

// FuzzParse: no input panics; a parsed path prints to text that parses
// back to the same path; Get, Set and Remove never panic on any path.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a", "a.b", "a[]", "a[0].b", `"x y".z`, `foo[1][50].bar-baz[]."qux[.]quux"`, "a..b", "[", "ü.ö[3]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := jsonpath.Parse(s)
		if err != nil {
			return
		}
		again, err := jsonpath.Parse(p.String())
		if err != nil {
			t.Fatalf("String() of %q = %q does not parse: %v", s, p.String(), err)
		}
		if !again.Equal(p) {
			t.Fatalf("round trip of %q: %#v != %#v", s, again, p)
		}
		// Built by hand: keys from the fuzzer need not be valid UTF-8.
		inner := qdrant.NewValueFromFields(map[string]*qdrant.Value{"c": qdrant.NewValueNull()})
		doc := map[string]*qdrant.Value{
			"a":     qdrant.NewValueFromFields(map[string]*qdrant.Value{"b": qdrant.NewValueFromList(qdrant.NewValueInt(1), inner)}),
			p.First: qdrant.NewValueFromList(qdrant.NewValueNull(), qdrant.NewValueInt(2), &qdrant.Value{}, nil),
		}
		for _, it := range p.Rest {
			if it.Kind == jsonpath.Key {
				doc[it.Key] = qdrant.NewValueFromFields(map[string]*qdrant.Value{it.Key: nil})
			}
		}
		p.Values(doc)
		p.Set(doc, map[string]*qdrant.Value{"k": qdrant.NewValueInt(1)})
		p.Values(doc)
		p.Remove(doc)
		jsonpath.Include(doc, []jsonpath.Path{p})
		jsonpath.Exclude(doc, []jsonpath.Path{p})
		p.Set(nil, nil)
	})
}
