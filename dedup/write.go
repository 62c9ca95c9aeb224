package dedup

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/internal/vecmath"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/textnorm"
)

// MemoryID is the deterministic id of a new memory (docs/write-path.md):
// UUIDv5 of the collection, the tenant and the text hash, so two replicas
// inserting the same text converge on one point.
func MemoryID(collection, tenant, textHash string) string {
	return memory.DeterministicID(collection, tenant, textHash)
}

// memoryID is MemoryID for a text said by speaker: two people saying the
// same words ("That's awesome!") make two memories, each at an id of its
// own. Without a speaker it is MemoryID.
func memoryID(collection, tenant, textHash, speaker string) string {
	if speaker = strings.ToLower(strings.TrimSpace(speaker)); speaker != "" {
		return memory.DeterministicID(collection, tenant, textHash, "speaker", speaker)
	}
	return MemoryID(collection, tenant, textHash)
}

// supersededSlack is how many more points the look-ups ask for than they
// use, to make room for superseded memories they skip.
const supersededSlack = 4

// stored is one memory the write is looking at, and what it will write back.
type stored struct {
	id   *qdrant.PointId
	sid  string
	m    memory.Memory
	vec  []float32
	hash string

	isNew           bool  // upserted whole, with its vector
	dirty           bool  // payload fields memrank owns rewritten
	clearSuperseded bool  // superseded_by removed
	clearFlags      bool  // flags removed (a forget took the memory back below a flag)
	mergedAccess    int64 // new access_counts._merged, when > 0 and changed
	usesOnly        bool  // only uses and last_used_at rewritten (a use)
	// loaded is the tier and retrievable read: they are written back only
	// when this write changes them (a revival, a supersession), so a write
	// that does not never undoes a consolidation that ran meanwhile.
	loadedTier scoring.Tier
	loadedRetr bool
	revived    bool // reinforced: tier and retrievable written whatever was read

	claimRead bool
	claimOf   Claim
}

// claim is what the fold rules read of the memory (read once).
func (st *stored) claim() Claim {
	if !st.claimRead {
		st.claimOf, st.claimRead = ReadClaim(st.m.Text, st.m.Speaker, st.m.Entities), true
	}
	return st.claimOf
}

// scored is a tier-2 neighbour with its similarity to the observation.
type scored struct {
	st    *stored
	score float64
}

// write is one observation's decision and the writes it makes. Its methods
// run under the collection and tenant's lock.
type write struct {
	e      *Engine
	o      observation
	vec    []float32
	coll   string
	tenant string
	bands  embed.Bands // the collection's tier-2 bands

	out     Outcome
	touched []*stored
	audit   []AuditRecord

	// prejudged holds verdicts obtained before the lock, by pair of hashes.
	prejudged map[[2]string]prejudgement
	// negated is the stored memory the observation negates, when there is
	// no judge to resolve it (classify): both are kept, the contradiction
	// recorded on each.
	negated *stored
}

type prejudgement struct {
	v    Verdict
	info JudgeInfo
}

// prejudge runs the look-ups without the lock and asks the judge about the
// pair the decision will need, if any. The decision under the lock repeats
// the look-ups (the collection may have changed) and reuses the verdict.
func (w *write) prejudge(ctx context.Context) error {
	t1, err := w.tier1(ctx)
	if err != nil || len(t1) > 0 {
		return err
	}
	nb, err := w.tier2(ctx)
	if err != nil {
		return err
	}
	nb = w.sameSubject(nb)
	if len(nb) == 0 {
		return nil
	}
	c := nb[0] // the nearest neighbour is the only one the tiers may judge
	if c.score < w.bands.Judge {
		// Below the band, the judge may still be asked about seed 001's
		// contradiction candidate.
		cand := w.contradictionCandidate(nb)
		if cand == nil {
			return nil
		}
		c = *cand
	}
	if c.score >= w.bands.Same && w.o.claim.Folds(c.st.claim()) {
		return nil
	}
	v, info := w.e.cfg.Judging.Decide(ctx, w.coll,
		PairText{Hash: c.st.hash, Text: c.st.m.Text}, PairText{Hash: w.o.hash, Text: w.o.Text})
	w.prejudged = map[[2]string]prejudgement{{c.st.hash, w.o.hash}: {v, info}}
	return nil
}

func (w *write) key(f memory.Field) string { return w.e.codec.Key(f) }

// scope is the tenant condition. Superseded memories are dropped after
// the look-up, not by an is_empty condition: no payload index serves that
// condition, so the store would read every point's payload to evaluate it
// (23 ms per observation at 600 memories on the embedded store).
func (w *write) scope() *qdrant.Filter {
	f := &qdrant.Filter{}
	if w.e.tenancyOn() {
		f.Must = append(f.Must, w.e.cfg.Tenancy.Condition(w.tenant))
	}
	return f
}

func (w *write) decode(id *qdrant.PointId, payload map[string]*qdrant.Value, vecs *qdrant.VectorsOutput) *stored {
	st := &stored{id: id, sid: idString(id), m: w.e.codec.DecodeQdrant(payload), vec: denseVector(vecs)}
	st.hash = st.m.Hash()
	st.loadedTier, st.loadedRetr = st.m.Tier, st.m.Retrievable
	return st
}

