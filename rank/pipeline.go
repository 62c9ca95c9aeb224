package rank

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/vecmath"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank/internal/candcache"
	"github.com/memrank/memrank/rank/internal/fold"
	"github.com/memrank/memrank/scoring"
)

// work holds one request's per-candidate state. Pooled: a read decodes
// into the same records request after request (memory.Codec.Decode reuses
// their slices), so nothing in it may outlive the request.
type work struct {
	// mem[i] is candidate i's decoded record: its cache entry's, shared and
	// read-only, or mems[i], decoded for this request.
	mem    []*memory.Memory
	mems   []memory.Memory
	ins    []scoring.Inputs
	bases  []float64
	scores []scoring.Score // Seq = the candidate's index in the upstream answer
	items  []fold.Item
	fres   fold.Result
	render []scoring.Score
	// inBand and decision are the relevance guard's verdicts, by candidate
	// index; countable says whether relevant results may be counted as
	// accessed (not for scores without a fixed scale).
	inBand    []bool
	decision  []GuardDecision
	countable bool
	// dropped are the candidates gate left out, by index, with why.
	dropped []droppedSeq
	preGate []int
	kept    []bool // by candidate index, after the gate
	// leaders and pos are dedup's, for a request that takes one set of
	// leaders (a grouped one takes one per group).
	leaders []leader
	pos     []int // by item index: the leader's index in leaders
	// byBase is refocus's copy of the kept scores, by base score.
	byBase []scoring.Score
	// unsup marks, by candidate index, the superseded memories a query as
	// of an earlier time takes back (unsupersede); empty otherwise.
	unsup []bool
	// claims are, by candidate index, the cache entries' claim slots (nil
	// for a candidate decoded for this request).
	claims []*atomic.Pointer[dedup.Claim]
}

// exclusion indexes exclusionReasons for candidate i (-1: a candidate):
// its record's, unless a query as of an earlier time took its
// supersession back.
func (w *work) exclusion(i int) int {
	if i < len(w.unsup) && w.unsup[i] {
		return -1
	}
	return exclusionReason(w.mem[i])
}

// archived says why candidate i is out of answers, "" when it is not (see
// exclusion).
func (w *work) archived(i int) string {
	if w.exclusion(i) < 0 {
		return ""
	}
	return w.mem[i].Exclusion()
}

type droppedSeq struct {
	seq    int
	reason string
}

// putWork returns w to the pool, without its pointers into cache entries:
// a pooled record must not keep an evicted entry alive.
func (r *Ranker) putWork(w *work) {
	clear(w.mem[:cap(w.mem)])
	clear(w.claims[:cap(w.claims)])
	clear(w.items[:cap(w.items)]) // their vectors and hashes may be an entry's
	r.pool.Put(w)
}

// resize returns s with length n, keeping the backing array (and so the
// records' reusable slices) when it is large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return append(s[:cap(s)], make([]T, n-cap(s))...)[:n]
	}
	return s[:n]
}

// ownCount is this replica's stored access total in candidate i's payload.
func (w *work) ownCount(i int, replica string) int64 {
	for _, c := range w.mem[i].AccessCounts {
		if c.Replica == replica {
			return c.Count
		}
	}
	return 0
}

// prepare decodes and scores every candidate (the decode stage). A
// candidate with a cache entry (entries, by index, may be nil) takes the
// entry's decoded record and inputs instead of decoding its payload again.
func (r *Ranker) prepare(ctx context.Context, w *work, points []*qdrant.ScoredPoint, entries []*candcache.Entry, p plan, now time.Time) {
	_, st := r.startStage(ctx, stageDecode)
	n := len(points)
	w.mem = resize(w.mem, n)
	w.mems = resize(w.mems, n)
	w.ins = resize(w.ins, n)
	w.bases = resize(w.bases, n)
	w.scores = resize(w.scores, n)
	w.claims = resize(w.claims, n)
	w.unsup = w.unsup[:0]
	problems := 0
	for i, pt := range points {
		w.claims[i] = nil
		if i < len(entries) && entries[i] != nil {
			w.mem[i], w.ins[i], w.claims[i] = &entries[i].Mem, entries[i].In, &entries[i].Claim
		} else {
			w.mem[i] = &w.mems[i]
			r.codec.DecodeRank(pt.GetPayload(), w.mem[i])
			w.ins[i] = r.codec.Inputs(w.mem[i])
		}
		m := w.mem[i]
		problems += len(m.Problems)
		w.ins[i].Seq = i
		if !p.det.Forced && !m.IsRecord() {
			// A point that is not a memory record, in a collection recognised
			// as memories (a mixed one): never gated and never written to,
			// whatever memory-like keys it has ({"source": "wiki/page.md"}).
			w.ins[i].Unscored = true
		}
		base := float64(pt.GetScore())
		if math.IsNaN(base) {
			base = 0
		}
		w.bases[i] = base // negative similarities keep their sign and order
		w.scores[i] = r.params.Evaluate(&w.ins[i], base, now)
	}
	if problems > 0 {
		r.metrics.problems.Add(ctx, int64(problems))
	}
	r.endStage(ctx, st, attrCandidatesIn.Int(n))
}

