// Package fold is the query-time duplicate folding of the read path (docs/read-path.md): candidates that state the same memory are gathered into one
// group led by the best of them. Package rank folds with it in its pipeline
// and times it on its own in Ranker.MeasureStages.
//
// Folding is leader clustering over candidates given best first: each
// candidate joins the first leader it duplicates, or becomes a leader. So a
// group's leader is by construction its best member, and duplicates never
// chain (A like B and B like C does not put C under A unless C is like A).
package fold

import (
	"sync/atomic"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/vecmath"
)

// Tier says how a candidate was found to duplicate its leader.
type Tier uint8

// Tiers, most certain first.
const (
	TierNone     Tier = iota // not folded
	TierTextHash             // same normalised text (tier 1)
	TierVector               // cosine >= the same-fact threshold (tier 2)
	TierJudge                // a cached judge verdict said "same" (tier 3)
)

var tierNames = [...]string{"", "text_hash", "vector", "judge_cache"}

// String is the tier's name in explanations ("" for TierNone).
func (t Tier) String() string {
	if int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "unknown"
}

// Item is one candidate as folding sees it.
type Item struct {
	// Hash is the tier-1 key (the text hash); "" means the candidate has no
	// text to compare and never folds by tier 1 or tier 3.
	Hash string
	// Vector is the candidate's dense vector for tier 2; nil means no vector
	// comparison. Vectors of different lengths are never compared.
	Vector []float32
	// InvNorm is 1/|Vector|, or 1 when vectors are known to be unit length
	// (Cosine collections, normalised by the store at insert).
	InvNorm float32
	// Text, Speaker and Entities are what the write path's claim rules read
	// (dedup.Claim): no tier folds two candidates whose subjects differ
	// (two people's "That's awesome!"), and similarity alone never folds a
	// claim into one that differs from it in a negation, a number, a name
	// or a swapped word ("Bob lives in Berlin" / "Bob lives in Munich"):
	// only a cached judge verdict may. The claim is read on first need, at
	// most once per item.
	Text     string
	Speaker  string
	Entities []string
	// Known, when set, holds the claim read of the same text, speaker and
	// entities before (the candidate cache's), or receives it once read.
	Known *atomic.Pointer[dedup.Claim]

	claim *dedup.Claim
}

// readClaim is the item's claim, read once.
func (it *Item) readClaim() *dedup.Claim {
	if it.claim != nil {
		return it.claim
	}
	if it.Known != nil {
		if c := it.Known.Load(); c != nil {
			it.claim = c
			return c
		}
	}
	c := dedup.ReadClaim(it.Text, it.Speaker, it.Entities)
	it.claim = &c
	if it.Known != nil {
		it.Known.Store(it.claim)
	}
	return it.claim
}

// Options are the thresholds and the verdict source.
type Options struct {
	Same  float32 // tier 2: cosine at or above this is the same memory
	Judge float32 // the judge band is [Judge, Same)
	// Lookup returns the cached verdict for two text hashes (false: none);
	// nil means there is no verdict cache at all. rank.VerdictCache's
	// Lookup, such as dedup's, is passed as it is.
	Lookup func(hashA, hashB string) (dedup.Verdict, bool)
}

// Judged counts, for one candidate, the pairs in the judge band it took part
// in and how many of them had a cached verdict.
type Judged struct {
	Band      int // pairs with a cosine in [Judge, Same)
	Consulted int // of those, pairs with a cached verdict
}

// Result is folding's answer, indexed like the items.
type Result struct {
	Leader []int32 // the leader's index, or -1 for a leader
	Tier   []Tier  // how the item folded (TierNone for leaders)
	Judged []Judged
	// Leaders lists the leaders' indexes, best first.
	Leaders []int32
}

func (r *Result) reset(n int) {
	r.Leader = grow(r.Leader, n)
	r.Tier = grow(r.Tier, n)
	r.Judged = grow(r.Judged, n)
	r.Leaders = r.Leaders[:0]
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// Cosine is the cosine similarity of two items' vectors, and false when
// they cannot be compared (a missing vector, or different lengths).
func Cosine(a, b *Item) (float32, bool) {
	if len(a.Vector) == 0 || len(a.Vector) != len(b.Vector) {
		return 0, false
	}
	return vecmath.Dot(a.Vector, b.Vector) * a.InvNorm * b.InvNorm, true
}

// Fold groups items, which must be ordered best first, into res (whose
// slices are reused).
func Fold(items []Item, opt Options, res *Result) {
	res.reset(len(items))
	for i := range items {
		it := &items[i]
		res.Leader[i] = -1
		for _, l := range res.Leaders {
			if tier, ok := same(it, &items[l], int32(i), l, opt, res); ok {
				res.Leader[i] = l
				res.Tier[i] = tier
				break
			}
		}
		if res.Leader[i] < 0 {
			res.Leaders = append(res.Leaders, int32(i))
		}
	}
}

// same decides whether item i duplicates leader l, counting judge-band pairs.
// A pair above the same-fact threshold whose claims differ is judged like
// one in the band: only a cached verdict folds it, as on the write path.
func same(it, lead *Item, i, l int32, opt Options, res *Result) (Tier, bool) {
	if it.Hash != "" && it.Hash == lead.Hash {
		return TierTextHash, it.readClaim().SameSubject(*lead.readClaim())
	}
	c, ok := Cosine(it, lead)
	if !ok || c < opt.Judge {
		return TierNone, false
	}
	a, b := it.readClaim(), lead.readClaim()
	if !a.SameSubject(*b) {
		return TierNone, false
	}
	if c >= opt.Same && !a.Differs(*b) {
		return TierVector, true
	}
	if it.Hash == "" || lead.Hash == "" {
		return TierNone, false
	}
	res.Judged[i].Band++
	res.Judged[l].Band++
	if opt.Lookup == nil {
		return TierNone, false
	}
	v, ok := opt.Lookup(it.Hash, lead.Hash)
	if !ok || v == dedup.VerdictUnknown {
		return TierNone, false
	}
	res.Judged[i].Consulted++
	res.Judged[l].Consulted++
	// Different and contradicting memories never fold.
	return TierJudge, v == dedup.VerdictSame
}