// tier1 finds stored memories with the observation's text hash.
func (w *write) tier1(ctx context.Context) ([]*stored, error) {
	ctx, span := w.e.tracer.Start(ctx, "dedup.tier1")
	defer span.End()
	f := w.scope()
	f.Must = append(f.Must, qdrant.NewMatchKeyword(w.key(memory.FieldTextHash), w.o.hash))
	limit := uint32(maxMerges + 1 + supersededSlack)
	pts, err := w.e.store.Scroll(ctx, &qdrant.ScrollPoints{
		CollectionName: w.coll, Filter: f, Limit: &limit,
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dedup: tier 1 look-up in %s: %w", w.coll, err)
	}
	out := make([]*stored, 0, len(pts))
	for _, p := range pts {
		if w.isCorrected(p.GetId()) {
			continue
		}
		// The same words said by someone else are another memory.
		if st := w.decode(p.GetId(), p.GetPayload(), p.GetVectors()); st.m.SupersededBy == "" && w.o.claim.SameSubject(st.claim()) {
			out = append(out, st)
		}
	}
	// The deterministic id first: it is where every replica converges.
	want := memoryID(w.coll, w.tenant, w.o.hash, w.o.Speaker)
	slices.SortStableFunc(out, func(a, b *stored) int {
		switch {
		case a.sid == want:
			return -1
		case b.sid == want:
			return 1
		}
		return 0
	})
	span.SetAttributes(attribute.Int("memrank.matches", len(out)))
	return out, nil
}

func (w *write) isCorrected(id *qdrant.PointId) bool {
	return w.o.Corrects != "" && idString(id) == w.o.Corrects
}

// tier2 finds the nearest stored memories, best first.
func (w *write) tier2(ctx context.Context) ([]scored, error) {
	ctx, span := w.e.tracer.Start(ctx, "dedup.tier2")
	defer span.End()
	limit := uint64(w.e.cfg.Neighbours + supersededSlack)
	pts, err := w.e.store.Query(ctx, &qdrant.QueryPoints{
		CollectionName: w.coll, Query: qdrant.NewQueryDense(w.vec), Filter: w.scope(), Limit: &limit,
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dedup: tier 2 search in %s: %w", w.coll, err)
	}
	// The thresholds are cosines: the score is recomputed from the vectors,
	// so a Dot or Euclid collection is judged on the same scale (for Cosine
	// collections the two agree). Payloads are decoded best first, only
	// until Neighbours memories that are not superseded are found.
	type cand struct {
		p   *qdrant.ScoredPoint
		vec []float32
		cos float64
	}
	cands := make([]cand, 0, len(pts))
	for _, p := range pts {
		if w.isCorrected(p.GetId()) {
			continue
		}
		if v := denseVector(p.GetVectors()); len(v) == len(w.vec) {
			cands = append(cands, cand{p, v, float64(vecmath.Cosine(w.vec, v))})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.cos, a.cos) })
	out := make([]scored, 0, w.e.cfg.Neighbours)
	for _, c := range cands {
		if len(out) == w.e.cfg.Neighbours {
			break
		}
		if st := w.decode(c.p.GetId(), c.p.GetPayload(), c.p.GetVectors()); st.m.SupersededBy == "" {
			out = append(out, scored{st: st, score: c.cos})
		}
	}
	if len(out) > 0 {
		span.SetAttributes(attribute.Float64("memrank.best_score", out[0].score))
	}
	return out, nil
}

// load reads one memory by id, in the write's tenant.
func (w *write) load(ctx context.Context, id *qdrant.PointId) (*stored, error) {
	pts, err := w.e.store.Get(ctx, &qdrant.GetPoints{
		CollectionName: w.coll, Ids: []*qdrant.PointId{id},
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true),
	})
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w: collection %s", ErrNotFound, w.coll)
		}
		return nil, fmt.Errorf("dedup: read %s in %s: %w", idString(id), w.coll, err)
	}
	if len(pts) == 0 || !w.e.owns(pts[0].GetPayload(), w.tenant) {
		return nil, fmt.Errorf("%w: memory %s in %s", ErrNotFound, idString(id), w.coll)
	}
	return w.decode(pts[0].GetId(), pts[0].GetPayload(), pts[0].GetVectors()), nil
}

// observe is the decision of docs/write-path.md for one observation.
func (w *write) observe(ctx context.Context) error {
	t1, err := w.tier1(ctx)
	if err != nil {
		return err
	}
	if len(t1) > 0 {
		w.duplicate(t1[0], 1)
		w.mergeInto(t1[0], t1[1:], nil)
		return nil
	}
	nb, err := w.tier2(ctx)
	if err != nil {
		return err
	}
	match, tier, contradicts := w.classify(ctx, nb)
	switch {
	case match == nil:
		if _, err := w.insert(ctx, false, false); err != nil {
			return err
		}
		if w.negated != nil && len(w.touched) > 0 && w.touched[0].sid != w.negated.sid {
			w.noteContradiction(w.touched[0], w.negated)
		}
	case contradicts:
		blocked, err := w.insert(ctx, true, false)
		if err != nil {
			return err
		}
		if blocked {
			// The claim was corrected away: seeing it again does not undo the
			// correction (an old transcript re-imported, say).
			w.out.Reason = "the claim was superseded by an explicit correction; it stays superseded"
			break
		}
		w.resolve(w.touched[0], match, false)
		w.out.Decision = DecisionContradiction
		w.out.Tier = tier
	default:
		w.duplicate(match, tier)
		w.mergeInto(match, nil, nb)
	}
	if w.out.Decision == DecisionInserted || w.out.Decision == DecisionIndependent {
		w.corroborate(nb)
	}
	return nil
}

