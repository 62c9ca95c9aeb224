package dedup

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
)

// Audit payload keys. The companion collection is memrank's own, so its
// keys are fixed.
const (
	auditKind       = "kind" // "audit" or "meta"
	auditMemoryID   = "memory_id"
	auditObsID      = "observation_id"
	auditOutcomeOf  = "outcome_of" // the observation_id, on the one record that carries the outcome
	auditOutcome    = "outcome"    // the Outcome as JSON
	auditSeq        = "seq"
	callerSupplied  = "" // model of a collection whose vectors callers supply
	maxAuditRecords = 10000
)

func auditCollection(c string) string { return memory.AuditCollection(c) }

// ensureMemories makes the memory collection exist (created says it did
// not) and checks its vectors.
func (e *Engine) ensureMemories(ctx context.Context, coll string, dims int, model string) (created bool, err error) {
	exists, err := e.store.CollectionExists(ctx, coll)
	if err != nil {
		return false, fmt.Errorf("dedup: look up collection %s: %w", coll, err)
	}
	if !exists {
		err := e.store.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: coll,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(dims), Distance: qdrant.Distance_Cosine}),
		})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return false, fmt.Errorf("dedup: create collection %s: %w", coll, err)
		}
		created = err == nil
	} else {
		info, err := e.store.GetCollectionInfo(ctx, coll)
		if err != nil {
			return false, fmt.Errorf("dedup: read collection %s: %w", coll, err)
		}
		params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
		if params == nil {
			return false, fmt.Errorf("%w: collection %s has named vectors; the write path writes the default vector", ErrEmbedderMismatch, coll)
		}
		if int(params.GetSize()) != dims {
			return false, mismatch(coll, UnrecordedEmbedder, int(params.GetSize()), model, dims)
		}
		return false, e.index(ctx, coll, e.missing(info.GetPayloadSchema(), e.memoryIndexes())...)
	}
	return created, e.index(ctx, coll, e.memoryIndexes()...)
}

// memoryIndexes are the payload indexes of a memory collection: the
// keyword ones the write path's look-ups and forgetting filter on, and the ones that let
// /v1/stats count without reading payloads (tier, confidence, memory type,
// retrievable). superseded_by is not indexed: its ids may be integers,
// which a keyword index leaves out, and Qdrant then answers is_empty from
// the index alone.
func (e *Engine) memoryIndexes() []payloadIndex {
	k := e.codec.Key
	keys := []payloadIndex{
		{k(memory.FieldTextHash), qdrant.FieldType_FieldTypeKeyword},
		{k(memory.FieldSessionIDs), qdrant.FieldType_FieldTypeKeyword},
		{k(memory.FieldTier), qdrant.FieldType_FieldTypeKeyword},
		{k(memory.FieldMemoryType), qdrant.FieldType_FieldTypeKeyword},
		{k(memory.FieldRetrievable), qdrant.FieldType_FieldTypeBool},
		{k(memory.FieldConfidence), qdrant.FieldType_FieldTypeFloat},
	}
	if e.tenancyOn() {
		keys = append(keys, payloadIndex{e.cfg.Tenancy.PayloadKey(), qdrant.FieldType_FieldTypeKeyword})
	}
	return keys
}

// payloadIndex is one payload index: its key and type.
type payloadIndex struct {
	key string
	typ qdrant.FieldType
}

func (e *Engine) missing(schema map[string]*qdrant.PayloadSchemaInfo, idx []payloadIndex) []payloadIndex {
	var out []payloadIndex
	for _, x := range idx {
		if _, ok := schema[x.key]; !ok {
			out = append(out, x)
		}
	}
	return out
}

// index creates payload indexes; failing to is logged, not fatal:
// look-ups and counts still work, only slower.
func (e *Engine) index(ctx context.Context, coll string, idx ...payloadIndex) error {
	wait := true
	for _, x := range idx {
		_, err := e.store.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: coll, FieldName: x.key, FieldType: x.typ.Enum(), Wait: &wait,
		})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("dedup: index %s in %s: %w", x.key, coll, err)
			}
			e.cfg.Telemetry.Logger.WarnContext(ctx, "payload index not created", "collection", coll, "key", x.key, "error", err)
		}
	}
	return nil
}

func (e *Engine) ensureAudit(ctx context.Context, coll string) error {
	_, err := e.EnsureAudit(ctx, coll)
	return err
}

