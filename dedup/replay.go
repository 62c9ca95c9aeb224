package dedup

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// maxReplayDepth bounds how deep merges are followed: a memory merged into
// one merged into another... Deeper merges use the loser's stored state.
const maxReplayDepth = 16

// replayer recomputes memories from their audit trails without the
// evidence being forgotten (docs/forgetting.md). It runs under the
// collection and tenant's write lock, and caches what it reads.
type replayer struct {
	e       *Engine
	coll    string
	tenant  string
	session string // the session being forgotten

	trails map[string][]trailRecord
	mems   map[string]*stored // nil: no such memory in the tenant
	full   map[string]*replayState
	busy   map[string]bool // full replays in progress (contradiction cycles)
	drop   map[string]bool // memories being deleted: absent for the replay
}

func newReplayer(e *Engine, coll, tenant, session string) *replayer {
	return &replayer{e: e, coll: coll, tenant: tenant, session: session,
		trails: map[string][]trailRecord{}, mems: map[string]*stored{},
		full: map[string]*replayState{}, busy: map[string]bool{}, drop: map[string]bool{}}
}

// replayState is a memory rebuilt from the evidence that remains.
type replayState struct {
	m        memory.Memory // names, levels, lists, times, contradictions, superseded_by
	ev       scoring.Evidence
	has      bool // some evidence remains
	external bool // the memory existed before its first audit record
	// exact: entities and modalities were recomputed from records (every
	// evidence record carried them); otherwise forgotten lists the values
	// only forgotten records carried.
	exact                  bool
	forgotEnt, forgotModal []string
	keptEnt, keptModal     []string
	// corrobAll is the corroborations that counted before this forget:
	// when the stored count is that, every corroboration has a record and
	// m.Corroborations (those that still count) replaces it.
	corrobAll int
	// confirmed are the sessions whose confirmation counted ("" for those
	// without a session): a later one from the same adds no observation,
	// as on the write path.
	confirmed map[string]bool
}

// memory reads one memory of the tenant (cached; nil when absent).
func (r *replayer) memory(ctx context.Context, id string) (*stored, error) {
	if r.drop[id] {
		return nil, nil
	}
	if st, ok := r.mems[id]; ok {
		return st, nil
	}
	pid, err := parseID(id)
	if err != nil {
		r.mems[id] = nil
		return nil, nil //nolint:nilerr // a malformed related id in an old record names no memory
	}
	w := &write{e: r.e, coll: r.coll, tenant: r.tenant}
	st, err := w.load(ctx, pid)
	if err != nil && !isErrNotFound(err) {
		return nil, err
	}
	r.mems[id] = st
	return st, nil
}

func (r *replayer) trail(ctx context.Context, id string) ([]trailRecord, error) {
	if t, ok := r.trails[id]; ok {
		return t, nil
	}
	t, err := r.e.scrollAudit(ctx, r.coll, r.e.trailFilter(r.tenant, id), maxAuditRecords)
	if err != nil {
		return nil, err
	}
	for i := range t {
		t[i].forgottenHere = r.session != "" && t[i].SessionID == r.session
	}
	r.trails[id] = t
	return t, nil
}

// counts reports whether a record still brings its evidence.
func counts(rec *trailRecord) bool {
	return isEvidence(rec.Reason) && !rec.Forgotten && !rec.forgottenHere && !rec.dropped
}

// gone reports whether a memory is absent, or will be deleted because no
// evidence for it remains.
func (r *replayer) gone(ctx context.Context, id string) (bool, error) {
	if r.busy[id] {
		return false, nil
	}
	st, err := r.replayAll(ctx, id)
	if err != nil {
		return false, err
	}
	return st == nil || !st.has, nil
}

// replayAll is the memory rebuilt from its whole trail; nil when it does
// not exist.
func (r *replayer) replayAll(ctx context.Context, id string) (*replayState, error) {
	if st, ok := r.full[id]; ok {
		return st, nil
	}
	cur, err := r.memory(ctx, id)
	if err != nil || cur == nil {
		return nil, err
	}
	r.busy[id] = true
	st, err := r.replay(ctx, cur, 0, 0)
	delete(r.busy, id)
	if err != nil {
		return nil, err
	}
	r.full[id] = st
	return st, nil
}

