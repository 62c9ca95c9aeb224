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
	return !slices.Equal(sa.numbers, sb.numbers) || swapsOneWord(a, b)
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
func swapsOneWord(a, b string) bool {
	wa, wb := strings.Fields(textnorm.Normalize(a)), strings.Fields(textnorm.Normalize(b))
	if len(wa) != len(wb) || len(wa) < 2 {
		return false
	}
	swapped := -1
	for i := range wa {
		if wa[i] == wb[i] || strings.TrimSuffix(wa[i], "s") == strings.TrimSuffix(wb[i], "s") {
			continue
		}
		if swapped >= 0 {
			return false
		}
		swapped = i
	}
	return swapped >= 0 && !functionWords[wa[swapped]] && !functionWords[wb[swapped]]
}

// functionWords are words whose swap leaves the claim as it was: pronouns,
// articles, auxiliaries.
var functionWords = map[string]bool{
	"i": true, "me": true, "my": true, "you": true, "your": true, "he": true, "him": true, "his": true,
	"she": true, "her": true, "hers": true, "it": true, "its": true, "we": true, "us": true, "our": true,
	"they": true, "them": true, "their": true, "a": true, "an": true, "the": true, "this": true, "that": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "has": true, "have": true, "had": true,
	"do": true, "does": true, "did": true, "will": true, "would": true, "can": true, "could": true,
	"user": true, "users": true, "im": true, "shes": true, "hes": true,
}
