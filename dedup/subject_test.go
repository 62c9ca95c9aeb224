package dedup_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memrank/memrank/dedup"
)

func TestSplitSpeaker(t *testing.T) {
	tests := []struct {
		name, text, speaker, body string
	}{
		{name: "a name", text: "Caroline: I went to a support group yesterday", speaker: "Caroline", body: "I went to a support group yesterday"},
		{name: "two words", text: "Mary Ann: That's awesome!", speaker: "Mary Ann", body: "That's awesome!"},
		{name: "no prefix", text: "Dana uses Neovim", body: "Dana uses Neovim"},
		{name: "a label is no speaker", text: "Note: Dana uses Neovim", body: "Note: Dana uses Neovim"},
		{name: "lower case is no name", text: "fyi: the build is green", body: "fyi: the build is green"},
		{name: "a time is no name", text: "Meeting at 10:30 today", body: "Meeting at 10:30 today"},
		{name: "no space after the colon", text: "Dana:Neovim", body: "Dana:Neovim"},
		{name: "a sentence before the colon", text: "The plan for the whole team: ship it", body: "The plan for the whole team: ship it"},
		{name: "nothing after", text: "Dana:", body: "Dana:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, body := dedup.SplitSpeaker(tc.text)
			if sp != tc.speaker || body != tc.body {
				t.Errorf("SplitSpeaker(%q) = %q, %q; want %q, %q", tc.text, sp, body, tc.speaker, tc.body)
			}
		})
	}
}

func TestReadClaimSubjects(t *testing.T) {
	tests := []struct {
		name, text, speaker string
		entities            []string
		wantSpeaker         string
		wantSubjects        []string
	}{
		{name: "first person: the speaker", text: "I moved to Berlin", speaker: "Caroline", wantSpeaker: "caroline", wantSubjects: []string{"caroline"}},
		{name: "first person named by the text", text: "Melanie: my kids love the beach", wantSpeaker: "melanie", wantSubjects: []string{"melanie"}},
		{name: "the field wins over the text", text: "Melanie: I paint", speaker: "Mel", wantSpeaker: "mel", wantSubjects: []string{"mel"}},
		{name: "third person: the entities", text: "Bob moved to Berlin", speaker: "Ann", entities: []string{"Bob", " Berlin "},
			wantSpeaker: "ann", wantSubjects: []string{"bob", "berlin"}},
		{name: "no entities: the speaker", text: "That's awesome!", speaker: "Caroline", wantSpeaker: "caroline", wantSubjects: []string{"caroline"}},
		{name: "first person of no known speaker: the entities", text: "I work at Acme", entities: []string{"Acme"}, wantSubjects: []string{"acme"}},
		{name: "nothing known", text: "Uses Neovim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dedup.ReadClaim(tc.text, tc.speaker, tc.entities)
			if c.Speaker() != tc.wantSpeaker {
				t.Errorf("speaker %q, want %q", c.Speaker(), tc.wantSpeaker)
			}
			if diff := cmp.Diff(tc.wantSubjects, c.Subjects(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("subjects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClaimFolds: the fold rules on pairs of texts of unknown speakers
// (docs/write-path.md, "Who said what").
func TestClaimFolds(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		folds bool
	}{
		{name: "the same words", a: "Dana uses Neovim", b: "dana uses neovim.", folds: true},
		{name: "a paraphrase", a: "Neovim is the editor Dana uses", b: "Dana uses Neovim", folds: true},
		{name: "a possessive is its name", a: "Project Granite's lead is Ines Duarte", b: "Ines Duarte leads Project Granite", folds: true},
		{name: "another city", a: "Bob lives in Munich", b: "Bob lives in Berlin"},
		{name: "another person", a: "Her manager is Tom", b: "Her manager is Priya"},
		{name: "a negation", a: "I don't work at Acme", b: "I work at Acme"},
		{name: "negations agree by count", a: "I do not eat meat", b: "I don't eat meat", folds: true},
		{name: "another number", a: "Has three kids", b: "Has 2 kids"},
		{name: "the same number in words", a: "Has two kids", b: "Has 2 kids", folds: true},
		{name: "one word swapped", a: "Uses tabs", b: "Uses spaces"},
		{name: "a name more", a: "Dana uses Neovim at Acme", b: "Dana uses Neovim"},
		{name: "a correction with a new name", a: "I work at Initech now, not Acme", b: "I don't work at Acme"},
		{name: "two speakers", a: "Caroline: I love it", b: "Melanie: I love it"},
		{name: "an unknown speaker may be any", a: "Caroline: I love it", b: "I love it", folds: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := dedup.ReadClaim(tc.a, "", nil), dedup.ReadClaim(tc.b, "", nil)
			if got := a.Folds(b); got != tc.folds {
				t.Errorf("Folds = %v, want %v", got, tc.folds)
			}
			if got := b.Folds(a); got != tc.folds {
				t.Errorf("Folds is not symmetric: %v the other way", got)
			}
		})
	}
}

// FuzzReadClaim: any text reads without a panic; a speaker prefix split
// off is a prefix of the text, and the claim folds with itself.
func FuzzReadClaim(f *testing.F) {
	for _, s := range []string{"Caroline: I moved to Berlin", "Dana uses Neovim", "Note: x", ":", "A: ", "Ä: ÿ", "I", "\xff: a"} {
		f.Add(s, "")
	}
	f.Add("That's awesome!", "Caroline")
	f.Fuzz(func(t *testing.T, text, speaker string) {
		sp, body := dedup.SplitSpeaker(text)
		if sp != "" && (!strings.HasPrefix(text, sp) || !strings.HasSuffix(text, body) || len(body) >= len(text)) {
			t.Fatalf("SplitSpeaker(%q) = %q, %q", text, sp, body)
		}
		if sp == "" && body != text {
			t.Fatalf("no speaker, but the body %q is not the text %q", body, text)
		}
		c := dedup.ReadClaim(text, speaker, []string{speaker})
		if utf8.ValidString(text) && !c.Folds(c) {
			t.Fatalf("%q does not fold with itself", text)
		}
	})
}
