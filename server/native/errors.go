package native

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/tenancy"
)

// refusals is this front's table of the refusals of the packages behind
// it: the class each is answered with (qdrantjson's table gives the status
// and the words), and the client's text. An empty text means the error's
// own, which tenancy writes for callers (the gRPC front sends it as it
// is); the others have a fixed text, since what wraps them may name
// internals (a shard, a path).
var refusals = []struct {
	err   error
	class qdrantjson.Class
	text  string
}{
	{tenancy.ErrUnauthenticated, qdrantjson.ClassUnauthorized, ""},
	{tenancy.ErrNoTenant, qdrantjson.ClassForbidden, ""},
	{tenancy.ErrForbidden, qdrantjson.ClassForbidden, ""},
	{tenancy.ErrTenantFilter, qdrantjson.ClassBadRequest, ""},
	{tenancy.ErrUnsupported, qdrantjson.ClassBadRequest, ""},
	{rank.ErrInvalidRequest, qdrantjson.ClassBadRequest, "invalid request"},
	{dedup.ErrNotFound, qdrantjson.ClassNotFound, "no such memory or collection"},
	{dedup.ErrTooLarge, qdrantjson.ClassBadRequest, "more memories or audit records than one forget may change (100,000 memories, 10,000 audit records per memory)"},
	{consolidate.ErrNotFound, qdrantjson.ClassNotFound, "no such memory or collection"},
	{consolidate.ErrInput, qdrantjson.ClassBadRequest, ""},
	{consolidate.ErrBusy, qdrantjson.ClassConflict, "the memory kept changing while it was being archived; archive it again"},
	{consolidate.ErrIndexRequired, qdrantjson.ClassInternal, "the store requires payload indexes that consolidation's filters use " +
		"(docs/consolidation.md, \"Real Qdrant\")"},
	{dedup.ErrEmbedderMismatch, qdrantjson.ClassConflict, "the collection was written with another embedder (model or dimension); " +
		"write it with that embedder, or use another collection"},
}

// clientError is err as qdrantjson.Classify answers it: the refusals of
// the packages behind this front become *qdrantjson.Error; upstream
// statuses, context ends, this front's own *qdrantjson.Error and anything
// unexpected go to Classify as they are.
func clientError(err error) error {
	var ie *dedup.InputError
	var ee *embedError
	var me *dedup.MismatchError
	var be *bodyError
	switch {
	case errors.As(err, &be):
		// Before InputError, which it wraps: the words /v1/retrieve uses.
		return be.answer
	case errors.As(err, &me):
		// Both embedders named: models and dimensions are configuration.
		return qdrantjson.Errorf(qdrantjson.ClassConflict, "%s", me.Error())
	case errors.As(err, &ie):
		// Its own text only: whatever wrapped it may name internals.
		return qdrantjson.Errorf(qdrantjson.ClassBadRequest, "%s", ie.Error())
	case errors.As(err, &ee):
		// The embedder's text may name a provider's URL or key problems.
		return qdrantjson.Errorf(qdrantjson.ClassInternal, "embedding the text failed")
	}
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			text := r.text
			if text == "" {
				text = err.Error()
			}
			return qdrantjson.Errorf(r.class, "%s", text)
		}
	}
	return err
}

func (s *Service) writeError(w http.ResponseWriter, r *http.Request, start time.Time, err error) {
	s.fail(w, r, start, "retrieve", err)
}

// fail answers err in Qdrant's error envelope and logs it (at error level
// when it is memrank's or the upstream's fault, or its text was withheld
// from the caller). op names the route in the log.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, start time.Time, op string, err error) {
	a := qdrantjson.WriteError(w, start, clientError(err))
	level := slog.LevelDebug
	if a.Withheld || a.Status >= 500 {
		level = slog.LevelError
	}
	s.cfg.Telemetry.Logger.LogAttrs(r.Context(), level, op+" failed",
		slog.Int("status", a.Status), slog.String("error", err.Error()))
}