// Exclusion reasons, as metric attributes.
var exclusionReasons = [...]string{"superseded", "not_retrievable", "archived"}

// exclusionReason indexes exclusionReasons; -1: not excluded.
func exclusionReason(m *memory.Memory) int {
	switch {
	case m.SupersededBy != "":
		return 0
	case !m.Retrievable && m.Tier == scoring.TierArchived:
		return 2
	case !m.Retrievable:
		return 1
	}
	return -1
}

// gate drops excluded memories, then applies the retrieval gate with its
// fallbacks (the gate stage): when nothing passes, every candidate comes
// back flagged; when the best match is below the gate and nothing that
// passes is as relevant (within the guard's band of it), that one comes
// back flagged. It returns the kept scores in candidate order.
func (r *Ranker) gate(ctx context.Context, span trace.Span, w *work, points []*qdrant.ScoredPoint, p plan) []scoring.Score {
	gctx, st := r.startStage(ctx, stageGate)
	kept := w.scores[:0]
	var excluded [len(exclusionReasons)]int64
	w.dropped = w.dropped[:0]
	archived := includesArchived(ctx)
	for _, s := range w.scores {
		if reason := w.exclusion(s.Seq); reason >= 0 && (reason == 0 || !archived) {
			excluded[reason]++
			w.dropped = append(w.dropped, droppedSeq{s.Seq, exclusionReasons[reason]})
			continue
		}
		kept = append(kept, s)
	}
	nExcluded := len(w.scores) - len(kept)
	before := len(kept)
	w.preGate = w.preGate[:0]
	best, bestGated := -1, -1 // by base score, among all and among those below the gate
	for i, s := range kept {
		w.preGate = append(w.preGate, s.Seq)
		if best < 0 || w.bases[s.Seq] > w.bases[kept[best].Seq] {
			best = i
		}
		if !s.Flags.Has(scoring.FlagUnscored) && s.Confidence < r.params.RetrievalGate &&
			(bestGated < 0 || w.bases[s.Seq] > w.bases[kept[bestGated].Seq]) {
			bestGated = i
		}
	}
	var yield scoring.Score
	yields := bestGated >= 0 && bestGated == best
	if yields {
		yield = kept[bestGated] // GateRetrieval compacts kept over it
	}
	kept, fallback := r.params.GateRetrieval(kept)
	if yields && !fallback && r.yields(w, kept, yield, p) {
		yield.Flags |= scoring.FlagBelowGate
		at, _ := slices.BinarySearchFunc(kept, yield.Seq, func(s scoring.Score, seq int) int { return s.Seq - seq })
		kept = slices.Insert(kept, at, yield)
	}
	drops := before - len(kept)
	if drops > 0 {
		w.kept = resize(w.kept, len(w.mem))
		clear(w.kept)
		for _, s := range kept {
			w.kept[s.Seq] = true
		}
		for _, seq := range w.preGate {
			if !w.kept[seq] {
				w.dropped = append(w.dropped, droppedSeq{seq, "below_gate"})
			}
		}
	}
	for reason, n := range excluded {
		if n > 0 {
			r.metrics.exclusions.Add(gctx, n, r.metrics.exclusionAttrs[reason])
		}
	}
	if drops > 0 {
		r.metrics.gateDrops.Add(gctx, int64(drops))
	}
	r.endStage(gctx, st, attrExcluded.Int(nExcluded), attrGateDrops.Int(drops), attrGateFallback.Bool(fallback))
	span.SetAttributes(attrExcluded.Int(nExcluded), attrGateDrops.Int(drops), attrGateFallback.Bool(fallback))
	return kept
}

// yields says whether the gate yields to relevance for g, the best match
// of the query, below the gate: nothing that passes the gate is within
// the guard's band of it, it is above the guard's floor, and it would be
// rendered (its confidence reaches the render gate: a memory the model
// would not be shown is no answer). A memory stored with nothing but its
// text (source weak_inference, confidence 0.4675) sits below the gate; it
// must still answer the question it answers best, and a trusted memory
// nearly as relevant still wins.
func (r *Ranker) yields(w *work, kept []scoring.Score, g scoring.Score, p plan) bool {
	if g.Confidence < r.params.RenderGate {
		return false
	}
	guard := p.det.Guard
	b := w.bases[g.Seq]
	cutoff := b - guard.Band
	if p.scaled {
		cutoff = b - guard.RelativeBand*math.Abs(b)
	} else if b < guard.Floor {
		return false
	}
	for _, s := range kept {
		if w.bases[s.Seq] >= cutoff {
			return false
		}
	}
	return true
}

