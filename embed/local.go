package embed

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/zeebo/xxh3"

	"github.com/memrank/memrank/textnorm"
)

// LocalModelVersion is the version of Local's feature set, part of its model
// name. Any change that moves a vector (features, weights, hashing, stop
// words) must bump it, so collections written with the old vectors are not
// silently queried with new ones.
const LocalModelVersion = "memrank-local-hash-v1"

// MaxDimensions is the largest dimension NewLocal accepts, Qdrant's own limit
// for a dense vector.
const MaxDimensions = 65536

// Local is a deterministic, offline embedder: feature hashing of the
// normalised text's word unigrams, word bigrams and character 3- to 5-grams
// into a signed vector of the configured dimension, L2-normalised.
//
// It is lexical, not semantic. Two texts are close when they share words,
// word pairs or pieces of words ("Dana uses Neovim" and "Neovim is what Dana
// uses" are close; "editor" and "editors" are close through their character
// n-grams), but synonyms and paraphrases without shared words are not
// ("car" and "automobile" are as far apart as any two unrelated words). It is
// meant for the demo, tests and text queries over collections written with it,
// not as a replacement for a neural model.
//
// How a text becomes a vector:
//   - textnorm.Normalize (NFKC, lower case, punctuation stripped, white space
//     collapsed), then split into words;
//   - features: every word, every pair of adjacent words (both after
//     stripping a plural or third-person "s", so "lives" matches "live"),
//     and the character 3-, 4- and 5-grams of each word as written, padded
//     with a space on both sides;
//   - each feature is hashed with a seeded XXH3 (one seed per feature kind, so
//     the word "the" and the trigram "the" differ); the hash picks a
//     component and a sign (signed hashing keeps collisions unbiased);
//   - a feature occurring tf times weighs 1 + ln(tf) (sublinear), times 0.25
//     for English function words ("the", "does", "what"...) and the character
//     n-grams of those words, so a question's grammar does not outweigh its
//     content words;
//   - each kind is normalised on its own and weighted so that words carry
//     half of the squared norm, bigrams 15 % and character n-grams 35 %; then
//     the whole vector is L2-normalised.
//
// A text with no letters or digits (the empty text, punctuation only)
// embeds to the fixed unit vector of a reserved feature: the same for all
// such texts, valid for every distance, and close to no real text.
//
// The cost is linear in the text's length. Local is safe for concurrent use.
type Local struct {
	dims  int
	model string
	pool  sync.Pool // *scratch
}

var _ Embedder = (*Local)(nil)

// NewLocal returns a local embedder producing vectors of dims components
// (1 to MaxDimensions).
func NewLocal(dims int) (*Local, error) {
	if dims < 1 || dims > MaxDimensions {
		return nil, fmt.Errorf("%w: %d (want 1 to %d)", ErrDimensions, dims, MaxDimensions)
	}
	l := &Local{dims: dims, model: fmt.Sprintf("%s:%d", LocalModelVersion, dims)}
	l.pool.New = func() any { return &scratch{acc: make([]float64, dims)} }
	return l, nil
}

// Dimensions is the length of every vector.
func (l *Local) Dimensions() int { return l.dims }

// Model is "memrank-local-hash-v1:<dims>".
func (l *Local) Model() string { return l.model }

// Embed returns one vector per text. It stops with ctx's error when ctx is
// done before every text has been embedded.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	s := l.pool.Get().(*scratch)
	defer l.pool.Put(s)
	for i, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = make([]float32, l.dims)
		l.embed(s, text, out[i])
	}
	return out, nil
}

// EmbedOne is Embed for a single text, without the context (it does no I/O
// and takes microseconds): the vector is written into dst when it has the
// right length, else into a new slice.
func (l *Local) EmbedOne(text string, dst []float32) []float32 {
	if len(dst) != l.dims {
		dst = make([]float32, l.dims)
	}
	s := l.pool.Get().(*scratch)
	l.embed(s, text, dst)
	l.pool.Put(s)
	return dst
}

// Feature kinds: each hashes with its own seed.
const (
	seedWord   uint64 = 0x6d656d72616e6b01 // "memrank" + kind
	seedBigram uint64 = 0x6d656d72616e6b02
	seedChar   uint64 = 0x6d656d72616e6b03
	seedEmpty  uint64 = 0x6d656d72616e6b04
)

// Shares of the squared norm per feature kind (before the final
// normalisation); their square roots scale each kind's unit vector.
var (
	scaleWord   = math.Sqrt(0.50)
	scaleBigram = math.Sqrt(0.15)
	scaleChar   = math.Sqrt(0.35)
)

// stopWeight is the weight of a function word's features.
const stopWeight = 0.25

const (
	minGram = 3
	maxGram = 5
)

type feature struct {
	h uint64
	w float64
}

type scratch struct {
	acc   []float64
	feats []feature
	buf   []byte
	offs  []int
}