// sameSubject keeps the neighbours whose subject may be the observation's:
// another person's statement is never the same fact, nor a contradiction
// of it (docs/write-path.md, "Who said what").
func (w *write) sameSubject(nb []scored) []scored {
	out := nb[:0:0]
	for _, c := range nb {
		if w.o.claim.SameSubject(c.st.claim()) {
			out = append(out, c)
		}
	}
	return out
}

// negates reports whether the observation and st state one claim but for
// a negation on one side: the same numbers and names, no word swapped.
func (w *write) negates(st *stored) bool {
	a, b := w.o.claim, st.claim()
	return len(a.sig.negations)%2 != len(b.sig.negations)%2 && !a.withoutNegations().Differs(b.withoutNegations())
}

// classify walks the tier-2 neighbours of the observation's subject, best
// first: a clean match at or above SameThreshold is the same fact (tier 2);
// a neighbour in the judge band, or above it but differing in a negation, a
// number, a name or a swapped word, needs a verdict (tier 3). Without a
// usable verdict nothing matches: a judge that is down, over budget or
// unparsable never causes a merge. Without a judge, a neighbour the
// observation negates is noted (negated): both are kept, the
// contradiction recorded. One judge call at most per observation; later
// pairs use cached verdicts only.
func (w *write) classify(ctx context.Context, nb []scored) (match *stored, tier int, contradicts bool) {
	nb = w.sameSubject(nb)
	called := false
	for _, c := range nb {
		if c.score < w.bands.Judge {
			break
		}
		if c.score >= w.bands.Same && w.o.claim.Folds(c.st.claim()) {
			return c.st, 2, false
		}
		if !w.e.cfg.Judging.Active() && c.score >= w.bands.Same && w.negated == nil && w.negates(c.st) {
			w.negated = c.st
		}
		var v Verdict
		var info JudgeInfo
		if pj, ok := w.prejudged[[2]string{c.st.hash, w.o.hash}]; ok && !called {
			v, info = pj.v, pj.info
			called = true
		} else if !called {
			v, info = w.e.cfg.Judging.Decide(ctx, w.coll,
				PairText{Hash: c.st.hash, Text: c.st.m.Text}, PairText{Hash: w.o.hash, Text: w.o.Text})
			called = !info.Cached
		} else if cv, ok := w.e.cfg.Judging.Lookup(c.st.hash, w.o.hash); ok {
			v, info = cv, JudgeInfo{Verdict: cv.String(), Cached: true}
		} else {
			continue
		}
		if w.out.Judge == nil {
			w.out.Judge = &info
		}
		switch v {
		case VerdictSame:
			w.out.Judge = &info
			return c.st, 3, false
		case VerdictContradicts:
			w.out.Judge = &info
			return c.st, 3, true
		}
	}
	if !called {
		return w.classifyCandidate(ctx, nb)
	}
	return nil, 0, false
}

// classifyCandidate asks the judge about seed 001's contradiction candidate
// when the band needed no call: only a "contradicts" verdict counts (a pair
// this far apart is never merged on the judge's "same").
func (w *write) classifyCandidate(ctx context.Context, nb []scored) (match *stored, tier int, contradicts bool) {
	c := w.contradictionCandidate(nb)
	if c == nil {
		return nil, 0, false
	}
	v, info := Verdict(0), JudgeInfo{}
	if pj, ok := w.prejudged[[2]string{c.st.hash, w.o.hash}]; ok {
		v, info = pj.v, pj.info
	} else {
		v, info = w.e.cfg.Judging.Decide(ctx, w.coll,
			PairText{Hash: c.st.hash, Text: c.st.m.Text}, PairText{Hash: w.o.hash, Text: w.o.Text})
	}
	w.out.Judge = &info
	if v == VerdictContradicts {
		return c.st, 3, true
	}
	return nil, 0, false
}

// evidence is a stored memory's components, grounding and confidence.
func (w *write) evidence(m *memory.Memory) scoring.Evidence {
	ev := scoring.Evidence{
		Components: scoring.Components{Source: m.Levels.Source, Observations: m.Observations,
			Extractor: m.Levels.Extractor, Type: m.Levels.Type},
		Grounding: m.Grounding,
	}
	if m.HasConfidence {
		ev.Confidence = m.Confidence
	} else {
		ev.Confidence = w.e.params.Grounded(ev.Components, ev.Grounding)
	}
	return ev
}

// independent is docs/write-path.md's independence rule.
func (w *write) independent(m *memory.Memory) bool {
	o := &w.o
	if o.SessionID == "" || slices.Contains(m.SessionIDs, o.SessionID) {
		return false
	}
	first := m.CreatedAt
	if first.IsZero() {
		first = m.LastObserved()
	}
	if !first.IsZero() && o.at.Sub(first) < w.e.cfg.MinIndependentGap {
		return false
	}
	if w.e.cfg.RequireSurfaceChange && o.hash == m.Hash() {
		newModality := o.Modality != "" && len(m.Modalities) > 0 && !slices.Contains(m.Modalities, o.Modality)
		if !newModality {
			return false
		}
	}
	return true
}

