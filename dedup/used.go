package dedup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// MaxUseBatch bounds the ids of one batch of uses: one request's work
// under the collection's lock stays small.
const MaxUseBatch = 100

// Use is outcome feedback (seeds 003 and 004): an agent used a memory in
// its answer and the user did not correct it. It counts the use (uses,
// last_used_at) and audits it; it does not change the confidence
// (docs/scoring.md#outcome-feedback).
type Use struct {
	Collection    string
	Tenant        string
	MemoryID      string
	ObservationID string // optional idempotency key
	SessionID     string
	TurnID        string
	At            time.Time // zero: now
}

// Validate reports the first field of u the write path refuses.
func (u Use) Validate() error {
	return Confirmation{Collection: u.Collection, MemoryID: u.MemoryID, ObservationID: u.ObservationID,
		SessionID: u.SessionID, TurnID: u.TurnID}.Validate()
}

// UseBatch is many uses of one turn: the memories an answer relied on.
type UseBatch struct {
	Collection string
	Tenant     string
	IDs        []string
	// ObservationID, when set, makes each id's use idempotent under
	// "<ObservationID>/<id>".
	ObservationID string
	SessionID     string
	TurnID        string
	At            time.Time
}

// UseResult is one id's answer in a batch: its outcome, or NotFound.
type UseResult struct {
	MemoryID string
	Outcome  Outcome
	NotFound bool
}

// Used records one use of a memory. An unknown memory (or one of another
// tenant) is ErrNotFound.
func (e *Engine) Used(ctx context.Context, u Use) (out Outcome, err error) {
	start := time.Now()
	ctx, span := e.tracer.Start(ctx, "dedup.used", trace.WithAttributes(
		attribute.String("db.collection.name", u.Collection)))
	defer func() { e.finish(ctx, span, start, u.Collection, out, err) }()
	if err := u.Validate(); err != nil {
		return Outcome{}, err
	}
	if e.tenancyOn() && u.Tenant == "" {
		return Outcome{}, &InputError{Field: "tenant", Reason: "is required when tenancy is on"}
	}
	id, err := parseID(u.MemoryID)
	if err != nil {
		return Outcome{}, &InputError{Field: "id", Reason: err.Error()}
	}
	if err := e.notAhead("at", u.At); err != nil {
		return Outcome{}, err
	}
	at := u.At
	if at.IsZero() {
		at = e.cfg.Now()
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	unlock, err := e.locks.lock(ctx, u.Collection+"\x00"+u.Tenant)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	if u.ObservationID != "" {
		if prev, ok, err := e.replay(ctx, u.Collection, u.Tenant, u.ObservationID); err != nil || ok {
			return prev, err
		}
	}
	w := &write{e: e, coll: u.Collection, tenant: u.Tenant, o: observation{
		Observation: Observation{Collection: u.Collection, Tenant: u.Tenant, ObservationID: u.ObservationID,
			SessionID: u.SessionID, TurnID: u.TurnID},
		at: at.UTC(),
	}}
	st, err := w.load(ctx, id)
	if err != nil {
		return Outcome{}, err
	}
	// As for a confirmation: the trail exists before the memory changes.
	if err := e.ensureAudit(ctx, u.Collection); err != nil {
		return Outcome{}, err
	}
	w.used(st)
	if err := w.commit(ctx); err != nil {
		return Outcome{}, err
	}
	return w.out, nil
}

// used counts one use. Only uses and last_used_at are written: the use
// never overwrites what the write path or the access recorders own.
func (w *write) used(st *stored) {
	m := &st.m
	ev := w.evidence(m)
	m.Uses++
	if w.o.at.After(m.LastUsedAt) {
		m.LastUsedAt = w.o.at
	}
	st.usesOnly = true
	w.touch(st)
	w.record(st, "used", ev, "")
	w.noteLast("uses " + strconv.Itoa(m.Uses))
	w.out = Outcome{Decision: DecisionUsed, MemoryID: st.sid, Confidence: ev.Confidence,
		Observations: m.Observations, Uses: m.Uses}
}

// UsedBatch records the use of each id once (repeated ids count once),
// in order. Unknown ids are answered NotFound and do not stop the others;
// any other error stops the batch (the uses before it are recorded, and a
// retry with the same ObservationID does not count them twice).
func (e *Engine) UsedBatch(ctx context.Context, b UseBatch) ([]UseResult, error) {
	if err := checkCollection(b.Collection); err != nil {
		return nil, err
	}
	switch {
	case len(b.IDs) == 0:
		return nil, &InputError{Field: "ids", Reason: "required: at least one memory id"}
	case len(b.IDs) > MaxUseBatch:
		return nil, &InputError{Field: "ids", Reason: fmt.Sprintf("at most %d ids, got %d", MaxUseBatch, len(b.IDs))}
	}
	seen := make(map[string]bool, len(b.IDs))
	var ids []string
	for i, id := range b.IDs {
		if err := CheckMemoryID("ids["+strconv.Itoa(i)+"]", id); err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if b.ObservationID != "" {
		// The derived keys must fit the field's bound too.
		if err := checkString("observation_id", b.ObservationID+"/"+longestID(ids), MaxFieldBytes); err != nil {
			return nil, err
		}
	}
	// Refused before the first use, so a batch is not half recorded.
	if err := e.notAhead("at", b.At); err != nil {
		return nil, err
	}
	out := make([]UseResult, 0, len(ids))
	for _, id := range ids {
		u := Use{Collection: b.Collection, Tenant: b.Tenant, MemoryID: id, SessionID: b.SessionID,
			TurnID: b.TurnID, At: b.At}
		if b.ObservationID != "" {
			u.ObservationID = b.ObservationID + "/" + id
		}
		o, err := e.Used(ctx, u)
		switch {
		case errors.Is(err, ErrNotFound):
			out = append(out, UseResult{MemoryID: id, NotFound: true})
		case err != nil:
			return out, err
		default:
			out = append(out, UseResult{MemoryID: id, Outcome: o})
		}
	}
	return out, nil
}

func longestID(ids []string) string {
	l := ""
	for _, id := range ids {
		if len(id) > len(l) {
			l = id
		}
	}
	return l
}