// replay rebuilds cur from its audit records written before until (0: all).
func (r *replayer) replay(ctx context.Context, cur *stored, until int64, depth int) (*replayState, error) {
	trail, err := r.trail(ctx, cur.sid)
	if err != nil {
		return nil, err
	}
	st := r.base(cur, trail)
	for i := range trail {
		rec := &trail[i]
		if until > 0 && rec.written >= until {
			break
		}
		if rec.forgetRecord || rec.dropped {
			continue
		}
		switch {
		case isEvidence(rec.Reason):
			if !counts(rec) {
				st.forgotEnt = append(st.forgotEnt, rec.Entities...)
				st.forgotModal = addBounded(st.forgotModal, rec.Modality)
				continue
			}
			r.apply(st, rec, cur.hash)
		case rec.Reason == "merge":
			if err := r.merge(ctx, st, rec, depth); err != nil {
				return nil, err
			}
		case rec.Reason == "contradiction":
			lost, err := r.gone(ctx, rec.Related)
			if err != nil {
				return nil, err
			}
			if !lost {
				st.m.Contradictions++
				if rec.New < rec.Old && st.has {
					// Seed 001's penalty was taken (docs/write-path.md,
					// evidence rules), and the contradiction still stands.
					st.ev.Confidence = memory.RoundConfidence(r.e.contradictionPenalty(st.ev.Confidence))
				}
			}
			st.m.SupersededBy = "" // it won
		case rec.Reason == reasonUnresolved:
			lost, err := r.gone(ctx, rec.Related)
			if err != nil {
				return nil, err
			}
			if !lost {
				st.m.Contradictions++
			}
		case rec.Reason == reasonCorroboration:
			if err := r.corroborate(ctx, st, rec); err != nil {
				return nil, err
			}
		case rec.Reason == "superseded":
			st.m.SupersededBy = rec.Related
		}
	}
	return st, nil
}

// base is the state before the first audit record: nothing for a memory
// the write path inserted; for one written by something else (no insert
// record, an id that is not the write path's), the stored memory without
// what the records account for.
func (r *replayer) base(cur *stored, trail []trailRecord) *replayState {
	st := &replayState{exact: true}
	born := cur.sid == memoryID(r.coll, r.tenant, cur.hash, cur.m.Speaker)
	for i := range trail {
		born = born || trail[i].Reason == "insert"
		if isEvidence(trail[i].Reason) && !trail[i].Evidence {
			st.exact = false
		}
	}
	if born {
		// Only the names: a record that gives levels alone keeps the stored
		// name (and extractor model) when its level is the stored one.
		m := &cur.m
		st.m.Source, st.m.MemoryType, st.m.ExtractorModel = m.Source, m.MemoryType, m.ExtractorModel
		st.m.ExtractorLogprob, st.m.HasLogprob, st.m.Levels = m.ExtractorLogprob, m.HasLogprob, m.Levels
		return st
	}
	st.external, st.exact = true, false
	st.m = cur.m
	st.m.SessionIDs, st.m.TurnIDs = nil, nil
	st.m.SupersededBy = ""
	named := map[string]bool{r.session: r.session != ""}
	turns := map[string]bool{}
	wins, corrob := 0, 0
	for _, t := range trail {
		named[t.SessionID] = t.SessionID != ""
		turns[turnKey(t.SessionID, t.TurnID)] = true
		switch {
		case t.Reason == "contradiction", t.Reason == reasonUnresolved:
			wins++
		case t.Reason == reasonCorroboration && !t.Forgotten && !t.dropped && !t.forgetRecord:
			corrob++
		}
	}
	for _, s := range cur.m.SessionIDs {
		if !named[s] {
			st.m.SessionIDs = append(st.m.SessionIDs, s)
		}
	}
	for _, t := range cur.m.TurnIDs {
		if !turns[t] && (r.session == "" || !hasSessionPrefix(t, r.session)) {
			st.m.TurnIDs = append(st.m.TurnIDs, t)
		}
	}
	st.m.Contradictions = max(0, cur.m.Contradictions-wins)
	// What the other tool counted stays; the records add theirs again.
	st.m.Corroborations = max(0, cur.m.Corroborations-corrob)
	st.corrobAll = st.m.Corroborations
	w := &write{e: r.e}
	st.ev = w.evidence(&cur.m)
	if len(trail) > 0 {
		st.ev.Confidence, st.ev.Observations = trail[0].Old, trail[0].OldN
	}
	// A memory with no trail that only the forgotten session supported is
	// gone; any other outside memory existed before memrank saw it.
	st.has = !(len(trail) == 0 && r.session != "" && len(cur.m.SessionIDs) > 0 && len(st.m.SessionIDs) == 0)
	return st
}

