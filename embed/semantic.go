package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/memrank/memrank/embed/wordvec"
	"github.com/memrank/memrank/textnorm"
)

// SemanticModelVersion is the version of Semantic's method and data, part of
// its model name. Any change that moves a vector (the word table, weights,
// negation words, the lexical part) must bump it.
const SemanticModelVersion = "memrank-local-sem-v1"

// MinSemanticDimensions is the smallest dimension NewSemantic accepts: the
// word-vector part, the polarity component and at least 64 components for
// the lexical part.
const MinSemanticDimensions = semLexStart + 64

// Semantic is the default local embedder: offline and deterministic like
// Local, but it knows that "resides in Porto" and "lives in Porto" say the
// same thing. A vector has three parts, each normalised and weighted:
//
//   - components 0-99, meaning: the average of the text's word vectors from
//     the bundled GloVe table (package wordvec), each weighted by smooth
//     inverse frequency, a/(a+p(w)) with p(w) estimated from the word's
//     frequency rank by Zipf's law, so that frequent words count little;
//     then the common component (the expected weighted word vector) is
//     removed (Arora, Liang and Ma 2017, "A simple but tough-to-beat
//     baseline for sentence embeddings");
//   - component 100, polarity: +1 for an affirmative text, -1 when it is
//     negated (an odd number of negation words: not, never, no, "doesn't",
//     ...), so "likes coffee" and "does not like coffee" stay apart although
//     their words mean alike;
//   - the remaining components, surface: Local's hashed words, word pairs and
//     character n-grams, so a word matches itself exactly.
//
// In the meaning part, function words ("the", "does", "where") count a
// quarter; words the table lacks, numbers ("3.12", "9:30") and number words
// ("three" reads as "3") get a pseudo-random direction of their own, so "2
// kids" and "3 kids" differ in meaning; a word capitalised inside a sentence
// is read half that way and half through its word vector, since word
// vectors make names of one kind alike. Possessive "'s" is dropped and words
// the table lacks are looked up again without a plural "s". The word table
// is parsed on first use. Semantic is safe for concurrent use.
type Semantic struct {
	dims  int
	model string
	lex   *Local
	p     semParams
	init  func() (*semState, error)
}

var _ Embedder = (*Semantic)(nil)

// semParams are the method's constants, fixed for a model version (chosen
// on the fit split of examples/pairs and the demo's questions; see
// docs/embedders.md).
type semParams struct {
	a        float64 // smooth inverse frequency constant
	stop     float64 // factor on a function word's weight ("the", "does", "where")
	unknown  float64 // factor on an unknown word's weight (names, rare words)
	name     float64 // share of a name's weight read as an unknown word, the rest from its word vector
	meaning  float64 // share of the squared norm: word-vector part
	polarity float64 // share: polarity component
	surface  float64 // share: lexical part
}

var semV1 = semParams{a: 1e-3, stop: 0.25, unknown: 0.5, name: 0.5, meaning: 0.55, polarity: 0.10, surface: 0.35}

// The layout of a Semantic vector.
const (
	semMeaningDims = 100
	semPolarity    = semMeaningDims
	semLexStart    = semMeaningDims + 1
)

// semState is what the first Embed loads: the word table, each word's
// weight, and the common component.
type semState struct {
	tab     *wordvec.Table
	weight  []float64 // by rank
	common  []float64 // unit vector
	unknown float64   // the length and weight of an unknown word's vector
}

// addUnknown adds the vector of a word the table lacks (a number, a name, a
// rare word): a pseudo-random direction drawn from the word's hash, as long
// as a typical word vector and weighted as the rarest word of the table.
// Equal words get equal directions; different ones are nearly orthogonal,
// so "2 kids" and "3 kids" differ in meaning, not only on the surface.
func (st *semState) addUnknown(meaning []float64, w string, weight float64) {
	x := xxh3.HashString(w)
	var sq float64
	vals := [semMeaningDims]float64{}
	for i := range vals {
		x += 0x9e3779b97f4a7c15 // splitmix64
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		vals[i] = float64(int64(z)) / (1 << 63) // uniform in [-1, 1)
		sq += vals[i] * vals[i]
	}
	f := weight * st.unknown / math.Sqrt(sq)
	for i, v := range vals {
		meaning[i] += f * v
	}
}