// duplicate applies the observation to the memory it duplicates (docs/scoring.md).
func (w *write) duplicate(st *stored, tier int) {
	m := &st.m
	independent := w.independent(m)
	old := w.evidence(m)
	next := w.e.params.Reobserve(old, w.o.ev, independent)
	if obsComponents(next) == obsComponents(w.o.ev) && obsComponents(next) != obsComponents(old) {
		w.adoptLevels(m)
	}
	m.Observations = next.Observations
	flagged := independent && w.e.recurring(m, m.Observations+1)
	if flagged {
		// Seed 002: a memory of this type seen this often is probably a
		// pattern, not one happening; the sighting is counted, and it adds no
		// confidence until someone reviews it.
		next.Confidence = old.Confidence
	}
	m.Confidence, m.HasConfidence = next.Confidence, true
	before := m.LastObservedAt
	w.addProvenance(m)
	if independent || m.LastObservedAt.After(before) {
		reinforce(st)
	}
	st.dirty = true
	w.touch(st)
	reason, d := "restatement", DecisionRestatement
	if independent {
		reason, d = "independent", DecisionIndependent
	}
	w.record(st, reason, old, "")
	if flagged {
		w.noteLast(fmt.Sprintf("%s: seen %d times; not counted in confidence until reviewed", FlagRecurringEvent, m.Observations+1))
		w.out.Flags = []string{FlagRecurringEvent}
	}
	w.out.Decision, w.out.Tier = d, tier
	w.out.MemoryID, w.out.Confidence, w.out.Observations = st.sid, m.Confidence, m.Observations
}

// obsComponents are the parts of evidence a re-observation may adopt.
type levels struct {
	s, e, t float64
	g       scoring.Grounding
}

func obsComponents(ev scoring.Evidence) levels {
	return levels{ev.Source, ev.Extractor, ev.Type, ev.Grounding}
}

// adoptLevels takes the observation's source, type, extractor and grounding
// (they scored higher than the stored ones).
func (w *write) adoptLevels(m *memory.Memory) {
	o := &w.o
	m.Source, m.MemoryType, m.Grounding = o.sourceName, o.typeName, o.grounding
	m.ExtractorModel = o.ExtractorModel
	m.HasLogprob = o.ExtractorLogprob != nil
	if m.HasLogprob {
		m.ExtractorLogprob = *o.ExtractorLogprob
	}
	m.Levels.Source, m.Levels.Type, m.Levels.Extractor = o.ev.Source, o.ev.Type, o.ev.Extractor
	if o.attribution != "" {
		m.Attribution = o.attribution
	}
}

// addProvenance adds the observation's session, turn, entities and modality
// and moves last_observed_at forward. Lists are bounded: past the bound the
// oldest entries go.
func (w *write) addProvenance(m *memory.Memory) {
	o := &w.o
	m.SessionIDs = addBounded(m.SessionIDs, o.SessionID)
	m.TurnIDs = addBounded(m.TurnIDs, turnKey(o.SessionID, o.TurnID))
	m.Entities = union(m.Entities, o.Entities)
	m.Modalities = addBounded(m.Modalities, o.Modality)
	if o.at.After(m.LastObservedAt) {
		m.LastObservedAt = o.at
	}
	if m.CreatedAt.IsZero() || o.at.Before(m.CreatedAt) {
		m.CreatedAt = o.at
	}
}

// turnKey is a turn id qualified by its session ("s-12:7"), since turn ids
// are often numbered per session; one that already carries it stays as is.
func turnKey(session, turn string) string {
	if session == "" || turn == "" || strings.HasPrefix(turn, session+":") {
		return turn
	}
	return session + ":" + turn
}

// union adds the values of more to list, with addBounded.
func union(list, more []string) []string {
	for _, v := range more {
		list = addBounded(list, v)
	}
	return list
}

func addBounded(list []string, v string) []string {
	if v == "" || slices.Contains(list, v) {
		return list
	}
	if len(list) >= maxListEntries {
		list = slices.Delete(list, 0, len(list)-maxListEntries+1)
	}
	return append(list, v)
}