func hasSessionPrefix(turn, session string) bool {
	return len(turn) > len(session) && turn[:len(session)] == session && turn[len(session)] == ':'
}

// apply replays one evidence record: the write path's arithmetic, with the
// independence rule decided again on what remains.
func (r *replayer) apply(st *replayState, rec *trailRecord, memHash string) {
	p := r.e.params
	g := scoring.GroundingSupported
	if rec.Grounding != "" {
		g, _ = memory.ParseGrounding(rec.Grounding)
	}
	obs := scoring.Evidence{Components: scoring.Components{Source: rec.Source, Extractor: rec.Extractor, Type: rec.Type}, Grounding: g}
	obs.Confidence = p.Grounded(obs.Components, g)
	switch {
	case rec.Reason == reasonConfirm:
		if !st.has {
			return // a confirmation of a statement that is gone confirms nothing
		}
		next := p.Confirm(st.ev)
		if st.confirmed[rec.SessionID] {
			next = r.e.reconfirm(st.ev)
		}
		if st.confirmed == nil {
			st.confirmed = map[string]bool{}
		}
		st.confirmed[rec.SessionID] = true
		if next.Source > st.ev.Source {
			st.m.Source = r.levelName(p.SourceLevels, next.Source, st.m.Source)
		}
		st.ev = next
	case !st.has:
		st.ev, st.has = obs, true
		r.adopt(st, rec)
	default:
		independent := r.independent(st, rec, memHash)
		next := p.Reobserve(st.ev, obs, independent)
		if independent && r.e.recurring(&st.m, next.Observations+1) {
			next.Confidence = st.ev.Confidence // seed 002's flag: counted, not believed more
		}
		if obsComponents(next) == obsComponents(obs) && obsComponents(next) != obsComponents(st.ev) {
			r.adopt(st, rec)
		}
		st.ev = next
	}
	st.ev.Confidence = memory.RoundConfidence(st.ev.Confidence)
	m := &st.m
	m.SessionIDs = addBounded(m.SessionIDs, rec.SessionID)
	m.TurnIDs = addBounded(m.TurnIDs, turnKey(rec.SessionID, rec.TurnID))
	m.Entities = union(m.Entities, rec.Entities)
	st.keptEnt = union(st.keptEnt, rec.Entities)
	m.Modalities = addBounded(m.Modalities, rec.Modality)
	st.keptModal = addBounded(st.keptModal, rec.Modality)
	if rec.At.After(m.LastObservedAt) {
		m.LastObservedAt = rec.At
	}
	if !rec.At.IsZero() && (m.CreatedAt.IsZero() || rec.At.Before(m.CreatedAt)) {
		m.CreatedAt = rec.At
	}
}