// NewSemantic returns the semantic local embedder producing vectors of dims
// components (MinSemanticDimensions to MaxDimensions).
func NewSemantic(dims int) (*Semantic, error) {
	p := semV1
	if dims < MinSemanticDimensions || dims > MaxDimensions {
		return nil, fmt.Errorf("%w: %d (the semantic embedder needs %d to %d)", ErrDimensions, dims, MinSemanticDimensions, MaxDimensions)
	}
	lex, err := NewLocal(dims - semLexStart)
	if err != nil {
		return nil, err
	}
	s := &Semantic{dims: dims, model: fmt.Sprintf("%s:%d", SemanticModelVersion, dims), lex: lex, p: p}
	s.init = sync.OnceValues(func() (*semState, error) { return loadSemState(p.a) })
	return s, nil
}

// zipf is the estimated probability of the word at rank r (0-based) in
// English text: Zipf's law with exponent 1, scaled so that "the" is about
// 7 %, as in large corpora.
func zipf(r int) float64 { return 0.07 / float64(r+1) }

func loadSemState(a float64) (*semState, error) {
	tab, err := wordvec.Bundled()
	if err != nil {
		return nil, fmt.Errorf("embed: load word vectors: %w", err)
	}
	st := &semState{tab: tab, weight: make([]float64, tab.Len()), common: make([]float64, tab.Dimensions())}
	for r := range st.weight {
		p := zipf(r)
		st.weight[r] = a / (a + p)
		tab.AddTo(st.common, r, p*st.weight[r])
	}
	unit(st.common)
	// An unknown word weighs like the table's rarest, at the mean length.
	var total float64
	v := make([]float64, tab.Dimensions())
	for r := range tab.Len() {
		clear(v)
		tab.AddTo(v, r, 1)
		total += unit(v)
	}
	st.unknown = total / float64(tab.Len()) * st.weight[tab.Len()-1]
	return st, nil
}

// unit scales v to length 1 and returns its former length (0 leaves it).
func unit(v []float64) float64 {
	var sq float64
	for _, x := range v {
		sq += x * x
	}
	n := math.Sqrt(sq)
	if n > 0 {
		for i := range v {
			v[i] /= n
		}
	}
	return n
}

// Dimensions is the length of every vector.
func (s *Semantic) Dimensions() int { return s.dims }

// Model is "memrank-local-sem-v1:<dims>".
func (s *Semantic) Model() string { return s.model }

// Embed returns one vector per text. It stops with ctx's error when ctx is
// done before every text has been embedded.
func (s *Semantic) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	st, err := s.init()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	meaning := make([]float64, semMeaningDims)
	for i, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = make([]float32, s.dims)
		s.embed(st, meaning, text, out[i])
	}
	return out, nil
}

func (s *Semantic) embed(st *semState, meaning []float64, text string, dst []float32) {
	text = dropPossessives(text)
	clear(meaning)
	negations := 0
	words, numbers := splitNumbers(text)
	for _, n := range numbers {
		st.addUnknown(meaning, n, numberWeight)
	}
	names := properNames(words)
	for w := range strings.FieldsSeq(textnorm.Normalize(words)) {
		if base, ok := textnorm.Uncontract(w); ok {
			negations++
			w = base
		} else if textnorm.IsNegation(w) {
			negations++
			continue
		}
		_, name := names[w]
		s.addWord(st, meaning, w, name)
	}
	var proj float64
	for i, c := range st.common {
		proj += meaning[i] * c
	}
	for i, c := range st.common {
		meaning[i] -= proj * c
	}
	hasMeaning := unit(meaning) > 0

	// The surface part, written straight into its place.
	s.lex.EmbedOne(text, dst[semLexStart:])
	m, su := math.Sqrt(s.p.meaning), math.Sqrt(s.p.surface)
	if !hasMeaning {
		m = 0
	}
	pol := math.Sqrt(s.p.polarity)
	if negations%2 == 1 {
		pol = -pol
	}
	norm := math.Sqrt(m*m + pol*pol + su*su)
	for i, v := range meaning {
		dst[i] = float32(m * v / norm)
	}
	dst[semPolarity] = float32(pol / norm)
	for i := semLexStart; i < s.dims; i++ {
		dst[i] = float32(su * float64(dst[i]) / norm)
	}
}