// refocus weighs the kept candidates for the query's focus on recent
// memories (scoring.Params.Focus): the mean freshness of the FocusTop most
// similar against that of the FocusPool most similar. It returns the
// focus.
func (r *Ranker) refocus(w *work, kept []scoring.Score) float64 {
	if len(kept) == 0 {
		return r.params.FocusFloor
	}
	top, pool := r.params.FocusTop, min(r.params.FocusPool, len(kept))
	w.byBase = append(w.byBase[:0], kept...)
	slices.SortFunc(w.byBase, func(a, b scoring.Score) int {
		return cmp.Compare(w.bases[b.Seq], w.bases[a.Seq])
	})
	var sumTop, sumPool float64
	for i, s := range w.byBase[:pool] {
		if i < top {
			sumTop += s.Freshness
		}
		sumPool += s.Freshness
	}
	focus := r.params.Focus(sumTop/float64(min(top, pool)), sumPool/float64(pool))
	for i := range kept {
		r.params.Refocus(&kept[i], w.bases[kept[i].Seq], focus)
	}
	return focus
}

// leader is one result: a group's best member and what was folded into it.
type leader struct {
	// score is the shown member's; best and weight are the candidate index
	// and weight of the group's best member by weight, whose place, score
	// and guard decision the group keeps (the same member unless a more
	// trusted one is shown).
	score  scoring.Score
	best   int
	weight float64
	ret    float64 // the score it is returned with (returnedScores)
	folded []int32 // candidate indexes
	tiers  []fold.Tier
	judged fold.Judged
	// shown is, while dedup runs, the index in its scores of the member
	// more trusted than the first one; -1: none.
	shown int
}

// compareIDs orders point ids as Qdrant does: numbers first, ascending,
// then UUIDs.
func compareIDs(a, b *qdrant.PointId) int {
	an, aNum := a.GetPointIdOptions().(*qdrant.PointId_Num)
	bn, bNum := b.GetPointIdOptions().(*qdrant.PointId_Num)
	switch {
	case aNum && bNum:
		return cmp.Compare(an.Num, bn.Num)
	case aNum:
		return -1
	case bNum:
		return 1
	}
	return strings.Compare(strings.ToLower(a.GetUuid()), strings.ToLower(b.GetUuid()))
}

// textHash is candidate i's tier-1 key: the stored text_hash, else the hash
// of a non-empty text, else none (points without text never fold by text).
func (w *work) textHash(i int) string {
	m := w.mem[i]
	if m.TextHash != "" {
		return m.TextHash
	}
	if m.Text == "" {
		return ""
	}
	return memory.TextHash(m.Text)
}

// foldItem is candidate i as folding sees it, without its vector; a
// candidate from the cache shares its claim with the queries after.
func (w *work) foldItem(i int) fold.Item {
	m := w.mem[i]
	return fold.Item{Hash: w.textHash(i), Text: m.Text, Speaker: m.Speaker, Entities: m.Entities, Known: w.claims[i]}
}

