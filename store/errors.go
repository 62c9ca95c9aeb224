package store

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Kind classifies an engine error the way Qdrant's StorageError does; each
// kind maps to one gRPC code.
type Kind uint8

// Error kinds.
const (
	KindInvalid       Kind = iota + 1 // bad input: InvalidArgument
	KindNotFound                      // NotFound
	KindAlreadyExists                 // AlreadyExists
	KindUnimplemented                 // a Qdrant feature this engine does not have
	KindUnavailable                   // the store is closed
	KindInternal                      // storage failure
	KindCanceled                      // the caller's context ended
)

// Error is an engine error carrying Qdrant's message text and kind. It
// converts itself to a gRPC status (GRPCStatus), so handlers return it as is.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // underlying cause, if any
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, ErrNotFound) and friends match on the kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Kind == e.Kind
}

// GRPCStatus maps the error onto Qdrant's gRPC code for its kind.
func (e *Error) GRPCStatus() *status.Status {
	code := codes.Internal
	switch e.Kind {
	case KindInvalid:
		code = codes.InvalidArgument
	case KindNotFound:
		code = codes.NotFound
	case KindAlreadyExists:
		code = codes.AlreadyExists
	case KindUnimplemented:
		code = codes.Unimplemented
	case KindUnavailable:
		code = codes.Unavailable
	case KindCanceled:
		code = codes.Canceled
		if errors.Is(e.Err, context.DeadlineExceeded) {
			code = codes.DeadlineExceeded
		}
	}
	return status.New(code, e.Msg)
}

// Sentinels for errors.Is; they match any *Error of their kind.
var (
	ErrInvalid        = &Error{Kind: KindInvalid}
	ErrNotFound       = &Error{Kind: KindNotFound}
	ErrAlreadyExists  = &Error{Kind: KindAlreadyExists}
	ErrUnimplemented  = &Error{Kind: KindUnimplemented}
	ErrClosed         = &Error{Kind: KindUnavailable}
	ErrDirectoryInUse = errors.New("data directory is in use by another process")
)

// wrongInput is Qdrant's BadInput ("Wrong input: ...").
func wrongInput(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Msg: "Wrong input: " + fmt.Sprintf(format, args...)}
}

// badRequest is Qdrant's BadRequest ("Bad request: ...").
func badRequest(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Msg: "Bad request: " + fmt.Sprintf(format, args...)}
}

// invalidArg is a gRPC-layer InvalidArgument with a bare message, as Qdrant's
// proto conversions produce ("Malformed Match condition", ...).
func invalidArg(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

// validation is Qdrant's request validation failure for one field.
func validation(field, msg string) *Error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf("Validation error in body: [%s: %s]", field, msg)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Msg: "Not found: " + fmt.Sprintf(format, args...)}
}

func collectionNotFound(name string) *Error {
	return notFound("Collection `%s` doesn't exist!", name)
}

func pointNotFound(id PointID) *Error {
	return notFound("No point with id %s found", id)
}

// unimplemented names a Qdrant feature the embedded engine does not offer.
func unimplemented(format string, args ...any) *Error {
	return &Error{Kind: KindUnimplemented, Msg: "memrank embedded store: " + fmt.Sprintf(format, args...)}
}

func internal(err error, format string, args ...any) *Error {
	return &Error{Kind: KindInternal, Msg: "Service internal error: " + fmt.Sprintf(format, args...) + ": " + err.Error(), Err: err}
}

func errClosed() *Error {
	return &Error{Kind: KindUnavailable, Msg: "memrank embedded store: the store is closed"}
}
