package textnorm

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words yields each word of text (a run of letters, as written) and
// whether it reads as a proper name: written with a capital, with a
// lower-case letter after it, and not the first word of a sentence (after
// . ! ? : ; or a line break), which cannot be told from an ordinary
// capitalised word ("Drinks coffee"). The write path's claim check and the
// semantic embedder read names alike through it. An apostrophe ends a word:
// "Granite's" is "Granite" and "s", so a possessive is its name.
func Words(text string) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		start := true
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) {
				if strings.ContainsRune(".!?:;\n", r) {
					start = true
				}
				i += n
				continue
			}
			j, lower := i+n, false
			for j < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !unicode.IsLetter(r2) {
					break
				}
				lower = lower || unicode.IsLower(r2)
				j += n2
			}
			if !yield(text[i:j], !start && unicode.IsUpper(r) && lower) {
				return
			}
			start = false
			i = j
		}
	}
}
