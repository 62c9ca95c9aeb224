package native

import (
	"context"
	"net/http"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// UseRecorder records outcome feedback (POST /v1/memories/{id}/used and
// its batch form); *dedup.Engine satisfies it. The server finds it on its
// Writer, so that the wiring of the write path does not change; a Writer
// without it answers these routes 501.
type UseRecorder interface {
	Used(ctx context.Context, u dedup.Use) (dedup.Outcome, error)
	UsedBatch(ctx context.Context, b dedup.UseBatch) ([]dedup.UseResult, error)
}

var _ UseRecorder = (*dedup.Engine)(nil)

var (
	usedFields      = []string{"collection", "observation_id", "session_id", "turn_id", "at"}
	usedBatchFields = []string{"collection", "ids", "observation_id", "session_id", "turn_id", "at"}
)

var errUsedOff = qdrantjson.Errorf(qdrantjson.ClassNotImplemented, "outcome feedback is not configured on this server")

// decodeUsed reads a POST /v1/memories/{id}/used body (known names the
// keys allowed) into a batch; its rules are dedup.Use.Validate's.
func decodeUsed(data []byte, known []string) (dedup.UseBatch, error) {
	var b dedup.UseBatch
	err := decodeObject(data, known, func(key string, v qdrantjson.Value) error {
		var err error
		switch key {
		case "collection":
			b.Collection, err = jsonString(key, v)
		case "ids":
			b.IDs, err = idsField(v)
		case "observation_id":
			b.ObservationID, err = jsonString(key, v)
		case "session_id":
			b.SessionID, err = jsonString(key, v)
		case "turn_id":
			b.TurnID, err = jsonString(key, v)
		case "at":
			b.At, err = timeField(key, v)
		}
		return err
	})
	return b, err
}

// idsField reads the batch's memory ids: UUID strings or unsigned integers.
func idsField(v qdrantjson.Value) ([]string, error) {
	const key = "ids"
	if v.Kind != qdrantjson.KindArray {
		return nil, inputError(key, "want an array of memory ids, got %s", kindName(v))
	}
	if v.Len() > dedup.MaxUseBatch {
		return nil, inputError(key, "at most %d ids, got %d", dedup.MaxUseBatch, v.Len())
	}
	items := v.Items()
	out := make([]string, len(items))
	for i, e := range items {
		name := qdrantjson.Index(key, i)
		id, err := idField(name, e)
		if err == nil {
			err = dedup.CheckMemoryID(name, id)
		}
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

func (s *Service) useRecorder() (UseRecorder, bool) {
	u, ok := s.cfg.Writer.(UseRecorder)
	return u, ok
}

func (s *Service) serveUsed(w http.ResponseWriter, r *http.Request) {
	s.serveWrite(w, r, "used", func(ctx context.Context, body []byte, tenant string) (dedup.Outcome, error) {
		rec, ok := s.useRecorder()
		if !ok {
			return dedup.Outcome{}, errUsedOff
		}
		id, err := pathID(r)
		if err != nil {
			return dedup.Outcome{}, err
		}
		b, err := decodeUsed(body, usedFields)
		if err != nil {
			return dedup.Outcome{}, err
		}
		if err := idempotencyKey(r, &b.ObservationID); err != nil {
			return dedup.Outcome{}, err
		}
		setWriteAttrs(ctx, b.Collection)
		return rec.Used(ctx, dedup.Use{Collection: b.Collection, Tenant: tenant, MemoryID: id,
			ObservationID: b.ObservationID, SessionID: b.SessionID, TurnID: b.TurnID, At: b.At})
	})
}

// UsedBatchResponse is the answer of POST /v1/memories/used: one entry per
// distinct id, in order.
type UsedBatchResponse struct {
	Result []UsedResult `json:"result"`
	Status string       `json:"status"`
	Time   float64      `json:"time"`
}

// UsedResult is one id's part of a batch answer: its outcome, or
// "not_found".
type UsedResult struct {
	MemoryID string         `json:"memory_id"`
	Outcome  *dedup.Outcome `json:"outcome,omitempty"`
	Error    string         `json:"error,omitempty"`
}

func (s *Service) serveUsedBatch(w http.ResponseWriter, r *http.Request) {
	const op = "used"
	rec, recorder := s.useRecorder()
	start, ok := s.begin(w, r, op, http.MethodPost, offUnless(s.cfg.Writer != nil && recorder, errUsedOff))
	if !ok {
		return
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	b, err := decodeUsed(body, usedBatchFields)
	if err == nil {
		err = idempotencyKey(r, &b.ObservationID)
	}
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	respond(s, w, r, start, op, b.Collection, func(ctx context.Context, tenant string) (usedResults, error) {
		b.Tenant = tenant
		res, err := rec.UsedBatch(ctx, b)
		return usedResults(res), err
	})
}

// usedResults is the batch answer, written by hand like the write path's
// other results (dedup.Outcome's MarshalJSON inside).
type usedResults []dedup.UseResult

// MarshalJSON implements json.Marshaler.
func (u usedResults) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, r := range u {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"memory_id":`...)
		b = qdrantjson.AppendString(b, r.MemoryID)
		if r.NotFound {
			b = append(b, `,"error":"not_found"}`...)
			continue
		}
		o, err := r.Outcome.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(b, `,"outcome":`...)
		b = append(b, o...)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
