package memory

import (
	"testing"

	"github.com/memrank/memrank/textnorm"
)

func TestTextHash(t *testing.T) {
	a := TextHash("I'm at ACME, Inc.")
	if a != TextHash("im at acme inc") {
		t.Error("texts that normalise alike must hash alike")
	}
	if a == TextHash("im at acme corp") {
		t.Error("different texts hashed alike")
	}
	if len(a) != 32 {
		t.Errorf("hash %q: want 32 hex characters", a)
	}
	// The hash is persisted in payloads: it must never change across builds.
	if got, want := TextHash("I prefer dark mode"), "a3103f04cc49fdcfc5b28323d8663c3e"; got != want {
		t.Errorf("TextHash(%q) = %s, want %s (stored hashes would stop matching)", "I prefer dark mode", got, want)
	}
}

// FuzzTextHash: a text and its normal form hash alike.
func FuzzTextHash(f *testing.F) {
	for _, s := range []string{"I'm at ACME, Inc.", "\xf3\u00ba", "\u13ee\uabbe", "Caf\u00e9\u0301", "\ufb01 \u2460", "\u0130stanbul", "\u1e9e\u00df"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if TextHash(s) != TextHash(textnorm.Normalize(s)) {
			t.Fatalf("TextHash differs between %q and its normal form", s)
		}
	})
}