// insert adds the observation as a new memory with its deterministic id. A
// point already there under that id (a superseded claim of the same text,
// or a memory whose stored text hash differs) is re-observed instead; it is
// revived from supersession only when revive is set (a contradiction about
// to be resolved by c x f), and then not if a correction superseded it,
// unless force is set (a new correction). blocked reports that case.
func (w *write) insert(ctx context.Context, revive, force bool) (blocked bool, err error) {
	sid := memoryID(w.coll, w.tenant, w.o.hash, w.o.Speaker)
	id := qdrant.NewID(sid)
	if prev, err := w.load(ctx, id); err == nil {
		if revive && prev.m.SupersededBy != "" {
			if !force {
				corrected, err := w.e.correctedAway(ctx, w.coll, w.tenant, prev.sid)
				if err != nil {
					return false, err
				}
				blocked = corrected
			}
			if !blocked {
				// The claim is asserted again: out of supersession, and out
				// of an archive consolidation put it in meanwhile, or it
				// would be retrievable yet still stored archived.
				prev.m.SupersededBy = ""
				reinforce(prev)
				prev.clearSuperseded = true
			}
		}
		w.duplicate(prev, 1)
		if !revive {
			w.out.Tier = 0
		}
		return blocked, nil
	} else if !isErrNotFound(err) {
		return false, err
	}
	o := &w.o
	m := memory.Memory{
		Text: o.Text, MemoryType: o.typeName, Source: o.sourceName, ExtractorModel: o.ExtractorModel,
		Grounding: o.grounding, Confidence: o.ev.Confidence, HasConfidence: true,
		DecayCategory: o.DecayCategory, CreatedAt: o.at, LastObservedAt: o.at, TextHash: o.hash,
		Retrievable: true, Tier: scoring.TierActive, Schema: memory.SchemaVersion, Attribution: o.attribution,
		Speaker: strings.TrimSpace(o.Speaker),
	}
	if o.ExtractorLogprob != nil {
		m.ExtractorLogprob, m.HasLogprob = *o.ExtractorLogprob, true
	}
	w.addProvenance(&m)
	// Decoding what will be written resolves the levels exactly as a read will.
	st := &stored{id: id, sid: sid, vec: w.vec, hash: o.hash, isNew: true}
	st.m = w.e.codec.DecodeQdrant(w.e.codec.Encode(&m))
	w.touch(st)
	w.record(st, "insert", scoring.Evidence{}, "")
	w.out = Outcome{Decision: DecisionInserted, MemoryID: sid, Confidence: st.m.Confidence,
		Observations: 0, Judge: w.out.Judge, Attribution: w.out.Attribution}
	return false, nil
}

// resolve settles a contradiction: the claim with the lower confidence x
// freshness is superseded (kept, not retrievable), unless correction is set,
// when a wins whatever the numbers. The winner's contradictions grow by one.
func (w *write) resolve(a, b *stored, correction bool) {
	win, lose := a, b
	if !correction && w.weight(&b.m) > w.weight(&a.m) {
		win, lose = b, a
	}
	lose.m.SupersededBy, lose.m.Retrievable = win.sid, false
	lose.clearSuperseded = false
	lose.dirty = true
	win.m.Contradictions++
	win.dirty = true
	w.touch(lose)
	w.touch(win)
	ev := w.evidence(&lose.m)
	w.record(lose, "superseded", ev, win.sid)
	winOld := w.evidence(&win.m)
	penalised := !correction && win == b && !w.e.cfg.Corroboration.Off
	if penalised {
		// Seed 001: the stored claim survived, but it was contradicted.
		win.m.Confidence, win.m.HasConfidence = w.e.contradictionPenalty(winOld.Confidence), true
	}
	w.record(win, "contradiction", winOld, lose.sid)
	if penalised {
		w.noteLast(fmt.Sprintf("contradiction penalty %s", strconv.FormatFloat(w.e.cfg.Corroboration.ContradictionPenalty, 'g', -1, 64)))
	}
	w.out.Superseded = lose.sid
	if w.out.MemoryID == win.sid {
		w.out.Confidence, w.out.Observations = win.m.Confidence, win.m.Observations
	}
}

// reasonUnresolved is the audit reason of a contradiction no judge
// resolved: both claims are kept, each counting it.
const reasonUnresolved = "contradiction_unresolved"

// noteContradiction records that a and b contradict each other without a
// judge to say which holds (docs/write-path.md): both stay, each counts one
// more contradiction and records it, and the answer names the other. A
// supersession needs a judge's verdict or a correction.
func (w *write) noteContradiction(a, b *stored) {
	for _, p := range [2][2]*stored{{a, b}, {b, a}} {
		st, other := p[0], p[1]
		old := w.evidence(&st.m)
		st.m.Contradictions++
		st.dirty = true
		w.touch(st)
		w.record(st, reasonUnresolved, old, other.sid)
	}
	w.out.Contradicts = b.sid
}

// weight is confidence x freshness now: a fresh claim can replace a stale one.
func (w *write) weight(m *memory.Memory) float64 {
	c := m.Confidence
	if !m.HasConfidence {
		c = w.evidence(m).Confidence
	}
	hl := m.Levels.HalfLife
	if hl <= 0 {
		hl = w.e.params.Decay.DefaultHalfLife
	}
	return c * scoring.Freshness(scoring.AgeDays(m.LastObserved(), w.e.cfg.Now()), hl)
}

// mergeInto folds stored duplicates of win into it (docs/scoring.md): others
// with win's text hash, and neighbours whose vectors are at or above
// SameThreshold to win's and whose texts agree in negations and numbers.
func (w *write) mergeInto(win *stored, sameHash []*stored, nb []scored) {
	var losers []*stored
	for _, s := range sameHash {
		if s.sid != win.sid {
			losers = append(losers, s)
		}
	}
	for _, n := range nb {
		s := n.st
		if s.sid == win.sid || len(s.vec) == 0 || len(s.vec) != len(win.vec) || !s.claim().Folds(win.claim()) {
			continue
		}
		if float64(vecmath.Cosine(s.vec, win.vec)) >= w.bands.Same {
			losers = append(losers, s)
		}
	}
	if len(losers) > maxMerges {
		losers = losers[:maxMerges]
	}
	for _, l := range losers {
		w.merge(win, l)
	}
}

