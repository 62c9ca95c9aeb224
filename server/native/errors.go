package native

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/tenancy"
)

// grpcHTTP maps the upstream's gRPC codes to the HTTP statuses Qdrant's
// REST API uses for the same errors (the REST front uses the same table).
var grpcHTTP = map[grpccodes.Code]int{
	grpccodes.InvalidArgument:    http.StatusBadRequest,
	grpccodes.NotFound:           http.StatusNotFound,
	grpccodes.AlreadyExists:      http.StatusConflict,
	grpccodes.PermissionDenied:   http.StatusForbidden,
	grpccodes.Unauthenticated:    http.StatusUnauthorized,
	grpccodes.ResourceExhausted:  http.StatusTooManyRequests,
	grpccodes.Unavailable:        http.StatusServiceUnavailable,
	grpccodes.DeadlineExceeded:   http.StatusRequestTimeout,
	grpccodes.FailedPrecondition: http.StatusInternalServerError,
	grpccodes.DataLoss:           http.StatusBadRequest,
	grpccodes.Unimplemented:      http.StatusNotImplemented,
	grpccodes.Canceled:           499,
	grpccodes.Internal:           http.StatusInternalServerError,
	grpccodes.Unknown:            http.StatusInternalServerError,
	grpccodes.Aborted:            http.StatusConflict,
	grpccodes.OutOfRange:         http.StatusBadRequest,
}

// classify is the one table from errors to HTTP statuses and the message the
// caller sees. internal reports errors whose own text stays in the log.
func classify(err error) (code int, msg string, internal bool) {
	var re *requestError
	var ee *embedError
	var ie *dedup.InputError
	var gs interface{ GRPCStatus() *status.Status }
	switch {
	case errors.As(err, &re):
		return re.status, re.msg, false
	case errors.Is(err, tenancy.ErrNoTenant), errors.Is(err, tenancy.ErrForbidden):
		return http.StatusForbidden, "Forbidden: " + err.Error(), false
	case errors.Is(err, tenancy.ErrTenantFilter), errors.Is(err, tenancy.ErrUnsupported):
		return http.StatusBadRequest, "Bad request: " + err.Error(), false
	case errors.Is(err, rank.ErrInvalidRequest):
		return http.StatusBadRequest, "Bad request: " + strings.TrimPrefix(err.Error(), "rank: "), false
	case errors.As(err, &ie):
		// Its own text only: whatever wrapped it may name internals.
		return http.StatusBadRequest, "Bad request: " + ie.Error(), false
	case errors.Is(err, dedup.ErrNotFound):
		return http.StatusNotFound, "Not found: no such memory or collection", false
	case errors.Is(err, dedup.ErrEmbedderMismatch):
		return http.StatusConflict, "Conflict: the collection was written with another embedder (model or dimension); " +
			"write it with that embedder, or use another collection", false
	case errors.As(err, &ee):
		return http.StatusInternalServerError, "Service internal error: embedding the text failed", true
	case errors.As(err, &gs):
		// The upstream's status, with its own message (go-client wraps it in
		// "Query() failed: ..."; status.FromError would keep the wrapping).
		st := gs.GRPCStatus()
		code, ok := grpcHTTP[st.Code()]
		if !ok {
			code = http.StatusInternalServerError
		}
		msg := st.Message()
		if st.Code() == grpccodes.Unavailable {
			// grpc-go's transport texts name the upstream's address.
			return code, "Service unavailable: the upstream is not reachable", true
		}
		if msg == "" {
			msg = st.Code().String()
		}
		return code, msg, code >= 500
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusRequestTimeout, "Timeout error: the request did not complete in time", false
	case errors.Is(err, context.Canceled):
		return 499, "the request was cancelled", false
	}
	return http.StatusInternalServerError, "Service internal error: memrank failed to process the request", true
}

func (s *Service) writeError(w http.ResponseWriter, r *http.Request, start time.Time, err error) {
	s.fail(w, r, start, "retrieve", err)
}

// fail logs err (at error level when it is memrank's or the upstream's
// fault) and answers it as classify says. op names the route in the log.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, start time.Time, op string, err error) {
	code, msg, internal := classify(err)
	level := slog.LevelDebug
	if internal || code >= 500 {
		level = slog.LevelError
	}
	s.cfg.Logger.LogAttrs(r.Context(), level, op+" failed",
		slog.Int("status", code), slog.String("error", err.Error()))
	writeError(w, code, msg, start)
}

// writeError writes Qdrant's error envelope {"status":{"error":msg},"time":s}.
func writeError(w http.ResponseWriter, code int, msg string, start time.Time) {
	b, err := encode(struct {
		Status struct {
			Error string `json:"error"`
		} `json:"status"`
		Time float64 `json:"time"`
	}{Status: struct {
		Error string `json:"error"`
	}{msg}, Time: time.Since(start).Seconds()})
	if err != nil {
		b = []byte(`{"status":{"error":` + strconv.Quote("Service internal error") + `},"time":0}`)
	}
	writeJSON(w, code, b)
}