// dedup folds duplicates among scores (sorted here, best first) and
// returns the leaders, best first. Folding gathers each group around its
// best member by weight; the group keeps that member's place, score and
// guard decision, and is shown by its most trusted member (the highest
// confidence, the best weight among equals): of two memories that state the
// same thing, the reader sees the better established one, where the nearer
// one would have been. The leaders are built in dst's backing array (and
// its leaders' fold lists) when it has room; nil allocates.
func (r *Ranker) dedup(w *work, scores []scoring.Score, points []*qdrant.ScoredPoint, p plan, dst []leader) []leader {
	w.order(scores, points)
	w.items = resize(w.items, len(scores))
	for j, s := range scores {
		it := w.foldItem(s.Seq)
		if p.tier2 {
			if v := denseVector(points[s.Seq].GetVectors(), p.vecName); len(v) > 0 {
				it.Vector = v
				if p.unit {
					it.InvNorm = 1
				} else {
					it.InvNorm = vecmath.InvNorm(v)
				}
			}
		}
		w.items[j] = it
	}
	fold.Fold(w.items, r.foldOptions(p.det), &w.fres)
	leaders := resize(dst, len(w.fres.Leaders))
	w.pos = resize(w.pos, len(scores))
	for k, j := range w.fres.Leaders {
		leaders[k] = leader{score: scores[j], best: scores[j].Seq, weight: scores[j].Weight, judged: w.fres.Judged[j],
			folded: leaders[k].folded[:0], tiers: leaders[k].tiers[:0], shown: -1}
		w.pos[j] = k
	}
	for j, l := range w.fres.Leader {
		if l < 0 {
			continue
		}
		ld := &leaders[w.pos[l]]
		ld.folded = append(ld.folded, int32(scores[j].Seq))
		ld.tiers = append(ld.tiers, w.fres.Tier[j])
		shown := ld.score
		if ld.shown >= 0 {
			shown = scores[ld.shown]
		}
		// A member out of answers (returned because archived ones were
		// asked for) never shows a group of live ones.
		if c := scores[j].Confidence; c > shown.Confidence && !scores[j].Flags.Has(scoring.FlagUnscored) &&
			(w.exclusion(scores[j].Seq) < 0 || w.exclusion(shown.Seq) >= 0) {
			ld.shown = j
		}
	}
	for k := range leaders {
		ld := &leaders[k]
		if ld.shown < 0 {
			continue
		}
		// The most trusted member is shown; the one that led by weight is
		// folded in its place, found as it was.
		member := scores[ld.shown]
		for i, seq := range ld.folded {
			if int(seq) == member.Seq {
				ld.folded[i] = int32(ld.score.Seq)
				break
			}
		}
		ld.score = member
	}
	// Drop the item vectors: they belong to the upstream's points.
	clear(w.items)
	return leaders
}

// renderGate runs the render gate over the returned leaders.
func (r *Ranker) renderGate(w *work, leaders []leader) {
	w.render = resize(w.render, len(leaders))
	for i := range leaders {
		w.render[i] = leaders[i].score
	}
	r.params.GateRender(w.render)
	for i := range leaders {
		leaders[i].score = w.render[i]
	}
}

// output builds the returned point and its explanation.
func (r *Ranker) output(w *work, l *leader, points []*qdrant.ScoredPoint, p plan, now time.Time) (*qdrant.ScoredPoint, Explanation) {
	return r.outputPoint(l, points, p), r.explain(w, l, points, now)
}

// outputPoint builds the returned point.
func (r *Ranker) outputPoint(l *leader, points []*qdrant.ScoredPoint, p plan) *qdrant.ScoredPoint {
	src := points[l.score.Seq]
	return &qdrant.ScoredPoint{
		Id:         src.GetId(),
		Payload:    p.payload.apply(src.GetPayload()),
		Score:      float32(l.ret),
		Version:    src.GetVersion(),
		Vectors:    p.vectors.apply(src.GetVectors()),
		ShardKey:   src.GetShardKey(),
		OrderValue: src.GetOrderValue(),
	}
}

// explain builds a returned point's explanation.
func (r *Ranker) explain(w *work, l *leader, points []*qdrant.ScoredPoint, now time.Time) Explanation {
	i := l.score.Seq
	src := points[i]
	e := Explanation{
		ID:          src.GetId(),
		Weight:      l.score.Weight,
		BaseScore:   w.bases[i],
		Score:       l.ret,
		Guard:       w.decision[l.best],
		Explanation: r.params.Explain(&w.ins[i], l.score, w.bases[i], now),
		Archived:    w.archived(i), // "" unless archived ones were asked for
	}
	if m := w.mem[i]; m.Present.Has(memory.FieldTier) {
		e.StoredTier = m.Tier.String()
	}
	if len(l.folded) > 0 {
		e.FoldedIDs = make([]*qdrant.PointId, len(l.folded))
		e.FoldedTiers = make([]string, len(l.folded))
		weakest := fold.TierNone
		for k, j := range l.folded {
			e.FoldedIDs[k] = points[j].GetId()
			e.FoldedTiers[k] = l.tiers[k].String()
			weakest = max(weakest, l.tiers[k])
		}
		e.DedupTier = weakest.String()
	}
	if band := l.judged.Band; band > 0 {
		switch {
		case r.foldOpt.Lookup == nil:
			e.JudgeNote = fmt.Sprintf("judge not consulted: no verdict cache (%d pair(s) in the judge band)", band)
		case l.judged.Consulted == 0:
			e.JudgeNote = fmt.Sprintf("judge not consulted: no cached verdict for %d pair(s) in the judge band", band)
		default:
			e.JudgeConsulted = true
			e.JudgeNote = fmt.Sprintf("cached judge verdicts for %d of %d pair(s) in the judge band", l.judged.Consulted, band)
		}
	}
	if probs := w.mem[i].Problems; len(probs) > 0 {
		e.Problems = make([]string, len(probs))
		for k, pr := range probs {
			e.Problems[k] = pr.String()
		}
	}
	return e
}