func (w *write) merge(win, lose *stored) {
	lastBefore := win.m.LastObservedAt
	a, b := w.evidence(&win.m), w.evidence(&lose.m)
	next := w.e.params.Merge(a, b)
	wm, lm := &win.m, &lose.m
	foldLoser(wm, lm, b.Confidence > a.Confidence) // as forgetting's replay folds it
	wm.Observations = next.Observations
	wm.Confidence, wm.HasConfidence = next.Confidence, true
	// The loser's uses go to _merged with its reads: both feed the boost,
	// and the write path never writes the winner's uses.
	if moved := lm.AccessCount() + int64(lm.Uses); moved > 0 {
		win.mergedAccess = mergedTotal(wm) + moved
		setMerged(wm, win.mergedAccess)
	}
	lm.SupersededBy, lm.Retrievable = win.sid, false
	if wm.LastObservedAt.After(lastBefore) {
		// The loser brought later evidence; an old duplicate folded in
		// does not undo an archive (the observation itself revived the
		// winner already if it was a reinforcement).
		reinforce(win)
	}
	win.dirty, lose.dirty = true, true
	w.touch(win)
	w.touch(lose)
	w.record(win, "merge", a, lose.sid)
	w.record(lose, "superseded", b, win.sid)
	w.out.Merged = append(w.out.Merged, lose.sid)
	if w.out.MemoryID == win.sid {
		w.out.Confidence, w.out.Observations = wm.Confidence, wm.Observations
	}
}

func mergedTotal(m *memory.Memory) int64 {
	for _, a := range m.AccessCounts {
		if a.Replica == memory.MergedAccessKey {
			return a.Count
		}
	}
	return 0
}

func setMerged(m *memory.Memory, n int64) {
	for i := range m.AccessCounts {
		if m.AccessCounts[i].Replica == memory.MergedAccessKey {
			m.AccessCounts[i].Count = n
			return
		}
	}
	m.AccessCounts = append(m.AccessCounts, memory.AccessCount{Replica: memory.MergedAccessKey, Count: n})
}

// corroborate counts the observation as evidence for neighbours that make a
// similar claim about a shared entity (seed 001): cosine at or above
// CorroborateThreshold, an entity in common, and no negation or number
// between them. Corroboration is evidence only: confidence is unchanged.
func (w *write) corroborate(nb []scored) {
	if len(w.o.Entities) == 0 {
		return
	}
	for _, n := range nb {
		s := n.st
		if n.score < w.e.cfg.CorroborateThreshold || s.sid == w.out.MemoryID || s.m.SupersededBy != "" {
			continue
		}
		if !sharesEntity(s.m.Entities, w.o.Entities) || !w.o.claim.Corroborates(s.claim()) {
			continue
		}
		if w.isTouched(s) {
			continue
		}
		s.m.Corroborations++
		s.dirty = true
		w.touch(s)
		// Seed 001: a corroborated claim gains confidence, behind the
		// evidence gate. Every corroboration is recorded, boost or not:
		// forgetting's replay counts them for the gate and the count.
		old := w.evidence(&s.m)
		if next := w.e.corroborationBoost(old.Confidence, s.m.Corroborations); next != old.Confidence && !w.e.cfg.Corroboration.Off {
			s.m.Confidence, s.m.HasConfidence = next, true
		}
		w.record(s, reasonCorroboration, old, w.out.MemoryID)
	}
}

func sharesEntity(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if textnorm.Normalize(x) == textnorm.Normalize(y) && x != "" {
				return true
			}
		}
	}
	return false
}

// reasonConfirm is the audit reason of a confirmation, counted or not.
const reasonConfirm = "confirm"

// firstConfirmation reports whether the confirmation's session has not
// confirmed st yet (for one without a session: whether no confirmation
// without a session has). A session the memory has never seen cannot have;
// otherwise the trail says, where a forgotten session's records no longer
// count.
func (w *write) firstConfirmation(ctx context.Context, st *stored) (bool, error) {
	session := w.o.SessionID
	if session != "" && !slices.Contains(st.m.SessionIDs, session) {
		return true, nil
	}
	recs, err := w.e.readAudit(ctx, w.coll, w.tenant, st.sid)
	if err != nil {
		return false, err
	}
	return !confirmedBy(recs, session), nil
}

// confirmedBy reports whether a confirmation from session ("" for none)
// is among the records and still counts.
func confirmedBy(recs []AuditRecord, session string) bool {
	for _, r := range recs {
		if r.Reason == reasonConfirm && r.SessionID == session && !r.Forgotten {
			return true
		}
	}
	return false
}

// confirm applies docs/scoring.md to a stored memory. A confirmation that
// is not its session's first (first false) is applied without n + 1: n
// counts independent evidence, and one person saying yes twice is not.
// It is still recorded, and still reinforces the memory, as a
// restatement would.
func (w *write) confirm(st *stored, first bool) {
	m := &st.m
	old := w.evidence(m)
	next := w.e.params.Confirm(old)
	if !first {
		next = w.e.reconfirm(old)
	}
	if next.Source > old.Source {
		for name, v := range w.e.params.SourceLevels {
			if v == next.Source {
				m.Source = name
				break
			}
		}
		m.Levels.Source = next.Source
	}
	m.Observations = next.Observations
	m.Confidence, m.HasConfidence = next.Confidence, true
	w.addProvenance(m)
	reinforce(st)
	st.dirty = true
	w.touch(st)
	w.record(st, reasonConfirm, old, "")
	w.out = Outcome{Decision: DecisionConfirmed, MemoryID: st.sid, Confidence: m.Confidence, Observations: m.Observations}
	if !first {
		w.out.AlreadyCounted = true
		w.out.Reason = alreadyConfirmed(w.o.SessionID)
		w.noteLast(w.out.Reason)
	}
}

