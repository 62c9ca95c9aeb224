package textnorm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWords(t *testing.T) {
	type word struct {
		W    string
		Name bool
	}
	tests := []struct {
		name string
		text string
		want []word
	}{
		{name: "a name inside a sentence", text: "Bob lives in Berlin.", want: []word{{"Bob", false}, {"lives", false}, {"in", false}, {"Berlin", true}}},
		{name: "every sentence starts anew", text: "Hi. Dana: Lisbon!", want: []word{{"Hi", false}, {"Dana", false}, {"Lisbon", false}}},
		{name: "a possessive", text: "the Granite's lead", want: []word{{"the", false}, {"Granite", true}, {"s", false}, {"lead", false}}},
		{name: "capitals only are no name", text: "we use AWS and I", want: []word{{"we", false}, {"use", false}, {"AWS", false}, {"and", false}, {"I", false}}},
		{name: "letters of any script", text: "in São Paulo", want: []word{{"in", false}, {"São", true}, {"Paulo", true}}},
		{name: "nothing", text: " 42 !? "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []word
			for w, name := range Words(tc.text) {
				got = append(got, word{w, name})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Stopping early stops.
	n := 0
	for range Words("a b c d") {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("%d words after a break at 2", n)
	}
}

// FuzzWords: any text, valid UTF-8 or not, yields words that are substrings
// of it, without a panic.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"Bob lives in Berlin.", "\xffA\xfe", "São", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for w := range Words(text) {
			if w == "" || len(w) > len(text) {
				t.Fatalf("word %q of %q", w, text)
			}
		}
	})
}
