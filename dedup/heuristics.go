package dedup

import (
	"slices"
	"strings"

	"github.com/memrank/memrank/textnorm"
)

// signals are the words of a text that the similarity threshold must not be
// trusted across: its negations and its numbers.
type signals struct {
	negations []string
	numbers   []string
}

// signalsOf reads the signals of a text's normalised words.
func signalsOf(words []string) signals {
	var s signals
	for _, w := range words {
		if d, ok := textnorm.NumberWord(w); ok {
			w = d // "three" and "3" are the same number
		}
		switch {
		case textnorm.IsNegation(w):
			s.negations = append(s.negations, w)
		case hasDigit(w):
			s.numbers = append(s.numbers, w)
		}
	}
	slices.Sort(s.numbers)
	return s
}

func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return true
		}
	}
	return false
}

// differInClaim reports whether two texts of unknown speakers may not fold
// on similarity alone (Claim.Folds): a negation on one side only, another
// number, swapped names or one swapped word, or different subjects. Such a
// pair goes to the judge, or stays two memories.
func differInClaim(a, b string) bool {
	return !ReadClaim(a, "", nil).Folds(ReadClaim(b, "", nil))
}

// swapsOneWord reports whether b is a with exactly one word replaced by
// another that is not a function word ("Her manager is Priya" / "... is
// Tom"; "Collects stamps" / "Collects coins"; "Likes cats" / "Dislikes
// cats"): the other words pin the attribute, the swapped one is its value,
// and embeddings put such pairs as close as paraphrases, since the two
// values are words of one kind. A synonym swapped for another ("Prefers
// tea" / "Likes tea") goes to the judge too: without one, it stays a memory
// of its own, which costs a duplicate, never a wrong merge. Swapped
// pronouns ("Dana" / "She") and plural or verb "s" are not swaps.
// wa and wb are the texts' normalised words, in order.
func swapsOneWord(wa, wb []string) bool {
	if len(wa) != len(wb) || len(wa) < 2 {
		return false
	}
	swapped := -1
	for i := range wa {
		if sameWord(wa[i], wb[i]) {
			continue
		}
		if swapped >= 0 {
			return false
		}
		swapped = i
	}
	return swapped >= 0 && !functionWords[wa[swapped]] && !functionWords[wb[swapped]]
}

// sameWord: equal, up to a plural or verb "s", or the same number written
// in words and in digits ("three" / "3").
func sameWord(a, b string) bool {
	if d, ok := textnorm.NumberWord(a); ok {
		a = d
	}
	if d, ok := textnorm.NumberWord(b); ok {
		b = d
	}
	return a == b || strings.TrimSuffix(a, "s") == strings.TrimSuffix(b, "s")
}

// functionWords are words whose swap leaves the claim as it was: pronouns,
// articles, auxiliaries, verbs that report a claim.
var functionWords = map[string]bool{
	"i": true, "me": true, "my": true, "you": true, "your": true, "he": true, "him": true, "his": true,
	"she": true, "her": true, "hers": true, "it": true, "its": true, "we": true, "us": true, "our": true,
	"they": true, "them": true, "their": true, "a": true, "an": true, "the": true, "this": true, "that": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "has": true, "have": true, "had": true,
	"do": true, "does": true, "did": true, "will": true, "would": true, "can": true, "could": true,
	"user": true, "users": true, "im": true, "shes": true, "hes": true,
	// Verbs that report a claim leave its value as it was: "The user says
	// Grafana is easy to learn" / "The user thinks Grafana is easy to learn".
	"say": true, "says": true, "said": true, "think": true, "thinks": true, "thought": true,
	"believe": true, "believes": true, "feel": true, "feels": true, "mentioned": true,
}