// alreadyConfirmed says why a confirmation left n as it was.
func alreadyConfirmed(session string) string {
	if session == "" {
		return "a confirmation without a session_id was already counted: observations unchanged"
	}
	return fmt.Sprintf("session %q already confirmed this memory: observations unchanged", truncate(session))
}

// reconfirm is Params.Confirm without the added observation: the source
// still rises to the confirmed level (a no-op after the first), and the
// confidence is still clamped.
func (e *Engine) reconfirm(ev scoring.Evidence) scoring.Evidence {
	p := e.params
	next := p.Confirm(ev)
	next.Observations = ev.Observations
	next.Confidence = min(p.MaxConfidence, max(ev.Confidence, p.Grounded(next.Components, next.Grounding)))
	return next
}

// correct stores the correction and supersedes the corrected memory with it.
func (w *write) correct(ctx context.Context) error {
	cid, _ := parseID(w.o.Corrects)
	target, err := w.load(ctx, cid)
	if err != nil {
		return err
	}
	if target.hash == w.o.hash {
		return &InputError{Field: "text", Reason: "is the text of the memory it corrects"}
	}
	t1, err := w.tier1(ctx)
	if err != nil {
		return err
	}
	var win *stored
	if len(t1) > 0 {
		win = t1[0]
		w.duplicate(win, 1)
	} else {
		nb, err := w.tier2(ctx)
		if err != nil {
			return err
		}
		// A correction folds only into a memory that states its claim: one
		// that names something the memory does not ("I work at Initech now,
		// not Acme" against "I don't work at Acme") is stored, or its new
		// fact would be lost.
		for _, c := range nb {
			if c.score >= w.bands.Same && w.o.claim.Folds(c.st.claim()) {
				win = c.st
				w.duplicate(win, 2)
				break
			}
		}
		if win == nil {
			if _, err := w.insert(ctx, true, true); err != nil {
				return err
			}
			win = w.touched[0]
		}
	}
	w.resolve(win, target, true)
	reinforce(win)
	w.out.Decision = DecisionCorrected
	return nil
}

// reinforce makes a reinforced memory active and retrievable again
// (docs/consolidation.md): consolidation may have archived it, and the
// write path still matches archived memories, so seeing the fact again
// brings it back instead of making a duplicate. A superseded memory stays
// out.
func reinforce(st *stored) {
	if st.m.SupersededBy == "" {
		st.m.Tier, st.m.Retrievable = scoring.TierActive, true
		st.revived = true
	}
}

func (w *write) touch(st *stored) {
	if !w.isTouched(st) {
		w.touched = append(w.touched, st)
	}
}

func (w *write) isTouched(st *stored) bool {
	for _, t := range w.touched {
		if t == st || t.sid == st.sid {
			return true
		}
	}
	return false
}

// record appends an audit record of a change to st; old is st's evidence
// before it.
func (w *write) record(st *stored, reason string, old scoring.Evidence, related string) {
	o := &w.o
	w.audit = append(w.audit, AuditRecord{
		MemoryID: st.sid, ObservationID: o.ObservationID, Reason: reason,
		Old: old.Confidence, New: st.m.Confidence, OldN: old.Observations, NewN: st.m.Observations,
		At: o.at, SessionID: o.SessionID, TurnID: o.TurnID,
		Source: o.ev.Source, Extractor: o.ev.Extractor, Type: o.ev.Type, Grounding: groundingName(o),
		Related: related, Attribution: o.attribution, AttributionFrom: o.attributionFrom,
		Evidence: true, TextHash: o.hash, Modality: o.Modality, Entities: o.Entities,
		SourceName: o.sourceName, TypeName: o.typeName, ExtractorModel: o.ExtractorModel, ExtractorLogprob: o.ExtractorLogprob,
	})
	switch reason {
	case "insert", "restatement", "independent":
		w.noteLast(o.attributionInfo.note())
	}
}

// noteLast adds a note to the latest audit record.
func (w *write) noteLast(note string) {
	if note == "" || len(w.audit) == 0 {
		return
	}
	r := &w.audit[len(w.audit)-1]
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += note
}

func groundingName(o *observation) string {
	if o.sourceName == "" { // a confirmation carries no extractor evidence
		return ""
	}
	return o.grounding.String()
}

