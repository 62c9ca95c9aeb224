package native

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

// Reviewer serves the stale-review queue and its archive answer
// (docs/consolidation.md); *consolidate.Job satisfies it.
type Reviewer interface {
	Review(ctx context.Context, req consolidate.ReviewRequest) (consolidate.ReviewQueue, error)
	Archive(ctx context.Context, req consolidate.ArchiveRequest) (consolidate.ArchiveOutcome, error)
}

var _ Reviewer = (*consolidate.Job)(nil)

var (
	errReviewOff = qdrantjson.Errorf(qdrantjson.ClassNotImplemented, "consolidation is not configured on this server, so there is no review queue")
	reviewFields = []string{"collection", "action", "text", "memory_type", "source", "session_id", "turn_id", "observation_id"}
)

// reviewAnswer is a POST /v1/review/{id} body.
type reviewAnswer struct {
	action string
	obs    dedup.Observation // collection, and the correction's text and fields
}

func decodeReviewAnswer(data []byte) (reviewAnswer, error) {
	var a reviewAnswer
	err := decodeObject(data, reviewFields, func(key string, v qdrantjson.Value) error {
		var err error
		switch key {
		case "collection":
			a.obs.Collection, err = jsonString(key, v)
		case "action":
			a.action, err = jsonString(key, v)
		case "text":
			a.obs.Text, err = jsonString(key, v)
		case "memory_type":
			a.obs.MemoryType, err = jsonString(key, v)
		case "source":
			a.obs.Source, err = jsonString(key, v)
		case "session_id":
			a.obs.SessionID, err = jsonString(key, v)
		case "turn_id":
			a.obs.TurnID, err = jsonString(key, v)
		case "observation_id":
			a.obs.ObservationID, err = jsonString(key, v)
		}
		return err
	})
	if err != nil {
		return reviewAnswer{}, err
	}
	switch a.action {
	case "confirm", "archive":
		if a.obs.Text != "" || a.obs.MemoryType != "" || a.obs.Source != "" {
			return reviewAnswer{}, inputError("text", "only a correct answer carries a text, memory_type or source")
		}
		// An archive is no observation: it has no provenance to keep, and
		// silently dropping one would let a caller believe it was recorded.
		if a.action == "archive" && (a.obs.SessionID != "" || a.obs.TurnID != "" || a.obs.ObservationID != "") {
			return reviewAnswer{}, inputError("action", "an archive answer carries no session_id, turn_id or observation_id")
		}
	case "correct":
		if a.obs.Text == "" {
			return reviewAnswer{}, inputError("text", "required: the corrected fact")
		}
	case "":
		return reviewAnswer{}, inputError("action", "required: confirm, correct or archive")
	default:
		return reviewAnswer{}, inputError("action", "%.40q is not confirm, correct or archive", a.action)
	}
	if a.obs.Collection == "" {
		return reviewAnswer{}, inputError("collection", "required")
	}
	return a, nil
}

// reviewQuery reads GET /v1/review's parameters: collection, limit and
// dormant_idle_days.
func reviewQuery(r *http.Request) (consolidate.ReviewRequest, error) {
	var req consolidate.ReviewRequest
	q, err := queryParams(r, "collection", "limit", "dormant_idle_days")
	if err != nil {
		return req, err
	}
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > consolidate.MaxReviewLimit {
			return req, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "limit: want 1 to %d", consolidate.MaxReviewLimit)
		}
		req.Limit = n
	}
	if v, ok := q["dormant_idle_days"]; ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d > 0) || d > 36500 {
			return req, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "dormant_idle_days: want a number of days above 0")
		}
		req.DormantIdle = time.Duration(d * 24 * float64(time.Hour))
	}
	if req.Collection = q["collection"]; req.Collection == "" {
		return req, errNoCollection
	}
	return req, nil
}

func (s *Service) serveReview(w http.ResponseWriter, r *http.Request) {
	const op = "review"
	start, ok := s.begin(w, r, op, http.MethodGet, offUnless(s.cfg.Review != nil, errReviewOff))
	if !ok {
		return
	}
	req, err := reviewQuery(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	respond(s, w, r, start, op, req.Collection, func(ctx context.Context, tenant string) (consolidate.ReviewQueue, error) {
		req.Tenant = tenant
		return s.cfg.Review.Review(ctx, req)
	})
}

// serveReviewAnswer answers one queued memory: confirm and correct go
// through the write path, archive through consolidation.
func (s *Service) serveReviewAnswer(w http.ResponseWriter, r *http.Request) {
	const op = "review answer"
	start, ok := s.begin(w, r, op, http.MethodPost, offUnless(s.cfg.Review != nil, errReviewOff))
	if !ok {
		return
	}
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	a, err := decodeReviewAnswer(body)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	if a.action != "archive" && s.cfg.Writer == nil {
		// Confirm and correct are the write path's; archive needs only
		// consolidation.
		s.fail(w, r, start, op, errWriteOff)
		return
	}
	respond(s, w, r, start, op, a.obs.Collection, func(ctx context.Context, tenant string) (any, error) {
		switch a.action {
		case "archive":
			// The request's tenant, never the operator's every-tenant
			// scope: with tenancy on, writeContext refused a request
			// without one.
			return s.cfg.Review.Archive(ctx, consolidate.ArchiveRequest{Collection: a.obs.Collection, Tenant: tenant, ID: id})
		case "confirm":
			return s.cfg.Writer.Confirm(ctx, dedup.Confirmation{Collection: a.obs.Collection, Tenant: tenant, MemoryID: id,
				ObservationID: a.obs.ObservationID, SessionID: a.obs.SessionID, TurnID: a.obs.TurnID})
		}
		a.obs.Tenant, a.obs.Corrects = tenant, id
		if a.obs.Source == "" {
			a.obs.Source = scoring.SourceDirect // the reviewer's own statement
		}
		return s.cfg.Writer.Correct(ctx, a.obs)
	})
}
