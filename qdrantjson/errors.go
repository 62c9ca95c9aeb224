package qdrantjson

import (
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
)

// Class is a kind of error as Qdrant's REST API answers it: it fixes the
// HTTP status and the words the client's text begins with. Both fronts
// answer every error through one class, so that the same error reads the
// same on either.
type Class uint8

// The classes, in the order of the table.
const (
	ClassFormat              Class = iota // a body that does not deserialize
	ClassValidation                       // a body that deserializes but fails validation
	ClassParamFormat                      // query parameters that do not deserialize
	ClassParamValidation                  // query parameters that fail validation
	ClassPayload                          // a body too large or unreadable (actix's own texts)
	ClassBadInput                         // Qdrant's BadInput
	ClassBadRequest                       // a request memrank refuses for what it asks
	ClassUnauthorized                     // no or a wrong credential (the upstream's)
	ClassForbidden                        // a credential or tenant that may not do this
	ClassNotFound                         // no such collection, point, memory or route
	ClassMethodNotAllowed                 // a route asked with another method
	ClassTimeout                          // the request did not complete in time
	ClassConflict                         // already exists, or written another way
	ClassRateLimited                      // the upstream's rate limit
	ClassCanceled                         // the caller went away
	ClassInternal                         // memrank's or the upstream's own failure
	ClassNotImplemented                   // a route or method not served here
	ClassBadGateway                       // the upstream REST API did not answer
	ClassUnavailable                      // the upstream is not reachable, or memrank not ready
	ClassInsufficientStorage              // the upstream's disk is full
)

// table is the one mapping from errors to HTTP answers (README, "Errors").
// status and words are what Qdrant's REST API answers (src/actix/helpers.rs
// and actix's JsonPayloadError for the payload class); codes are the gRPC
// codes of the upstream answered with that status (Qdrant's StorageError
// travels as them; lib/storage/src/content_manager/conversions.rs). An
// upstream's text is passed on as it is, since Qdrant's own gRPC messages
// already carry these words; words are put before memrank's own texts (the
// classes only upstreams produce have none).
var table = [...]struct {
	status int
	words  string
	codes  []codes.Code
}{
	ClassFormat:              {http.StatusBadRequest, "Format error in JSON body: ", nil},
	ClassValidation:          {http.StatusUnprocessableEntity, "Validation error in JSON body: ", nil},
	ClassParamFormat:         {http.StatusBadRequest, "Deserialize error in query parameters: ", nil},
	ClassParamValidation:     {http.StatusUnprocessableEntity, "Validation error in query parameters: ", nil},
	ClassPayload:             {http.StatusBadRequest, "", nil},
	ClassBadInput:            {http.StatusBadRequest, "Wrong input: ", []codes.Code{codes.InvalidArgument, codes.DataLoss, codes.OutOfRange}},
	ClassBadRequest:          {http.StatusBadRequest, "Bad request: ", nil},
	ClassUnauthorized:        {http.StatusUnauthorized, "", []codes.Code{codes.Unauthenticated}},
	ClassForbidden:           {http.StatusForbidden, "Forbidden: ", []codes.Code{codes.PermissionDenied}},
	ClassNotFound:            {http.StatusNotFound, "Not found: ", []codes.Code{codes.NotFound}},
	ClassMethodNotAllowed:    {http.StatusMethodNotAllowed, "Method not allowed: ", nil},
	ClassTimeout:             {http.StatusRequestTimeout, "Timeout error: ", []codes.Code{codes.DeadlineExceeded}},
	ClassConflict:            {http.StatusConflict, "Conflict: ", []codes.Code{codes.AlreadyExists, codes.Aborted}},
	ClassRateLimited:         {http.StatusTooManyRequests, "", []codes.Code{codes.ResourceExhausted}},
	ClassCanceled:            {StatusClientClosed, "", []codes.Code{codes.Canceled}},
	ClassInternal:            {http.StatusInternalServerError, "Service internal error: ", []codes.Code{codes.Internal, codes.Unknown, codes.FailedPrecondition}},
	ClassNotImplemented:      {http.StatusNotImplemented, "Not implemented: ", []codes.Code{codes.Unimplemented}},
	ClassBadGateway:          {http.StatusBadGateway, "Service unavailable: ", nil},
	ClassUnavailable:         {http.StatusServiceUnavailable, "Service unavailable: ", []codes.Code{codes.Unavailable}},
	ClassInsufficientStorage: {http.StatusInsufficientStorage, "", nil},
}

