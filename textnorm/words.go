package textnorm

// The words below are read after Normalize, which lower-cases and drops
// apostrophes ("don't" is "dont"). The write path's claim check and the
// semantic embedder share them, so that both agree on what negates a claim
// and what a number is.

// negations negate what follows them, or end what they name ("quit
// smoking", "former manager").
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "nor": true, "neither": true, "none": true,
	"nobody": true, "nothing": true, "nowhere": true, "without": true, "cannot": true,
	"quit": true, "stopped": true, "former": true, "formerly": true, "ex": true,
}

// contractions are the "n't" forms, with the word they negate.
var contractions = map[string]string{
	"dont": "do", "doesnt": "does", "didnt": "did", "isnt": "is", "arent": "are", "wasnt": "was",
	"werent": "were", "cant": "can", "couldnt": "could", "wont": "will", "wouldnt": "would",
	"shouldnt": "should", "hasnt": "has", "havent": "have", "hadnt": "had", "aint": "is",
	"mustnt": "must", "neednt": "need", "mightnt": "might",
}

// numberWords are English number words with the digits they stand for:
// "three kids" and "3 kids" state the same number, "third" and "3rd" the
// same rank.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
	"fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
	"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
	"hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000", "dozen": "12",
	"half": "0.5", "once": "1x", "twice": "2x", "thrice": "3x",
	"first": "1st", "second": "2nd", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th",
	"seventh": "7th", "eighth": "8th", "ninth": "9th", "tenth": "10th",
}

// IsNegation reports whether the normalised word w negates a claim: "not",
// "never", "no", the "n't" forms ("doesnt"), and words that end what they
// name ("quit", "stopped", "former", "ex").
func IsNegation(w string) bool {
	_, contracted := contractions[w]
	return negations[w] || contracted
}

// Uncontract returns the word a normalised "n't" form negates ("doesnt" ->
// "does") and true, or w and false.
func Uncontract(w string) (string, bool) {
	if base, ok := contractions[w]; ok {
		return base, true
	}
	return w, false
}

// NumberWord returns the digits a normalised number word stands for
// ("three" -> "3", "third" -> "3rd", "twice" -> "2x") and true, or "" and
// false.
func NumberWord(w string) (string, bool) {
	d, ok := numberWords[w]
	return d, ok
}
