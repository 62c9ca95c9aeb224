// Package textnorm normalises text to the surface form that memrank
// compares memories by: the memory's text_hash (tier-1 dedup), dedup's
// heuristics and the local embedder's features all read text through
// Normalize, so they agree on what counts as the same words. It is a leaf:
// it imports nothing of memrank, so embed can use it and still depend on
// nothing else in memrank.
package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize is the surface form used for tier-1 dedup (docs/write-path.md):
// NFKC, lower case, punctuation and symbols stripped, white space collapsed.
// "I'm at ACME, Inc." and "im at acme inc" normalise alike.
//
// It is idempotent: Normalize(Normalize(s)) == Normalize(s) for every s,
// which the fuzz target checks. cases.Fold is not used because it is not
// idempotent for some scripts (golang/go#46101); invalid UTF-8 is replaced
// first because it breaks NFKC's idempotence next to compatibility characters.
func Normalize(s string) string {
	if out, ok := normalizeASCII(s); ok {
		return out
	}
	out := normalizeOnce(s)
	// Lower-casing can produce characters that NFKC composes again, and vice
	// versa; a second pass reaches the fixed point in every case the fuzzer has
	// found, and the loop bound keeps a pathological input from spinning.
	for i := 0; i < 4; i++ {
		next := normalizeOnce(out)
		if next == out {
			break
		}
		out = next
	}
	return out
}

func normalizeOnce(s string) string {
	s = strings.ToValidUTF8(s, " ")
	s = norm.NFKC.String(s)
	s = strings.ToLower(s)
	s = norm.NFKC.String(s)

	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case isApostrophe(r):
			// Dropped, not turned into a separator: "don't" and "dont" match.
			continue
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// normalizeASCII is Normalize of an ASCII text, in one pass: NFKC leaves
// ASCII as it is, so only lower case, the apostrophes and the separators
// remain, and the result is a fixed point at once. Most memories are ASCII,
// and the claim check normalises every word it reads. ok is false for a
// text with any other byte.
func normalizeASCII(s string) (out string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			continue
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
	}
	return b.String(), true
}

func isApostrophe(r rune) bool {
	switch r {
	case '\'', '\u2019', '\u2018', '\u02bc', '\uff07':
		return true
	}
	return false
}
