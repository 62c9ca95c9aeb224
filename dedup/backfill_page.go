package dedup

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// item is one point of a page that the backfill makes a memory.
type item struct {
	p      *qdrant.RetrievedPoint
	orig   map[string]*qdrant.Value // its payload before the backfill
	st     *stored
	o      observation
	tenant string
	scope  string    // the mapping's scope values: only equal scopes merge
	vec    []float32 // read only to merge duplicates
	audit  []AuditRecord
}

func (it *item) key() string { return it.tenant + "\x01" + it.scope + "\x00" + it.o.hash }

// page handles one page: computes the memory of every point that is not one
// yet, merges duplicates when asked, and (unless dry) writes originals,
// audit records and memories, in that order. A page redone after an
// interruption finds the points the interrupted run wrote (they have
// memrank_schema and an original): they are counted, not written again.
func (bf *backfiller) page(ctx context.Context, pts []*qdrant.RetrievedPoint, redo bool) error {
	schemaKey := bf.e.codec.Key(memory.FieldSchema)
	var done map[string]map[string]*qdrant.Value
	if redo {
		var ids []*qdrant.PointId
		for _, p := range pts {
			if !isNullValue(p.GetPayload()[schemaKey]) {
				ids = append(ids, p.GetId())
			}
		}
		var err error
		if done, err = bf.runner.Originals(ctx, ids); err != nil {
			return err
		}
	}
	var items []*item
	for _, p := range pts {
		bf.rep.Points++
		payload := p.GetPayload()
		if !isNullValue(payload[schemaKey]) {
			if orig, ok := done[idString(p.GetId())]; ok {
				if it, err := bf.compute(p, orig); err == nil && it != nil {
					bf.count(it)
				}
				if !isNullValue(payload[bf.e.codec.Key(memory.FieldSupersededBy)]) {
					bf.rep.Merged++
				}
				continue
			}
			bf.rep.Already++
			continue
		}
		it, err := bf.compute(p, payload)
		if err != nil {
			return err
		}
		if it == nil {
			bf.rep.Unscored++
			continue
		}
		bf.count(it)
		items = append(items, it)
	}
	var survivors []survivor
	if bf.b.MergeDuplicates {
		var err error
		if survivors, err = bf.merge(ctx, items); err != nil {
			return err
		}
	}
	if bf.b.DryRun || len(items) == 0 {
		return nil
	}
	return bf.write(ctx, items, survivors)
}

// compute reads one payload with the mapping and computes its memory as
// the write path computes a new one. nil: the point is left unscored (the
// reason counted); an error: it lacks evidence and the run may not leave it.
func (bf *backfiller) compute(p *qdrant.RetrievedPoint, payload map[string]*qdrant.Value) (*item, error) {
	e, rep := bf.e, bf.rep
	f := bf.b.Mapping.Read(payload)
	for _, pr := range f.Problems {
		rep.problem(pr)
	}
	missing := ""
	switch {
	case f.Text == "":
		missing = "no_text"
	case f.CreatedAt.IsZero() && !bf.b.AssumeTime.IsZero():
		f.CreatedAt = bf.b.AssumeTime
		rep.problem("time_assumed")
	case f.CreatedAt.IsZero():
		missing = "no_time"
	}
	if missing != "" {
		rep.problem(missing)
		if !bf.b.LeaveUnscored && !bf.b.DryRun {
			return nil, fmt.Errorf("%w %s: point %s has %s (%s mapping); give --leave-unscored to leave such points as they are, "+
				"or --assume-time for a missing time, then run it again (it resumes)",
				ErrBackfill, bf.b.Collection, idString(p.GetId()), missingText(missing), bf.b.Mapping.Name)
		}
		return nil, nil
	}
	tenant := ""
	if e.tenancyOn() {
		if tenant = scalarString(payload[e.cfg.Tenancy.PayloadKey()]); tenant == "" {
			rep.problem("no_tenant")
			return nil, nil
		}
	}
	o, ok := bf.observation(f, tenant)
	if !ok {
		return nil, nil
	}
	observed := f.LastObservedAt.UTC()
	if observed.Before(o.at) {
		observed = o.at
	}
	m := memory.Memory{
		Text: o.Text, MemoryType: o.typeName, Source: o.sourceName, ExtractorModel: o.ExtractorModel,
		Grounding: o.grounding, Confidence: o.ev.Confidence, HasConfidence: true, DecayCategory: o.DecayCategory,
		CreatedAt: o.at, LastObservedAt: observed, TextHash: o.hash, Retrievable: true, Tier: scoring.TierActive,
		Schema: memory.SchemaVersion,
	}
	st := &stored{id: p.GetId(), sid: idString(p.GetId()), hash: o.hash}
	st.m = e.codec.DecodeQdrant(e.codec.Encode(&m))
	bf.materialise(&st.m)
	it := &item{p: p, orig: payload, st: st, o: o, tenant: tenant, scope: f.Scope, vec: denseVector(p.GetVectors())}
	if k := bf.conflict(payload, e.codec.Encode(&st.m)); k != "" {
		rep.problem("key_conflict:" + k)
		return nil, nil
	}
	it.audit = []AuditRecord{{MemoryID: st.sid, Reason: "backfill", New: memory.RoundConfidence(st.m.Confidence), At: o.at,
		Source: o.ev.Source, Extractor: o.ev.Extractor, Type: o.ev.Type, Grounding: o.grounding.String(), Decision: DecisionBackfilled}}
	return it, nil
}