// EnsureAudit creates coll's audit companion, with its indexes, unless it
// exists; created says this call made it. The write path calls it before
// its first write to a collection; jobs that audit their changes to a
// collection written by other tools (consolidation, a reviewer's archive)
// call it before theirs. The companion makes coll a memory collection:
// from then on memrank re-ranks its queries and consolidates it on
// schedule. The caller checks that coll exists.
func (e *Engine) EnsureAudit(ctx context.Context, coll string) (created bool, err error) {
	ac := auditCollection(coll)
	exists, err := e.store.CollectionExists(ctx, ac)
	if err != nil {
		return false, fmt.Errorf("dedup: look up collection %s: %w", ac, err)
	}
	if exists {
		return false, nil
	}
	err = e.store.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: ac,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 1, Distance: qdrant.Distance_Cosine}),
	})
	switch {
	case status.Code(err) == codes.AlreadyExists:
		// Another writer made it first.
	case err != nil:
		return false, fmt.Errorf("dedup: create collection %s: %w", ac, err)
	default:
		created = true
	}
	keys := []payloadIndex{{auditMemoryID, qdrant.FieldType_FieldTypeKeyword}, {auditOutcomeOf, qdrant.FieldType_FieldTypeKeyword},
		{auditSessionID, qdrant.FieldType_FieldTypeKeyword},
		// Forgetting's filters (docs/forgetting.md).
		{"reason", qdrant.FieldType_FieldTypeKeyword}, {auditForgotten, qdrant.FieldType_FieldTypeBool},
		{auditDropped, qdrant.FieldType_FieldTypeBool}}
	if e.tenancyOn() {
		keys = append(keys, payloadIndex{e.cfg.Tenancy.PayloadKey(), qdrant.FieldType_FieldTypeKeyword})
	}
	return created, e.index(ctx, ac, keys...)
}

// auditRecordOf reads an audit record from its companion point's payload:
// the one decoder of the trail, for its readers and for forgetting's
// replay.
func auditRecordOf(pl map[string]*qdrant.Value) AuditRecord {
	at, _ := memory.ParseTime(pl["at"].GetStringValue())
	r := AuditRecord{
		MemoryID: pl[auditMemoryID].GetStringValue(), ObservationID: pl[auditObsID].GetStringValue(),
		Reason: pl["reason"].GetStringValue(), Old: pl["old"].GetDoubleValue(), New: pl["new"].GetDoubleValue(),
		OldN: int(pl["old_n"].GetIntegerValue()), NewN: int(pl["new_n"].GetIntegerValue()), At: at,
		SessionID: pl[auditSessionID].GetStringValue(), TurnID: pl["turn_id"].GetStringValue(),
		Source: pl["source"].GetDoubleValue(), Extractor: pl["extractor"].GetDoubleValue(),
		Type: pl["type"].GetDoubleValue(), Grounding: pl["grounding"].GetStringValue(),
		Decision: Decision(pl["decision"].GetStringValue()), Related: pl["related"].GetStringValue(),
		Attribution: pl["attribution"].GetStringValue(), AttributionFrom: pl["attribution_from"].GetStringValue(),
		Note: pl["note"].GetStringValue(), OldTier: pl["old_tier"].GetStringValue(), NewTier: pl["new_tier"].GetStringValue(),
	}
	readEvidence(pl, &r)
	return r
}

// auditID is a record's point id: derived from the observation id when
// there is one, so a retried write lands on the same points.
func auditID(coll, tenant, obsID string, seq int) string {
	if obsID == "" {
		return uuid.NewString()
	}
	return memory.DeterministicID(coll, tenant, obsID, strconv.Itoa(seq))
}

// writeAudit appends the records of one decision in one upsert; the first
// carries the outcome for idempotent replays.
func (e *Engine) writeAudit(ctx context.Context, coll, tenant, obsID string, recs []AuditRecord, out Outcome) error {
	if len(recs) == 0 {
		return nil
	}
	pts := make([]*qdrant.PointStruct, len(recs))
	for i, r := range recs {
		pts[i] = e.auditPoint(coll, tenant, auditID(coll, tenant, obsID, i), i, r)
		if i == 0 && obsID != "" {
			b, err := json.Marshal(out)
			if err != nil {
				return fmt.Errorf("dedup: encode outcome: %w", err)
			}
			pts[i].Payload[auditOutcomeOf] = qdrant.NewValueString(obsID)
			pts[i].Payload[auditOutcome] = qdrant.NewValueString(string(b))
		}
	}
	wait := true
	if _, err := e.store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: auditCollection(coll), Wait: &wait, Points: pts}); err != nil {
		return fmt.Errorf("dedup: write audit of %s: %w", coll, err)
	}
	return nil
}