// properNames are the words of text written with a capital inside a
// sentence ("Lisbon", "Priya", "Acme"), normalised. Word vectors make names
// of one kind alike ("Lisbon" near "Porto", every first name near every
// other), which would make "where does Dana live" meet "Her sister Leah
// lives in Toronto"; a name is read partly as an unknown word, equal only to
// itself. The first word of a sentence cannot be told apart and is left as
// it is.
func properNames(text string) map[string]struct{} {
	var names map[string]struct{}
	for w, name := range textnorm.Words(text) {
		if !name {
			continue
		}
		if names == nil {
			names = map[string]struct{}{}
		}
		names[textnorm.Normalize(w)] = struct{}{}
	}
	return names
}

// addWord adds one word's vector to the meaning part: a number word as its
// digits, a word the table lacks as a word of its own, a function word at a
// quarter of its weight. A name the table knows ("Dana", "Lisbon") is read
// half through its word vector and half as a word of its own: "Dana" at the
// start of a sentence, which cannot be told from an ordinary word, still
// meets "Dana" inside one, and "Leah" is no longer as close to "Dana" as
// word vectors put every first name to every other.
func (s *Semantic) addWord(st *semState, meaning []float64, w string, name bool) {
	if n, ok := textnorm.NumberWord(w); ok {
		st.addUnknown(meaning, n, numberWeight)
		return
	}
	r, ok := st.tab.Rank(w)
	if !ok {
		r, ok = st.tab.Rank(stem(w))
	}
	switch {
	case !ok:
		st.addUnknown(meaning, w, s.p.unknown)
	case isStopWord(w):
		st.tab.AddTo(meaning, r, st.weight[r]*s.p.stop)
	case name:
		st.addUnknown(meaning, w, s.p.unknown*s.p.name)
		st.tab.AddTo(meaning, r, st.weight[r]*(1-s.p.name))
	default:
		st.tab.AddTo(meaning, r, st.weight[r])
	}
}

// numberWeight scales a number's own direction against the rarest word of
// the table (an unknown word weighs semParams.unknown of it, so a number
// counts four times an unknown word): a fact's number is usually what a
// contradiction changes.
const numberWeight = 2

// splitNumbers takes the numbers out of text: every run of digits, with the
// separators inside it ("3.12", "9:30", "2025-06-01", "1,200") and the
// letters written on after it ("3rd"), lower-cased, as one token; the rest of the text is returned with a space in their place.
func splitNumbers(text string) (rest string, numbers []string) {
	if !strings.ContainsAny(text, "0123456789") {
		return text, nil
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if !isDigit(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && (isDigit(text[j]) || (strings.IndexByte(".,:/-", text[j]) >= 0 && j+1 < len(text) && isDigit(text[j+1]))) {
			j++
		}
		// A unit or suffix written on ("3rd", "16gb", "2x") belongs to it:
		// "3rd" meets "third", which reads as "3rd".
		for j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z') {
			j++
		}
		numbers = append(numbers, strings.ToLower(text[i:j]))
		b.WriteByte(' ')
		i = j
	}
	return b.String(), numbers
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// dropPossessives removes a possessive "'s" ("Dana's" becomes "Dana"), which
// Normalize would otherwise glue on ("danas").
func dropPossessives(text string) string {
	if !strings.ContainsAny(text, "'’ʼ") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if (r == '\'' || r == '’' || r == 'ʼ') && i+n < len(text) && (text[i+n] == 's' || text[i+n] == 'S') {
			next, _ := utf8.DecodeRuneInString(text[i+n+1:])
			if i+n+1 == len(text) || !unicode.IsLetter(next) {
				i += n + 1
				continue
			}
		}
		b.WriteString(text[i : i+n])
		i += n
	}
	return b.String()
}