func missingText(kind string) string {
	if kind == "no_text" {
		return "no text"
	}
	return "no time"
}

// observation resolves the mapped fields as the write path resolves an
// observation's (prepare), so the confidence is the one it would compute.
func (bf *backfiller) observation(f foreign.Fields, tenant string) (observation, bool) {
	rep := bf.rep
	extractor := bf.b.ExtractorModel
	if extractor == "" {
		extractor = f.ExtractorModel
	}
	if extractor == "" {
		rep.problem("unknown_extractor")
	}
	grounding := f.Grounding
	if grounding != "" {
		g, ok := memory.ParseGrounding(grounding)
		if !ok {
			rep.problem("invalid_grounding")
			return observation{}, false
		}
		grounding = g.String()
	}
	o, rejected, err := bf.e.prepare(Observation{Collection: bf.b.Collection, Tenant: tenant, Text: f.Text,
		MemoryType: f.MemoryType, Source: f.Source, ExtractorModel: extractor, Grounding: grounding,
		ObservedAt: f.CreatedAt, DecayCategory: f.DecayCategory})
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		rep.problem("invalid_" + ie.Field)
		return o, false
	case err != nil:
		rep.problem("invalid")
		return o, false
	case rejected:
		rep.problem("grounding_not_supported")
		return o, false
	}
	return o, true
}

// score evaluates a memory as the read path would now.
func (bf *backfiller) score(m *memory.Memory) scoring.Score {
	in := bf.e.codec.Inputs(m)
	return bf.e.params.Evaluate(&in, 1, bf.now)
}

// materialise stores the tier consolidation would, as a label: age never
// takes a memory out of answers (a superseded memory stays out).
func (bf *backfiller) materialise(m *memory.Memory) {
	s := bf.score(m)
	m.Tier = s.Tier
	m.Retrievable = m.SupersededBy == ""
}

func (bf *backfiller) count(it *item) {
	r := bf.rep
	s := bf.score(&it.st.m)
	if r.Tiers == nil {
		r.Tiers, r.Buckets = map[string]int{}, map[string]int{}
	}
	r.Backfilled++
	r.Tiers[s.Tier.String()]++ // as stored
	r.Buckets[s.Bucket.String()]++
	if s.Confidence < bf.e.params.RetrievalGate {
		r.Gated++
	}
	if !s.Flags.Has(scoring.FlagWithinFloor) {
		r.Decayed++
	}
	if s.Tier == scoring.TierArchived {
		r.Archived++
	}
}

// conflict is the first key memrank would write that the payload already
// holds with another meaning ("" when none): the point is then left as it
// is, since its own value must not be overwritten. A value that means the
// same (the same time in another format, a source alias) is kept as it is.
func (bf *backfiller) conflict(orig, enc map[string]*qdrant.Value) string {
	for f := memory.FieldText; f <= memory.FieldSchema; f++ {
		k := bf.e.codec.Key(f)
		ov, v := orig[k], enc[k]
		if v == nil || isNullValue(ov) || bf.same(f, ov, v) {
			continue
		}
		return k
	}
	return ""
}

