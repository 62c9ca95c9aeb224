package dedup

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Verdict is the judge's answer about two memory texts. The zero value is no
// verdict. It is memrank's one verdict type: the read path (rank) folds by
// it too.
type Verdict uint8

// Verdicts.
const (
	VerdictUnknown     Verdict = iota // no verdict: the judge was not asked or gave no usable answer
	VerdictSame                       // the same fact
	VerdictDifferent                  // different facts, both can be true
	VerdictContradicts                // claims about the same thing that cannot both be true
)

// String returns the verdict's wire name: "same", "different",
// "contradicts", or "" for VerdictUnknown and values out of range.
func (v Verdict) String() string {
	switch v {
	case VerdictSame:
		return "same"
	case VerdictDifferent:
		return "different"
	case VerdictContradicts:
		return "contradicts"
	}
	return ""
}

// valid reports whether v is one of the three verdicts.
func (v Verdict) valid() bool { return v >= VerdictSame && v <= VerdictContradicts }

// ParseVerdict is the inverse of String. It is exact (no case folding, no
// trimming): a judge that cannot spell its verdict gave none.
func ParseVerdict(s string) (Verdict, bool) {
	switch s {
	case "same":
		return VerdictSame, true
	case "different":
		return VerdictDifferent, true
	case "contradicts":
		return VerdictContradicts, true
	}
	return VerdictUnknown, false
}

// Judgement is one answer of a judge.
type Judgement struct {
	Verdict Verdict
	// Reason is the judge's one-line explanation. It is model output: show
	// it, never act on it.
	Reason string
}

// Judge compares a stored memory's text with a candidate's. *LLMJudge
// satisfies it; Judging calls it.
type Judge interface {
	Judge(ctx context.Context, existing, candidate string) (Judgement, error)
}

var _ Judge = (*LLMJudge)(nil)

// verdictKey is an unordered pair of text hashes, stored in order so that
// (a, b) and (b, a) are one key: every verdict is symmetric.
type verdictKey struct{ lo, hi string }

// verdictPairKey returns the key of two text hashes; ok is false when either is
// empty, since an empty hash identifies no text.
func verdictPairKey(hashA, hashB string) (k verdictKey, ok bool) {
	if hashA == "" || hashB == "" {
		return verdictKey{}, false
	}
	if hashB < hashA {
		hashA, hashB = hashB, hashA
	}
	return verdictKey{lo: hashA, hi: hashB}, true
}

// string names the key for singleflight. Text hashes are hex, so the NUL
// separator keeps distinct pairs apart.
func (k verdictKey) string() string { return k.lo + "\x00" + k.hi }

// VerdictCache holds the judge's verdicts keyed by the unordered pair of
// the two texts' hashes, least recently used first out. It is safe for
// concurrent use, and every method works on a nil *VerdictCache (which
// holds nothing). Only real verdicts are stored: never VerdictUnknown.
type VerdictCache struct {
	lru *lru.Cache[verdictKey, Verdict]
}

// NewVerdictCache returns a cache of at most size verdicts; size <= 0
// returns a cache that holds nothing.
func NewVerdictCache(size int) *VerdictCache {
	if size <= 0 {
		return &VerdictCache{}
	}
	c, err := lru.New[verdictKey, Verdict](size)
	if err != nil { // only for size <= 0, excluded above
		return &VerdictCache{}
	}
	return &VerdictCache{lru: c}
}

// Get returns the verdict cached for the two hashes, in either order.
func (c *VerdictCache) Get(hashA, hashB string) (Verdict, bool) {
	if c == nil || c.lru == nil {
		return VerdictUnknown, false
	}
	k, ok := verdictPairKey(hashA, hashB)
	if !ok {
		return VerdictUnknown, false
	}
	return c.lru.Get(k)
}

// Put caches v for the two hashes. VerdictUnknown, out-of-range values and
// empty hashes are ignored.
func (c *VerdictCache) Put(hashA, hashB string, v Verdict) {
	if c == nil || c.lru == nil || !v.valid() {
		return
	}
	if k, ok := verdictPairKey(hashA, hashB); ok {
		c.lru.Add(k, v)
	}
}

// Len is the number of verdicts held.
func (c *VerdictCache) Len() int {
	if c == nil || c.lru == nil {
		return 0
	}
	return c.lru.Len()
}
