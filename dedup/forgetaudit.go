package dedup

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/qdrant/go-client/qdrant"
)

// Audit keys of the evidence an observation brought (AuditRecord.Evidence)
// and of forgetting (docs/forgetting.md).
const (
	auditSessionID     = "session_id"
	auditEvidence      = "evidence" // true on records that carry the keys below
	auditObsHash       = "obs_text_hash"
	auditModality      = "modality"
	auditEntities      = "entities"
	auditSourceName    = "source_name"
	auditTypeName      = "type_name"
	auditExtractorName = "extractor_model"
	auditLogprob       = "extractor_logprob"
	auditForgotten     = "forgotten"      // true: the record no longer counts as evidence
	auditForgottenAt   = "forgotten_at"   // when it was forgotten
	auditDropped       = "memory_deleted" // true: the record's memory was deleted; it counts for nothing
)

// redactedKeys are what redaction removes from an audit record: whatever
// names or copies the forgotten session's content. The confidence change
// (old, new, old_n, new_n), the reason, the time and the memory stay, so the
// trail still adds up.
var redactedKeys = []string{auditSessionID, "turn_id", auditObsID, auditOutcomeOf, auditOutcome,
	auditObsHash, auditModality, auditEntities}

// addEvidence writes r's evidence keys into an audit payload.
func addEvidence(p map[string]*qdrant.Value, r *AuditRecord) {
	if !r.Evidence {
		return
	}
	p[auditEvidence] = qdrant.NewValueBool(true)
	p[auditObsHash] = qdrant.NewValueString(r.TextHash)
	p[auditModality] = qdrant.NewValueString(r.Modality)
	ents := make([]*qdrant.Value, len(r.Entities))
	for i, e := range r.Entities {
		ents[i] = qdrant.NewValueString(e)
	}
	p[auditEntities] = qdrant.NewValueFromList(ents...)
	p[auditSourceName] = qdrant.NewValueString(r.SourceName)
	p[auditTypeName] = qdrant.NewValueString(r.TypeName)
	if r.ExtractorModel != "" {
		p[auditExtractorName] = qdrant.NewValueString(r.ExtractorModel)
	}
	if r.ExtractorLogprob != nil {
		p[auditLogprob] = qdrant.NewValueDouble(*r.ExtractorLogprob)
	}
}

// readEvidence reads what addEvidence wrote, and the forgotten mark.
func readEvidence(p map[string]*qdrant.Value, r *AuditRecord) {
	r.Forgotten = p[auditForgotten].GetBoolValue()
	if !p[auditEvidence].GetBoolValue() {
		return
	}
	r.Evidence = true
	r.TextHash = p[auditObsHash].GetStringValue()
	r.Modality = p[auditModality].GetStringValue()
	for _, v := range p[auditEntities].GetListValue().GetValues() {
		r.Entities = append(r.Entities, v.GetStringValue())
	}
	r.SourceName = p[auditSourceName].GetStringValue()
	r.TypeName = p[auditTypeName].GetStringValue()
	r.ExtractorModel = p[auditExtractorName].GetStringValue()
	if v, ok := p[auditLogprob]; ok && v.GetKind() != nil {
		lp := v.GetDoubleValue()
		r.ExtractorLogprob = &lp
	}
}

// trailRecord is an audit record with where it is stored and its place in
// the trail.
type trailRecord struct {
	AuditRecord
	id            *qdrant.PointId
	written, seq  int64
	forgetRecord  bool // a record of a forget or delete itself: never evidence
	forgottenHere bool // forgotten by the forget in progress
	dropped       bool // its memory was deleted: not even a merge or supersession counts
}

// evidenceReasons are the records that bring an observation's evidence to
// a memory; the others (merge, superseded, contradiction) record how
// memories relate, whoever's observation caused it.
func isEvidence(reason string) bool {
	switch reason {
	case "insert", "restatement", "independent", reasonConfirm:
		return true
	}
	return false
}

// scrollAudit reads every audit record matching f (tenant-scoped by the
// caller), in trail order: oldest first. More than limit records is an
// error: a replay of part of a trail would be wrong, so forgetting refuses
// rather than guesses.
func (e *Engine) scrollAudit(ctx context.Context, coll string, f *qdrant.Filter, limit int) ([]trailRecord, error) {
	var out []trailRecord
	var offset *qdrant.PointId
	for {
		page := uint32(256)
		pts, next, err := e.scrollPage(ctx, &qdrant.ScrollPoints{CollectionName: auditCollection(coll), Filter: f,
			Limit: &page, Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if isNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("dedup: read the audit of %s: %w", coll, err)
		}
		for _, p := range pts {
			pl := p.GetPayload()
			if pl[auditKind].GetStringValue() != "audit" {
				continue
			}
			r := trailRecord{AuditRecord: auditRecordOf(pl), id: p.GetId(),
				written: pl["written_at_ns"].GetIntegerValue(), seq: pl[auditSeq].GetIntegerValue()}
			r.forgetRecord = r.Reason == reasonForget || r.Reason == reasonDelete
			r.dropped = pl[auditDropped].GetBoolValue()
			out = append(out, r)
		}
		if len(out) > limit {
			return nil, errTooMany("audit records", limit)
		}
		if next == nil {
			break
		}
		offset = next
	}
	slices.SortStableFunc(out, func(a, b trailRecord) int {
		if c := cmp.Compare(a.written, b.written); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out, nil
}

// Audit reasons of a memory's upkeep rather than its evidence: a use
// (outcome feedback) and consolidation's tier changes.
const reasonUsed = "used"

// upkeepReasons are never replayed: they change no confidence, n or list.
// A heavily used memory has many (one per use), so a replay does not read
// them and they do not count against its bound (docs/forgetting.md).
var upkeepReasons = []string{reasonUsed, "tier", "archive", "age_archive_lifted"}

// trailFilter selects the records a replay of memory id reads: all but
// the upkeep ones.
func (e *Engine) trailFilter(tenant, id string) *qdrant.Filter {
	f := e.auditFilter(tenant, qdrant.NewMatchKeyword(auditMemoryID, id))
	f.MustNot = append(f.MustNot, qdrant.NewMatchKeywords("reason", upkeepReasons...))
	return f
}

// upkeepFilter selects the upkeep records of the memories ids; with
// unforgotten, only those not forgotten before.
func (e *Engine) upkeepFilter(tenant string, ids []string, unforgotten bool) *qdrant.Filter {
	f := e.auditFilter(tenant, qdrant.NewMatchKeywords(auditMemoryID, ids...))
	f.Must = append(f.Must, qdrant.NewMatchKeywords("reason", upkeepReasons...))
	if unforgotten {
		f.MustNot = append(f.MustNot, qdrant.NewMatchBool(auditForgotten, true))
	}
	return f
}

// auditFilter is a condition on the audit companion, in the tenant.
func (e *Engine) auditFilter(tenant string, c *qdrant.Condition) *qdrant.Filter {
	f := &qdrant.Filter{Must: []*qdrant.Condition{c}}
	if e.tenancyOn() {
		f.Must = append(f.Must, e.cfg.Tenancy.Condition(tenant))
	}
	return f
}