// corroborate replays one corroboration while the corroborating
// observation still counts: not forgotten, and its memory not gone. It
// counts, and seed 001's boost is decided again behind the evidence gate,
// which counts the corroborations that remain as the write path counted
// them all (the write path records each one, boost or not).
func (r *replayer) corroborate(ctx context.Context, st *replayState, rec *trailRecord) error {
	if rec.Forgotten {
		return nil // forgotten by an earlier forget: out of the count already
	}
	st.corrobAll++
	if rec.forgottenHere {
		return nil
	}
	if rec.Related != "" {
		lost, err := r.gone(ctx, rec.Related)
		if err != nil || lost {
			return err
		}
	}
	st.m.Corroborations++
	if st.has && !r.e.cfg.Corroboration.Off {
		st.ev.Confidence = memory.RoundConfidence(r.e.corroborationBoost(st.ev.Confidence, st.m.Corroborations))
	}
	return nil
}

// independent is the write path's independence rule against the replayed
// memory. A record from before evidence was recorded cannot show its
// surface change: it stays independent only if it was, never becomes so.
func (r *replayer) independent(st *replayState, rec *trailRecord, memHash string) bool {
	m := &st.m
	if rec.SessionID == "" || slices.Contains(m.SessionIDs, rec.SessionID) {
		return false
	}
	first := m.CreatedAt
	if first.IsZero() {
		first = m.LastObserved()
	}
	if !first.IsZero() && rec.At.Sub(first) < r.e.cfg.MinIndependentGap {
		return false
	}
	if !r.e.cfg.RequireSurfaceChange {
		return rec.Evidence || rec.Reason == "independent"
	}
	if !rec.Evidence {
		return rec.Reason == "independent"
	}
	if rec.TextHash == memHash {
		return rec.Modality != "" && len(m.Modalities) > 0 && !slices.Contains(m.Modalities, rec.Modality)
	}
	return true
}

// adopt takes the record's source, type, extractor and grounding. Records
// from before the names were recorded give levels only: the names are
// found from the levels, and an extractor whose model is unknown is kept as
// its quality (extractor_logprob = ln e), which scores the same.
func (r *replayer) adopt(st *replayState, rec *trailRecord) {
	p := r.e.params
	m := &st.m
	m.Grounding = st.ev.Grounding
	if rec.Evidence {
		m.Source, m.MemoryType, m.ExtractorModel = rec.SourceName, rec.TypeName, rec.ExtractorModel
		m.HasLogprob = rec.ExtractorLogprob != nil
		if m.HasLogprob {
			m.ExtractorLogprob = *rec.ExtractorLogprob
		}
		if rec.Attribution != "" {
			m.Attribution = rec.Attribution // as the write path adopts it
		}
	} else {
		m.Source = r.levelName(p.SourceLevels, rec.Source, m.Source)
		m.MemoryType = r.levelName(p.TypePriors, rec.Type, m.MemoryType)
		if m.Levels.Extractor != rec.Extractor {
			m.ExtractorModel, m.HasLogprob, m.ExtractorLogprob = "", rec.Extractor > 0, math.Log(rec.Extractor)
		}
	}
	m.Levels.Source, m.Levels.Type, m.Levels.Extractor = rec.Source, rec.Type, rec.Extractor
}

// levelName is the name of a level: cur when it has that level, else the
// first name in order that does.
func (r *replayer) levelName(levels map[string]float64, v float64, cur string) string {
	if l, ok := levels[cur]; ok && l == v {
		return cur
	}
	for _, k := range slices.Sorted(maps.Keys(levels)) {
		if levels[k] == v {
			return k
		}
	}
	return cur
}