func (l *Local) embed(s *scratch, text string, dst []float32) {
	clear(s.acc)
	norm := textnorm.Normalize(text)
	found := false

	// Words.
	s.feats = s.feats[:0]
	for w := range strings.FieldsSeq(norm) {
		s.feats = append(s.feats, feature{xxh3.HashStringSeed(stem(w), seedWord), wordWeight(w)})
	}
	found = l.addGroup(s, scaleWord) || found

	// Adjacent word pairs; a pair of function words counts as one.
	s.feats = s.feats[:0]
	prev, prevStop := "", false
	for w := range strings.FieldsSeq(norm) {
		stop := isStopWord(w)
		w = stem(w)
		if prev != "" {
			s.buf = append(append(append(s.buf[:0], prev...), ' '), w...)
			wt := 1.0
			if stop && prevStop {
				wt = stopWeight
			}
			s.feats = append(s.feats, feature{xxh3.HashSeed(s.buf, seedBigram), wt})
		}
		prev, prevStop = w, stop
	}
	found = l.addGroup(s, scaleBigram) || found

	// Character n-grams of each word, padded with a space on both sides so
	// that prefixes and suffixes are features of their own.
	s.feats = s.feats[:0]
	for w := range strings.FieldsSeq(norm) {
		wt := wordWeight(w)
		s.buf = append(append(append(s.buf[:0], ' '), w...), ' ')
		s.offs = s.offs[:0]
		for i := range string(s.buf) {
			s.offs = append(s.offs, i)
		}
		s.offs = append(s.offs, len(s.buf))
		runes := len(s.offs) - 1
		for n := minGram; n <= maxGram && n <= runes; n++ {
			for i := 0; i+n <= runes; i++ {
				s.feats = append(s.feats, feature{xxh3.HashSeed(s.buf[s.offs[i]:s.offs[i+n]], seedChar), wt})
			}
		}
	}
	found = l.addGroup(s, scaleChar) || found

	var sum float64
	if found {
		for _, v := range s.acc {
			sum += v * v
		}
	}
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		// No features, or (in theory) features that cancelled out exactly:
		// the reserved unit vector.
		clear(dst)
		i, sign := l.slot(xxh3.HashStringSeed("", seedEmpty))
		dst[i] = float32(sign)
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i, v := range s.acc {
		dst[i] = float32(v * inv)
	}
}

// addGroup adds one feature kind (s.feats) to the accumulator: repeated
// features are merged with sublinear term frequency, the kind is normalised
// to unit length and scaled. It reports whether the kind had any feature.
func (l *Local) addGroup(s *scratch, scale float64) bool {
	feats := s.feats
	if len(feats) == 0 {
		return false
	}
	slices.SortFunc(feats, func(a, b feature) int { return cmp.Compare(a.h, b.h) })
	// Merge runs in place: feats[k] becomes the k-th distinct feature with
	// its final weight. Equal hashes come from the same feature text (a
	// 64-bit collision aside), so every occurrence has the same weight.
	k := 0
	for i := 0; i < len(feats); {
		j := i + 1
		for j < len(feats) && feats[j].h == feats[i].h {
			j++
		}
		feats[k] = feature{feats[i].h, feats[i].w * (1 + math.Log(float64(j-i)))}
		k++
		i = j
	}
	var sq float64
	for _, f := range feats[:k] {
		sq += f.w * f.w
	}
	inv := scale / math.Sqrt(sq)
	for _, f := range feats[:k] {
		i, sign := l.slot(f.h)
		s.acc[i] += sign * f.w * inv
	}
	return true
}

// stem strips the English plural and third-person "s" (and "ies" to "y")
// from word features, so "lives" matches "live", "editors" "editor" and,
// since Normalize drops apostrophes, "dana's" ("danas") matches "dana".
// Character n-grams are taken from the word as written.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 3 && w[n-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

func wordWeight(w string) float64 {
	if isStopWord(w) {
		return stopWeight
	}
	return 1
}

// slot maps a feature hash to a component and a sign: the component from the
// hash's high bits (multiply-shift range reduction, no modulo bias), the sign
// from its lowest bit.
func (l *Local) slot(h uint64) (int, float64) {
	hi, _ := bits.Mul64(h, uint64(l.dims))
	if h&1 == 0 {
		return int(hi), 1
	}
	return int(hi), -1
}

// isStopWord reports an English function word (after Normalize, which drops
// apostrophes: "what's" is "whats").
func isStopWord(w string) bool {
	if len(w) > 7 {
		return false
	}
	_, ok := stopWords[w]
	return ok
}

var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an the and or but if so as of at by for from in into on onto to
		with about over under than then this that these those there here is are was were be been being am
		do does did doing done have has had having will would shall should can could may might must
		i me my mine myself you your yours he him his she her hers it its we us our ours they them their
		theirs what which who whom whose when where why how whats wheres whos hows im ive id youre
		theyre dont doesnt didnt isnt arent wasnt some any all each every just also very too`) {
		m[w] = struct{}{}
	}
	return m
}()
