package consolidate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

// state is what the job materialises: the tier and retrievable keys.
type state struct {
	tier        scoring.Tier
	retrievable bool
}

func (s state) String() string { return s.tier.String() }

// change is one memory's transition, with the raw values it was decided
// from: the write only applies while they are unchanged.
type change struct {
	id    *qdrant.PointId
	sid   string
	from  state
	to    state
	basis map[string]*qdrant.Value // key -> the stored value (nil: absent)
	// materialise: the stored keys are absent or unreadable although their
	// defaults equal the target; written, not audited.
	materialise bool
	tenant      *qdrant.Value // the tenancy key's value, copied onto the audit record
	confidence  float64
	n           int
	reason      string // audit reason: reasonTier, reasonArchive or reasonLift
	// tierNow is the tier computed at the run's clock (the decay floor
	// included): what the memory's tier is once it is retrievable.
	tierNow scoring.Tier
	// lifts is, for a lift, the id of the audit record of the age archive
	// it undoes; for a reviewer's archive of an age archive (adopt), the
	// same: the record the archive takes over from.
	lifts string
	// adopt: a reviewer's archive of a memory an earlier version archived
	// for age. The stored state does not change, but the archive is
	// written (its token) and audited, so the memory stays archived.
	adopt bool
}

// Audit reasons of the job's records.
const (
	// reasonTier: the tier label changed (decision consolidated).
	reasonTier = "tier"
	// reasonArchive: a reviewer archived the memory (decision reviewed).
	reasonArchive = "archive"
	// reasonLift: an age archive of an earlier version was lifted: the
	// memory is retrievable again (decision consolidated).
	reasonLift = "age_archive_lifted"
)

func (c change) label() string { return c.from.String() + "->" + c.to.String() }

// audited reports whether the change is a transition with an audit record
// (and a token in the point), rather than a materialisation.
func (c change) audited() bool { return c.from != c.to || c.adopt }

// excluded is the stored state of a memory taken out of answers: archived by a
// reviewer, by an earlier version for age, or, with another writer's
// retrievable false, labelled archived.
var excluded = state{scoring.TierArchived, false}

// basisFields are the keys whose change between the read and the write
// means the decision is out of date: the write path's reinforcement, an
// access, a supersession, another replica's write.
var basisFields = []memory.Field{memory.FieldTier, memory.FieldRetrievable, memory.FieldSupersededBy,
	memory.FieldConfidence, memory.FieldObservations, memory.FieldLastObservedAt, memory.FieldCreatedAt,
	memory.FieldLastAccessedAt}

// decide computes the state to store for a memory at now: its tier label
// (scoring's tier, archived past the decay floor) and retrievable true,
// since age never takes a memory out of answers; a memory stored as not
// retrievable stays out, labelled archived. Whether such a memory is an
// earlier version's age archive, to be lifted, is for the audit trail to
// say (lift.go). ok is false for points the job never writes: unscored or
// foreign points, and superseded memories (never un-superseded).
func (j *Job) decide(p *qdrant.RetrievedPoint, now time.Time) (change, bool) {
	payload := p.GetPayload()
	m := j.codec.DecodeQdrant(payload)
	if m.Unscored() || !m.IsRecord() || m.SupersededBy != "" {
		return change{}, false
	}
	in := j.codec.Inputs(&m)
	s := j.params.Evaluate(&in, 1, now)
	c := change{id: p.GetId(), sid: idString(p.GetId()), from: state{m.Tier, m.Retrievable},
		confidence: s.Confidence, n: m.Observations, reason: reasonTier, tierNow: s.Tier}
	switch {
	case !m.Retrievable:
		// A memory taken out of answers (a reviewer's archive, another
		// writer's exclusion, an earlier version's age archive until the
		// run lifts it) stays out, labelled archived, until the write path
		// reinforces it.
		c.to = excluded
	default:
		// Age never takes a memory out: the tier is a label.
		c.to = state{s.Tier, true}
	}
	c.materialise = !m.Present.Has(memory.FieldTier) || !m.Present.Has(memory.FieldRetrievable)
	c.basis = j.basis(payload)
	if j.tenancyOn() {
		c.tenant = payload[j.tenant.PayloadKey()]
	}
	return c, true
}

func (j *Job) basis(payload map[string]*qdrant.Value) map[string]*qdrant.Value {
	b := make(map[string]*qdrant.Value, len(basisFields))
	for _, f := range basisFields {
		k := j.codec.Key(f)
		b[k] = payload[k]
	}
	return b
}

// selector selects the point only while every basis value is unchanged: a
// compare-and-set. A value no condition can express (an object or a list)
// is left out of the condition.
func selector(id *qdrant.PointId, basis map[string]*qdrant.Value) *qdrant.PointsSelector {
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(id)}}
	for k, v := range basis {
		if c := equals(k, v); c != nil {
			f.Must = append(f.Must, c)
		}
	}
	return qdrant.NewPointsSelectorFilter(f)
}