// commit writes the memories in one batch, then the audit records in one
// batch. The memory goes first: a failure between the two leaves a change
// without its record (counted, logged) rather than a record of a change that
// never happened; a retry with the same observation_id then finds the
// session already recorded and does not count it twice.
func (w *write) commit(ctx context.Context) error {
	ctx, span := w.e.tracer.Start(ctx, "dedup.write", trace.WithAttributes(
		attribute.Int("memrank.memories", len(w.touched)), attribute.Int("memrank.audit_records", len(w.audit))))
	defer span.End()
	// The outcome says the confidence as it is stored (memory.RoundConfidence).
	w.out.Confidence = memory.RoundConfidence(w.out.Confidence)
	for i := range w.audit {
		w.audit[i].Decision = w.out.Decision
	}
	if ops := w.ops(); len(ops) > 0 {
		wait := true
		if _, err := w.e.store.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: w.coll, Wait: &wait, Operations: ops}); err != nil {
			return fmt.Errorf("dedup: write memories to %s: %w", w.coll, err)
		}
	}
	if err := w.e.writeAuditRetrying(ctx, w.coll, w.tenant, w.o.ObservationID, w.audit, w.out); err != nil {
		w.e.auditLost.Add(ctx, int64(len(w.audit)))
		w.e.cfg.Telemetry.Logger.ErrorContext(ctx, "audit records not written after the memory was",
			"collection", w.coll, "memory_id", w.out.MemoryID, "error", err)
		return err
	}
	return nil
}

// ops are the memory writes: whole points for new memories, the fields
// memrank owns for the others. access_counts and last_accessed_at belong to
// the access recorders and are never overwritten here (except the _merged
// key of a merge).
func (w *write) ops() []*qdrant.PointsUpdateOperation {
	var ops, points []*qdrant.PointsUpdateOperation
	var pts []*qdrant.PointStruct
	for _, st := range w.touched {
		payload := w.e.codec.Encode(&st.m)
		if w.e.tenancyOn() {
			payload[w.e.cfg.Tenancy.PayloadKey()] = w.e.cfg.Tenancy.Value(w.tenant)
		}
		if st.isNew {
			pts = append(pts, &qdrant.PointStruct{Id: st.id, Vectors: qdrant.NewVectorsDense(st.vec), Payload: payload})
			continue
		}
		if st.usesOnly {
			uk, lk := w.key(memory.FieldUses), w.key(memory.FieldLastUsedAt)
			ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
				Payload:        map[string]*qdrant.Value{uk: payload[uk], lk: payload[lk]},
				PointsSelector: qdrant.NewPointsSelector(st.id)}))
			continue
		}
		if !st.dirty {
			continue
		}
		delete(payload, w.key(memory.FieldAccessCounts))
		delete(payload, w.key(memory.FieldLastAccessedAt))
		// Uses belong to the used path, which writes them alone.
		delete(payload, w.key(memory.FieldUses))
		delete(payload, w.key(memory.FieldLastUsedAt))
		if !st.revived && st.m.Tier == st.loadedTier && st.m.Retrievable == st.loadedRetr {
			// Consolidation's keys between reinforcements (docs/consolidation.md).
			delete(payload, w.key(memory.FieldTier))
			delete(payload, w.key(memory.FieldRetrievable))
		}
		sel := qdrant.NewPointsSelector(st.id)
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: payload, PointsSelector: sel}))
		if st.clearSuperseded {
			ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
				Keys: []string{w.key(memory.FieldSupersededBy)}, PointsSelector: sel}))
		}
		if st.clearFlags {
			ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
				Keys: []string{w.key(memory.FieldFlags)}, PointsSelector: sel}))
		}
		if keys := w.unsetExtractor(&st.m); len(keys) > 0 {
			ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
				Keys: keys, PointsSelector: sel}))
		}
		if st.mergedAccess > 0 {
			key := w.key(memory.FieldAccessCounts)
			ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
				Payload:        map[string]*qdrant.Value{memory.MergedAccessKey: qdrant.NewValueInt(st.mergedAccess)},
				PointsSelector: sel, Key: &key}))
		}
	}
	if len(pts) > 0 {
		points = append(points, qdrant.NewPointsUpdateUpsert(&qdrant.PointsUpdateOperation_PointStructList{Points: pts}))
	}
	return append(points, ops...)
}

// unsetExtractor are the extractor keys the payload has and the memory no
// longer does (Encode leaves them out, and a payload update would keep
// them): an empty extractor_model written before it was left out, or an
// extractor adopted from an observation that gave no model or logprob.
func (w *write) unsetExtractor(m *memory.Memory) []string {
	var keys []string
	if m.ExtractorModel == "" && m.Present.Has(memory.FieldExtractorModel) {
		keys = append(keys, w.key(memory.FieldExtractorModel))
	}
	if !m.HasLogprob && m.Present.Has(memory.FieldExtractorLogprob) {
		keys = append(keys, w.key(memory.FieldExtractorLogprob))
	}
	return keys
}

// idString is a point id as memrank's APIs show it: the number in decimal,
// or the UUID.
func idString(id *qdrant.PointId) string { return qdrantjson.PointIDString(id) }

// parseID reads a point id: an unsigned integer or a UUID.
func parseID(s string) (*qdrant.PointId, error) {
	if id, ok := qdrantjson.ParsePointID(s); ok {
		return id, nil
	}
	return nil, fmt.Errorf("%q is neither an unsigned integer nor a UUID", truncate(s))
}

func denseVector(v *qdrant.VectorsOutput) []float32 {
	out := v.GetVector()
	if out == nil {
		return nil
	}
	if d := out.GetDense(); d != nil {
		return d.GetData()
	}
	return out.GetData() //nolint:staticcheck // servers before 1.12 fill only the deprecated flat field
}