// same reports whether a stored value means what memrank would write.
func (bf *backfiller) same(f memory.Field, ov, v *qdrant.Value) bool {
	if proto.Equal(ov, v) {
		return true
	}
	p := bf.e.params
	switch f {
	case memory.FieldCreatedAt, memory.FieldLastObservedAt, memory.FieldLastAccessedAt:
		a, ok1 := foreign.ParseTime(ov)
		b, ok2 := foreign.ParseTime(v)
		return ok1 && ok2 && a.Equal(b)
	case memory.FieldSource:
		a, _, ok := memory.ParseSource(ov.GetStringValue(), p.SourceLevels)
		return ok && a == v.GetStringValue()
	case memory.FieldMemoryType:
		a, _, ok := memory.ParseType(ov.GetStringValue(), p.TypePriors)
		return ok && a == v.GetStringValue()
	case memory.FieldGrounding:
		g, ok := memory.ParseGrounding(ov.GetStringValue())
		return ok && g.String() == v.GetStringValue()
	}
	return false
}

// writeSet is enc without the keys a SetPayload must leave: those the
// point's original payload holds (another tool's keys are never changed,
// even when a merge moves the memory's value: compute made sure they meant
// the same before) and those cur already holds with the same meaning.
func (bf *backfiller) writeSet(orig, cur, enc map[string]*qdrant.Value) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(enc))
	for f := memory.FieldText; f <= memory.FieldSchema; f++ {
		k := bf.e.codec.Key(f)
		v, ok := enc[k]
		if !ok || !isNullValue(orig[k]) {
			continue
		}
		if ov := cur[k]; !isNullValue(ov) && bf.same(f, ov, v) {
			continue
		}
		out[k] = v
	}
	return out
}

// backfillAuditID is the id of a backfilled point's seq-th audit record:
// derived from the point, so a redone page writes the same records.
func backfillAuditID(coll, tenant, sid string, seq int) string {
	return memory.DeterministicID(coll, tenant, "backfill", sid, strconv.Itoa(seq))
}

// write stores a page: the originals first (rollback needs them before
// anything changes), then the audit records, then the memories in one
// batch. A crash between the audit and the memories leaves records whose
// points are not yet memories; the redone page writes the same records
// again (same ids) and the memories.
func (bf *backfiller) write(ctx context.Context, items []*item, survivors []survivor) error {
	e, coll := bf.e, bf.b.Collection
	pts := make([]*qdrant.RetrievedPoint, len(items))
	for i, it := range items {
		pts[i] = it.p
	}
	if err := bf.runner.Keep(ctx, pts, false); err != nil {
		return err
	}
	if len(survivors) > 0 {
		sp := make([]*qdrant.RetrievedPoint, len(survivors))
		for i, s := range survivors {
			sp[i] = s.raw
		}
		if err := bf.runner.Keep(ctx, sp, true); err != nil {
			return err
		}
	}
	var recs []*qdrant.PointStruct
	var ops []*qdrant.PointsUpdateOperation
	for _, it := range items {
		for seq, r := range it.audit {
			r.Decision = DecisionBackfilled
			recs = append(recs, e.auditPoint(coll, it.tenant, backfillAuditID(coll, it.tenant, it.st.sid, seq), seq, r))
		}
		bf.materialise(&it.st.m)
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: bf.writeSet(it.orig, it.orig, e.codec.Encode(&it.st.m)), PointsSelector: qdrant.NewPointsSelector(it.p.GetId())}))
	}
	if len(survivors) > 0 {
		ids := make([]*qdrant.PointId, len(survivors))
		for i, s := range survivors {
			ids[i] = s.st.id
		}
		origs, err := bf.runner.Originals(ctx, ids)
		if err != nil {
			return err
		}
		for _, s := range survivors {
			ops = append(ops, bf.survivorOps(s, origs[s.st.sid])...)
		}
	}
	wctx, cancel := e.deadline(ctx)
	defer cancel()
	wait := true
	if _, err := e.store.Upsert(wctx, &qdrant.UpsertPoints{CollectionName: auditCollection(coll), Wait: &wait, Points: recs}); err != nil {
		return fmt.Errorf("dedup: write the backfill's audit of %s: %w", coll, err)
	}
	if _, err := e.store.UpdateBatch(wctx, &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: &wait, Operations: ops}); err != nil {
		return fmt.Errorf("dedup: write memories to %s: %w", coll, err)
	}
	return nil
}

func isNullValue(v *qdrant.Value) bool {
	if v == nil || v.GetKind() == nil {
		return true
	}
	_, null := v.GetKind().(*qdrant.Value_NullValue)
	return null
}

// scalarString is a tenancy or scope value as text ("" for none).
func scalarString(v *qdrant.Value) string {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return k.StringValue
	case *qdrant.Value_IntegerValue:
		return strconv.FormatInt(k.IntegerValue, 10)
	}
	return ""
}