// equals is the condition "key holds v" (v nil or null: absent or null).
func equals(key string, v *qdrant.Value) *qdrant.Condition {
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return qdrant.NewIsEmpty(key)
	case *qdrant.Value_StringValue:
		return qdrant.NewMatchKeyword(key, k.StringValue)
	case *qdrant.Value_IntegerValue:
		return qdrant.NewMatchInt(key, k.IntegerValue)
	case *qdrant.Value_BoolValue:
		return qdrant.NewMatchBool(key, k.BoolValue)
	case *qdrant.Value_DoubleValue:
		return qdrant.NewRange(key, &qdrant.Range{Gte: &k.DoubleValue, Lte: &k.DoubleValue})
	}
	return nil
}

// changeKey is the payload key a transition writes next to tier and
// retrievable: the id of its audit record. It is the per-change token that
// tells the read-back whose write the stored state is: only consolidation
// writes it, and the write path's partial writes leave it alone.
const changeKey = "memrank_tier_change"

// apply writes the changes as compare-and-sets in one batch, reads them
// back, and audits the transitions whose write applied: the point carries
// the change's token (this job's write, or an identical one of another
// replica, which shares the record's id).
func (j *Job) apply(ctx context.Context, coll string, changes []change, rep *Report) error {
	if len(changes) == 0 {
		return nil
	}
	tierKey, retrKey := j.codec.Key(memory.FieldTier), j.codec.Key(memory.FieldRetrievable)
	ops := make([]*qdrant.PointsUpdateOperation, len(changes))
	tokens := make([]string, len(changes))
	for i, c := range changes {
		payload := map[string]*qdrant.Value{
			tierKey: qdrant.NewValueString(c.to.tier.String()),
			retrKey: qdrant.NewValueBool(c.to.retrievable),
		}
		if c.audited() {
			tokens[i] = j.auditID(coll, c)
			payload[changeKey] = qdrant.NewValueString(tokens[i])
		}
		ops[i] = qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: payload, PointsSelector: selector(c.id, c.basis),
		})
	}
	wait := true
	wctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	_, err := j.store.UpdateBatch(wctx, &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: &wait, Operations: ops})
	cancel()
	if err != nil {
		return storeError(fmt.Sprintf("write tiers to %s", coll), err)
	}
	held, err := j.held(ctx, coll, changes, tokens)
	if err != nil {
		return err
	}
	var recs []*qdrant.PointStruct
	for i, c := range changes {
		if !held[i] {
			rep.Conflicts++
			continue
		}
		rep.Written++
		if !c.audited() {
			continue
		}
		rep.count(c)
		recs = append(recs, j.auditPoint(coll, c))
	}
	if err := j.upsert(ctx, memory.AuditCollection(coll), recs); err != nil {
		return err
	}
	rep.Audited += len(recs)
	return nil
}

// held reads the changed points back and reports, per change, whether its
// write applied. A transition applied when the point carries its token,
// whatever else changed since: an access counted or a corroboration
// written after the write does not undo it, and checking those would leave
// it unaudited for good (the next run finds from == to). A change of
// another replica decided from other values carries another token, and
// that replica audits it. A materialisation (no token) applied when the
// point holds its target.
func (j *Job) held(ctx context.Context, coll string, changes []change, tokens []string) ([]bool, error) {
	ids := make([]*qdrant.PointId, len(changes))
	for i, c := range changes {
		ids[i] = c.id
	}
	gctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	pts, err := j.store.Get(gctx, &qdrant.GetPoints{CollectionName: coll, Ids: ids, WithPayload: qdrant.NewWithPayload(true)})
	cancel()
	if err != nil {
		return nil, storeError(fmt.Sprintf("read back %s", coll), err)
	}
	byID := make(map[string]map[string]*qdrant.Value, len(pts))
	for _, p := range pts {
		byID[idString(p.GetId())] = p.GetPayload()
	}
	tierKey, retrKey := j.codec.Key(memory.FieldTier), j.codec.Key(memory.FieldRetrievable)
	out := make([]bool, len(changes))
	for i, c := range changes {
		pl, ok := byID[c.sid]
		switch {
		case !ok:
		case tokens[i] != "":
			out[i] = pl[changeKey].GetStringValue() == tokens[i]
		default:
			b, isBool := pl[retrKey].GetKind().(*qdrant.Value_BoolValue)
			out[i] = pl[tierKey].GetStringValue() == c.to.tier.String() && isBool && b.BoolValue == c.to.retrievable
		}
	}
	return out, nil
}

// valueKey is a value's canonical text, for deterministic ids.
func valueKey(v *qdrant.Value) string {
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return "-"
	case *qdrant.Value_StringValue:
		return "s" + k.StringValue
	case *qdrant.Value_IntegerValue:
		return "i" + strconv.FormatInt(k.IntegerValue, 10)
	case *qdrant.Value_DoubleValue:
		return "d" + strconv.FormatFloat(k.DoubleValue, 'g', -1, 64)
	case *qdrant.Value_BoolValue:
		return "b" + strconv.FormatBool(k.BoolValue)
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(v)
	return "x" + string(b)
}

// idString is a point id as memrank's APIs show it.
func idString(id *qdrant.PointId) string { return qdrantjson.PointIDString(id) }
