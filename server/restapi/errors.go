package restapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// httpStatus maps a gRPC code to the HTTP status Qdrant's REST API uses for
// the same StorageError (src/actix/helpers.rs; the gRPC side is
// lib/storage/src/content_manager/conversions.rs). Codes Qdrant never sends
// get the closest HTTP meaning.
var httpStatus = map[codes.Code]int{
	codes.InvalidArgument:    http.StatusBadRequest,          // BadInput, BadRequest, Inference
	codes.NotFound:           http.StatusNotFound,            // NotFound
	codes.AlreadyExists:      http.StatusConflict,            // AlreadyExists
	codes.PermissionDenied:   http.StatusForbidden,           // Forbidden
	codes.Unauthenticated:    http.StatusUnauthorized,        // no credential (Qdrant's auth middleware)
	codes.ResourceExhausted:  http.StatusTooManyRequests,     // RateLimitExceeded (+ Retry-After)
	codes.Unavailable:        http.StatusServiceUnavailable,  // ShardUnavailable; also upstream unreachable
	codes.DeadlineExceeded:   http.StatusRequestTimeout,      // Timeout
	codes.FailedPrecondition: http.StatusInternalServerError, // PreconditionFailed (Locked is 403 but shares the code)
	codes.DataLoss:           http.StatusBadRequest,          // ChecksumMismatch
	codes.Unimplemented:      http.StatusNotImplemented,      // a method the upstream (the embedded store) lacks
	codes.Canceled:           499,                            // the caller went away
	codes.Internal:           http.StatusInternalServerError, // ServiceError
	codes.Unknown:            http.StatusInternalServerError,
	codes.Aborted:            http.StatusConflict,
	codes.OutOfRange:         http.StatusBadRequest,
}

// insufficientStorageKey marks a ResourceExhausted that is Qdrant's
// InsufficientStorage (507), not a rate limit.
const insufficientStorageKey = "qdrant-insufficient-storage"

// trailerError is an upstream error with the trailer of its call.
type trailerError struct {
	err     error
	trailer metadata.MD
}

func (e *trailerError) Error() string { return e.err.Error() }
func (e *trailerError) Unwrap() error { return e.err }

func (h *handler) withTrailer(err error, md metadata.MD) error {
	if len(md) == 0 {
		return err
	}
	return &trailerError{err: err, trailer: md}
}

// writeError answers err in Qdrant's error envelope.
func (h *handler) writeError(w http.ResponseWriter, start time.Time, err error) {
	var de *decodeError
	if errors.As(err, &de) {
		writeError(w, de.status, de.msg, start)
		return
	}
	// The stub's status may sit under a wrapper (trailerError); FromError
	// would then replace its message with the wrapper's whole text
	// ("rpc error: code = ... desc = ..."), so look for the status itself.
	var st *status.Status
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		st = gs.GRPCStatus()
	}
	if st == nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			st = status.New(codes.DeadlineExceeded, "Timeout error: the request did not complete in time")
		case errors.Is(err, context.Canceled):
			st = status.New(codes.Canceled, "the request was cancelled")
		default:
			h.log.LogAttrs(context.Background(), slog.LevelError, "REST translation failed", slog.String("error", err.Error()))
			writeError(w, http.StatusInternalServerError, "Service internal error: memrank's REST front failed to process the request", start)
			return
		}
	}
	code, ok := httpStatus[st.Code()]
	if !ok {
		code = http.StatusInternalServerError
	}
	msg := st.Message()
	var te *trailerError
	if errors.As(err, &te) && st.Code() == codes.ResourceExhausted {
		if len(te.trailer.Get(insufficientStorageKey)) > 0 {
			code = http.StatusInsufficientStorage
		} else if ra := te.trailer.Get("retry-after"); len(ra) > 0 {
			if n, err := strconv.ParseUint(ra[0], 10, 32); err == nil {
				w.Header().Set("Retry-After", strconv.FormatUint(n, 10))
			}
		}
	}
	if st.Code() == codes.Unavailable && isTransportMessage(msg) {
		// grpc-go's own text names the upstream's address; keep it in the log.
		h.log.LogAttrs(context.Background(), slog.LevelWarn, "upstream unavailable", slog.String("error", msg))
		msg = "Service unavailable: the upstream is not reachable"
	}
	if st.Code() == codes.DeadlineExceeded && (msg == context.DeadlineExceeded.Error() || strings.HasPrefix(msg, "context deadline exceeded")) {
		// grpc-go's own text for a deadline that ran out on this side.
		msg = "Timeout error: the request did not complete in time"
	}
	if msg == "" {
		msg = st.Code().String()
	}
	writeError(w, code, msg, start)
}

func isTransportMessage(msg string) bool {
	return strings.HasPrefix(msg, "connection error") || strings.Contains(msg, "transport:") ||
		strings.HasPrefix(msg, "name resolver error") || strings.Contains(msg, "last connection error")
}

// writeError writes {"status":{"error":msg},"time":secs}.
func writeError(w http.ResponseWriter, code int, msg string, start time.Time) {
	b := make([]byte, 0, len(msg)+48)
	b = append(b, `{"status":{"error":`...)
	b = appendString(b, msg)
	b = append(b, `},"time":`...)
	secs := 0.0
	if !start.IsZero() {
		secs = time.Since(start).Seconds()
	}
	b = appendTime(b, secs)
	b = append(b, '}')
	writeJSON(w, code, b)
}
