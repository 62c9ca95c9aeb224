package textnorm

import (
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"case and punctuation", "I'm at ACME, Inc.!", "im at acme inc"},
		{"curly apostrophe", "I don\u2019t work at Acme", "i dont work at acme"},
		{"whitespace collapsed", "  dark\t\tmode \n please  ", "dark mode please"},
		{"hyphen separates", "dark-mode", "dark mode"},
		{"NFKC folds compatibility forms", "\uff21\uff43\uff4d\uff45 \u2460", "acme 1"},
		{"ligature", "\ufb01ne", "fine"},
		{"accents kept", "Caf\u00e9 Cr\u00e8me", "caf\u00e9 cr\u00e8me"},
		{"decomposed accent composes", "Cafe\u0301", "caf\u00e9"},
		{"numbers kept", "Postgres 15.2", "postgres 15 2"},
		{"symbols stripped", "I <3 $5 coffee #1", "i 3 5 coffee 1"},
		{"invalid UTF-8 is a separator", "acme\xffcorp", "acme corp"},
		{"only punctuation", "...!?", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"I'm at ACME, Inc.", "Don't  -- 42 x_Y\t~'", "\xf3\u00ba", "\u13ee\uabbe", "Caf\u00e9\u0301", "\ufb01 \u2460", "\u0130stanbul", "\u1e9e\u00df"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q is not valid UTF-8", s, n)
		}
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, again)
		}
		// The ASCII path is the general one's answer, in one pass.
		if fast, ok := normalizeASCII(s); ok {
			if slow := normalizeOnce(s); fast != slow {
				t.Fatalf("ASCII path %q, general path %q, for %q", fast, slow, s)
			}
		}
	})
}

// BenchmarkNormalize: every memory written is normalised (its text hash,
// dedup's heuristics) and so is every text the local embedder embeds.
func BenchmarkNormalize(b *testing.B) {
	const text = "I'm moving to Lisbon in March — Dana’s team (ACME, Inc.) starts there on the 3rd!"
	for b.Loop() {
		_ = Normalize(text)
	}
}