// auditPoint is one audit record as a point of the companion, with id.
func (e *Engine) auditPoint(coll, tenant, id string, seq int, r AuditRecord) *qdrant.PointStruct {
	p := map[string]*qdrant.Value{
		auditKind:       qdrant.NewValueString("audit"),
		auditMemoryID:   qdrant.NewValueString(r.MemoryID),
		auditObsID:      qdrant.NewValueString(r.ObservationID),
		"reason":        qdrant.NewValueString(r.Reason),
		"old":           qdrant.NewValueDouble(r.Old),
		"new":           qdrant.NewValueDouble(r.New),
		"old_n":         qdrant.NewValueInt(int64(r.OldN)),
		"new_n":         qdrant.NewValueInt(int64(r.NewN)),
		"at":            qdrant.NewValueString(memory.FormatTime(r.At)),
		"session_id":    qdrant.NewValueString(r.SessionID),
		"turn_id":       qdrant.NewValueString(r.TurnID),
		"source":        qdrant.NewValueDouble(r.Source),
		"extractor":     qdrant.NewValueDouble(r.Extractor),
		"type":          qdrant.NewValueDouble(r.Type),
		"grounding":     qdrant.NewValueString(r.Grounding),
		"decision":      qdrant.NewValueString(string(r.Decision)),
		"related":       qdrant.NewValueString(r.Related),
		auditSeq:        qdrant.NewValueInt(int64(seq)),
		"collection":    qdrant.NewValueString(coll),
		"written_at_ns": qdrant.NewValueInt(time.Now().UnixNano()), // real time: orders the trail even under a fake clock
	}
	addEvidence(p, &r)
	for k, v := range map[string]string{"attribution": r.Attribution, "attribution_from": r.AttributionFrom, "note": r.Note} {
		if v != "" {
			p[k] = qdrant.NewValueString(v)
		}
	}
	if e.tenancyOn() {
		p[e.cfg.Tenancy.PayloadKey()] = e.cfg.Tenancy.Value(tenant)
	}
	return &qdrant.PointStruct{Id: qdrant.NewID(id), Vectors: qdrant.NewVectorsDense([]float32{1}), Payload: p}
}

// writeAuditRetrying writes the audit records, retrying a failed write a few
// times within ctx: the memory is already written, and records that are not
// written are changes without evidence (and, for a confirmation, a retry by
// the caller that would count twice). The records' ids make a retry
// idempotent.
func (e *Engine) writeAuditRetrying(ctx context.Context, coll, tenant, obsID string, recs []AuditRecord, out Outcome) error {
	var err error
	for attempt, wait := 0, 20*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*4 {
		if attempt > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return err
			}
		}
		if err = e.writeAudit(ctx, coll, tenant, obsID, recs, out); err == nil || status.Code(err) == codes.InvalidArgument {
			return err
		}
	}
	return err
}

// correctedAway reports whether a memory was superseded by an explicit
// correction: its latest "superseded" audit record came from one.
func (e *Engine) correctedAway(ctx context.Context, coll, tenant, id string) (bool, error) {
	recs, err := e.readAudit(ctx, coll, tenant, id)
	if err != nil {
		return false, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Reason == "superseded" {
			return recs[i].Decision == DecisionCorrected, nil
		}
	}
	return false, nil
}

// replay returns the outcome recorded for an observation id, if any.
func (e *Engine) replay(ctx context.Context, coll, tenant, obsID string) (Outcome, bool, error) {
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(auditOutcomeOf, obsID)}}
	if e.tenancyOn() {
		f.Must = append(f.Must, e.cfg.Tenancy.Condition(tenant))
	}
	limit := uint32(1)
	pts, err := e.store.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: auditCollection(coll), Filter: f,
		Limit: &limit, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		if isNotFound(err) {
			return Outcome{}, false, nil // no audit collection yet: nothing seen
		}
		return Outcome{}, false, fmt.Errorf("dedup: look up observation %s: %w", obsID, err)
	}
	if len(pts) == 0 {
		return Outcome{}, false, nil
	}
	var out Outcome
	if err := json.Unmarshal([]byte(pts[0].GetPayload()[auditOutcome].GetStringValue()), &out); err != nil {
		return Outcome{}, false, fmt.Errorf("dedup: read the outcome of observation %s: %w", obsID, err)
	}
	out.Replayed = true
	return out, true, nil
}

