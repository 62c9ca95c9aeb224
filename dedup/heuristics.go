package dedup

import (
	"slices"
	"strings"

	"github.com/memrank/memrank/textnorm"
)

// negations are the words (after textnorm.Normalize, which drops apostrophes)
// whose presence in one text of a pair and absence in the other can flip a
// claim while barely moving its embedding: "I work at Acme" / "I don't work
// at Acme" (seed 001's negation heuristic).
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "nor": true, "neither": true, "none": true,
	"nobody": true, "nothing": true, "nowhere": true, "without": true, "cannot": true,
	"dont": true, "doesnt": true, "didnt": true, "isnt": true, "arent": true, "wasnt": true,
	"werent": true, "wont": true, "cant": true, "couldnt": true, "shouldnt": true,
	"wouldnt": true, "hasnt": true, "havent": true, "hadnt": true, "mustnt": true,
	"neednt": true, "aint": true,
	"quit": true, "stopped": true, "former": true, "formerly": true, "ex": true,
}

// numberWords are spelled-out numbers, compared like digits: "two kids" and
// "three kids" are different claims.
var numberWords = map[string]bool{
	"zero": true, "one": true, "two": true, "three": true, "four": true, "five": true,
	"six": true, "seven": true, "eight": true, "nine": true, "ten": true, "eleven": true,
	"twelve": true, "thirteen": true, "fourteen": true, "fifteen": true, "sixteen": true,
	"seventeen": true, "eighteen": true, "nineteen": true, "twenty": true, "thirty": true,
	"forty": true, "fifty": true, "sixty": true, "seventy": true, "eighty": true,
	"ninety": true, "hundred": true, "thousand": true, "million": true, "billion": true,
	"first": true, "second": true, "third": true, "half": true, "dozen": true,
}

// signals are the words of a text that the similarity threshold must not be
// trusted across: its negations and its numbers.
type signals struct {
	negations []string
	numbers   []string
}

func signalsOf(text string) signals {
	var s signals
	for _, w := range strings.Fields(textnorm.Normalize(text)) {
		switch {
		case negations[w]:
			s.negations = append(s.negations, w)
		case numberWords[w] || hasDigit(w):
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

// differInClaim reports whether two texts differ in a negation or in a number
// (seed 001's heuristics). Such a pair is never merged on similarity alone:
// it goes to the judge. Negations compare by parity of count (so "don't"
// against "do not" still agree), numbers as sorted multisets.
func differInClaim(a, b string) bool {
	sa, sb := signalsOf(a), signalsOf(b)
	if len(sa.negations)%2 != len(sb.negations)%2 {
		return true
	}
	return !slices.Equal(sa.numbers, sb.numbers)
}