// StatusClientClosed is nginx's "client closed request": nobody reads it,
// but logs and metrics tell it from a server error.
const StatusClientClosed = 499

// Status is the HTTP status of the class.
func (c Class) Status() int {
	if int(c) >= len(table) {
		return http.StatusInternalServerError
	}
	return table[c].status
}

// classOf is the class of an upstream's gRPC code; codes Qdrant never sends
// are internal errors.
func classOf(code codes.Code) Class {
	for c, row := range table {
		for _, rc := range row.codes {
			if rc == code {
				return Class(c)
			}
		}
	}
	return ClassInternal
}

// Error is a refusal whose text is meant for the client: memrank's own
// decoders and fronts return it, and Classify answers it with its class's
// status and its own text, never with the text of what wraps it.
type Error struct {
	Class  Class
	Path   string // the field at fault ("" for the whole body, or none)
	Detail string // what is wrong, in serde's or Qdrant's words
	// Unsupported marks a field or form that Qdrant knows (or may know) but
	// memrank does not translate: the REST front forwards such a request
	// raw to the upstream REST API when one is configured.
	Unsupported bool
}

// Error is the client's text: the class's words, then the path and the
// detail ("[path: detail]" for validation errors, as Qdrant writes them).
func (e *Error) Error() string {
	words := ""
	if int(e.Class) < len(table) {
		words = table[e.Class].words
	}
	switch {
	case e.Class == ClassValidation || e.Class == ClassParamValidation:
		if e.Path == "" {
			return words + "[" + e.Detail + "]"
		}
		return words + "[" + e.Path + ": " + e.Detail + "]"
	case e.Path == "":
		return words + e.Detail
	}
	return words + e.Path + ": " + e.Detail
}

// Status is the HTTP status the error is answered with.
func (e *Error) Status() int { return e.Class.Status() }

// Errorf is a refusal of class c, its detail formatted.
func Errorf(c Class, format string, args ...any) *Error {
	return &Error{Class: c, Detail: fmt.Sprintf(format, args...)}
}

// FormatError is Qdrant's answer to a body that does not deserialize: 400
// "Format error in JSON body: path: detail".
func FormatError(path, format string, args ...any) *Error {
	return &Error{Class: ClassFormat, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// ValidationError is Qdrant's answer to a body that deserializes but fails
// validation: 422 "Validation error in JSON body: [path: detail]".
func ValidationError(path, format string, args ...any) *Error {
	return &Error{Class: ClassValidation, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// TypeError is serde's "invalid type: <what v is>, expected <expected>".
func TypeError(path string, v Value, expected string) *Error {
	return FormatError(path, "invalid type: %s, expected %s", v.Describe(), expected)
}

// UnknownFieldError is serde's answer to an unknown field. It is
// Unsupported: the field may be a Qdrant feature memrank does not know.
func UnknownFieldError(path, key string, known []string) *Error {
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = "`" + k + "`"
	}
	e := FormatError(path, "unknown field `%s`, expected one of %s", key, strings.Join(quoted, ", "))
	e.Unsupported = true
	return e
}

// UnsupportedError names a field or form Qdrant has and memrank does not
// translate.
func UnsupportedError(path, what string) *Error {
	e := FormatError(path, "%s is not supported by memrank's REST front (use the gRPC API, or configure --upstream-rest)", what)
	e.Unsupported = true
	return e
}