// readAudit returns a memory's audit records, oldest first.
func (e *Engine) readAudit(ctx context.Context, coll, tenant, id string) ([]AuditRecord, error) {
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(auditMemoryID, id)}}
	if e.tenancyOn() {
		f.Must = append(f.Must, e.cfg.Tenancy.Condition(tenant))
	}
	var out []AuditRecord
	type key struct {
		written int64
		seq     int64
	}
	var keys []key
	var offset *qdrant.PointId
	for len(out) < maxAuditRecords {
		limit := uint32(256)
		pts, next, err := e.scrollPage(ctx, &qdrant.ScrollPoints{CollectionName: auditCollection(coll), Filter: f,
			Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if isNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("dedup: read the audit of %s: %w", id, err)
		}
		for _, p := range pts {
			pl := p.GetPayload()
			out = append(out, auditRecordOf(pl))
			keys = append(keys, key{pl["written_at_ns"].GetIntegerValue(), pl[auditSeq].GetIntegerValue()})
		}
		if next == nil {
			break
		}
		offset = next
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		if c := cmp.Compare(ka.written, kb.written); c != 0 {
			return c
		}
		return cmp.Compare(ka.seq, kb.seq)
	})
	sorted := make([]AuditRecord, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted, nil
}

// owns reports whether a payload belongs to the tenant (always, with
// tenancy off).
func (e *Engine) owns(payload map[string]*qdrant.Value, tenant string) bool {
	if !e.tenancyOn() {
		return true
	}
	want := e.cfg.Tenancy.Value(tenant)
	got := payload[e.cfg.Tenancy.PayloadKey()]
	if got == nil {
		return false
	}
	switch w := want.GetKind().(type) {
	case *qdrant.Value_IntegerValue:
		return got.GetKind() != nil && isInt(got, w.IntegerValue)
	case *qdrant.Value_StringValue:
		s, ok := got.GetKind().(*qdrant.Value_StringValue)
		return ok && s.StringValue == w.StringValue
	}
	return false
}

func isInt(v *qdrant.Value, n int64) bool {
	iv, ok := v.GetKind().(*qdrant.Value_IntegerValue)
	return ok && iv.IntegerValue == n
}

// isNotFound reports the upstream's "not found" (a missing collection).
func isNotFound(err error) bool {
	return status.Code(err) == codes.NotFound
}

func isErrNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// supersededPages bounds the audit pages SupersededAt reads: a few records
// per memory, for at most a query's candidates.
const supersededPages = 16

// SupersededAt returns, by memory id, when the latest supersession of each
// of ids in coll was recorded (the "superseded" audit record's time): what
// a query asked as of an earlier time needs to take back the later ones
// (rank.History). An id without such a record is absent. It reads the
// audit trail for memrank's own use, across tenants: the memory ids are
// the caller's candidates, already scoped.
func (e *Engine) SupersededAt(ctx context.Context, coll string, ids []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	f := &qdrant.Filter{Must: []*qdrant.Condition{
		qdrant.NewMatchKeywords(auditMemoryID, ids...),
		qdrant.NewMatchKeyword("reason", "superseded"),
	}}
	var offset *qdrant.PointId
	for range supersededPages {
		limit := uint32(256)
		pts, next, err := e.scrollPage(ctx, &qdrant.ScrollPoints{CollectionName: auditCollection(coll), Filter: f,
			Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayloadInclude(auditMemoryID, "at")})
		if err != nil {
			if isNotFound(err) {
				return out, nil // no audit trail: nothing was superseded by memrank
			}
			return nil, fmt.Errorf("dedup: read the supersessions in %s: %w", auditCollection(coll), err)
		}
		for _, p := range pts {
			pl := p.GetPayload()
			id := pl[auditMemoryID].GetStringValue()
			if at, ok := memory.ParseTime(pl["at"].GetStringValue()); ok && at.After(out[id]) {
				out[id] = at
			}
		}
		if next == nil {
			return out, nil
		}
		offset = next
	}
	// More records than a query's candidates can have: read no further,
	// and say so (a later supersession may be missed).
	e.cfg.Telemetry.Logger.WarnContext(ctx, "supersessions: stopped reading the audit trail at the page bound",
		"collection", coll, "pages", supersededPages)
	return out, nil
}