// merge replays the loser of a merge as it was when it was merged, and
// folds it in as the write path did.
func (r *replayer) merge(ctx context.Context, st *replayState, rec *trailRecord, depth int) error {
	lcur, err := r.memory(ctx, rec.Related)
	if err != nil || lcur == nil {
		return err
	}
	var l *replayState
	if depth < maxReplayDepth {
		if l, err = r.replay(ctx, lcur, rec.written, depth+1); err != nil {
			return err
		}
	} else {
		l = &replayState{m: lcur.m, ev: (&write{e: r.e}).evidence(&lcur.m), has: true, corrobAll: lcur.m.Corroborations}
	}
	if !l.has {
		return nil
	}
	st.forgotEnt = append(st.forgotEnt, l.forgotEnt...)
	st.forgotModal = union(st.forgotModal, l.forgotModal)
	st.keptEnt = union(st.keptEnt, l.keptEnt)
	st.keptModal = union(st.keptModal, l.keptModal)
	st.exact = st.exact && l.exact
	st.corrobAll += l.corrobAll
	wm, lm := &st.m, &l.m
	if !st.has {
		sup, wins, corrob := wm.SupersededBy, wm.Contradictions, wm.Corroborations
		*wm = *lm
		wm.SupersededBy, wm.Contradictions, wm.Corroborations = sup, wins+lm.Contradictions, corrob+lm.Corroborations
		st.ev, st.has = l.ev, true
		return nil
	}
	next := r.e.params.Merge(st.ev, l.ev)
	foldLoser(wm, lm, l.ev.Confidence > st.ev.Confidence) // as the write path's merge
	st.ev = next
	st.ev.Confidence = memory.RoundConfidence(st.ev.Confidence)
	return nil
}

// rebuilt is cur with the replayed state written over the fields the
// evidence decides; superseded says whether it stays superseded (its
// winner still stands).
func (r *replayer) rebuilt(ctx context.Context, cur *stored, st *replayState) (*stored, error) {
	m := cur.m
	s := &st.m
	m.Source, m.MemoryType, m.Grounding = s.Source, s.MemoryType, st.ev.Grounding
	m.ExtractorModel, m.ExtractorLogprob, m.HasLogprob = s.ExtractorModel, s.ExtractorLogprob, s.HasLogprob
	m.Levels.Source, m.Levels.Type, m.Levels.Extractor = st.ev.Source, st.ev.Type, st.ev.Extractor
	m.Observations = st.ev.Observations
	m.Confidence, m.HasConfidence = memory.RoundConfidence(st.ev.Confidence), true
	m.SessionIDs, m.TurnIDs = s.SessionIDs, s.TurnIDs
	if st.exact {
		m.Entities, m.Modalities = s.Entities, s.Modalities
	} else {
		m.Entities = without(cur.m.Entities, st.forgotEnt, st.keptEnt)
		m.Modalities = without(cur.m.Modalities, st.forgotModal, st.keptModal)
	}
	if !s.CreatedAt.IsZero() {
		m.CreatedAt = s.CreatedAt
	}
	if !s.LastObservedAt.IsZero() {
		m.LastObservedAt = s.LastObservedAt
	}
	m.Contradictions = s.Contradictions
	if st.corrobAll == cur.m.Corroborations {
		// Every corroboration has its record: the count is what remains.
		// Otherwise (records from before every corroboration was recorded)
		// the stored count stays.
		m.Corroborations = s.Corroborations
	}
	if st.exact {
		// Attribution is recorded with the evidence; older records lack it.
		m.Attribution = s.Attribution
	}
	m.Flags = s.Flags
	m.SupersededBy = s.SupersededBy
	if m.SupersededBy != "" {
		lost, err := r.gone(ctx, m.SupersededBy)
		if err != nil {
			return nil, err
		}
		if lost {
			m.SupersededBy = ""
		}
	}
	out := &stored{id: cur.id, sid: cur.sid, m: m, hash: cur.hash, dirty: true,
		loadedTier: cur.loadedTier, loadedRetr: cur.loadedRetr,
		clearFlags: len(cur.m.Flags) > 0 && len(m.Flags) == 0}
	switch {
	case m.SupersededBy != "":
		m.Retrievable = false
	case cur.m.SupersededBy != "":
		// Back in answers: age never keeps a memory out, and a person's
		// archive of a superseded memory is not recorded apart from it.
		out.clearSuperseded = true
		m.Retrievable = true
	}
	out.m = m
	return out, nil
}

// without is list minus the values only forgotten records carried.
func without(list, forgotten, kept []string) []string {
	var out []string
	for _, v := range list {
		if slices.Contains(forgotten, v) && !slices.Contains(kept, v) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// errTooMany is a forget that would read or touch more than one call may.
func errTooMany(what string, n int) error {
	return fmt.Errorf("%w: more than %d %s", ErrTooLarge, n, what)
}
