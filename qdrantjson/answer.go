package qdrantjson

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Answer is how an error is answered over HTTP.
type Answer struct {
	Status int
	Msg    string // what the client reads
	// RetryAfter is the upstream's Retry-After in seconds ("" when it gave
	// none), for a 429.
	RetryAfter string
	// Withheld says the error's own text was not shown to the client (it
	// may name addresses, files or keys): the front logs it.
	Withheld bool
}

// The texts memrank answers with when an error's own text is not shown.
const (
	timeoutText     = "the request did not complete in time"
	canceledText    = "the request was cancelled"
	unreachableText = "the upstream is not reachable"
	internalText    = "memrank failed to process the request"
)

// InsufficientStorageKey is the trailer that marks a ResourceExhausted as
// Qdrant's InsufficientStorage (507), not a rate limit.
const InsufficientStorageKey = "qdrant-insufficient-storage"

// Classify is the one table from errors to HTTP answers. A *Error anywhere
// in err's chain is answered with its class and its own text; an upstream's
// gRPC status with the HTTP status Qdrant's REST API uses for it and the
// upstream's own text (except transport failures, whose text names the
// upstream's address); a context that ran out or was cancelled as such;
// anything else is an internal error whose text is withheld.
func Classify(err error) Answer {
	var e *Error
	if errors.As(err, &e) {
		return Answer{Status: e.Status(), Msg: e.Error()}
	}
	// The status may sit under a wrapper (go-client's "Query() failed: ...",
	// WithTrailer); status.FromError would fold the wrapper's text into the
	// message, so look for the status itself.
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		if st := gs.GRPCStatus(); st != nil {
			return upstreamAnswer(st, err)
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return answer(ClassTimeout, timeoutText)
	case errors.Is(err, context.Canceled):
		return answer(ClassCanceled, canceledText)
	}
	a := answer(ClassInternal, internalText)
	a.Withheld = true
	return a
}

func answer(c Class, detail string) Answer {
	return Answer{Status: c.Status(), Msg: (&Error{Class: c, Detail: detail}).Error()}
}

func upstreamAnswer(st *status.Status, err error) Answer {
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		// grpc-go's transport texts name the upstream's address.
		a := answer(ClassUnavailable, unreachableText)
		a.Withheld = true
		return a
	case codes.DeadlineExceeded:
		if strings.HasPrefix(msg, context.DeadlineExceeded.Error()) {
			// grpc-go's own text for a deadline that ran out on this side;
			// Qdrant's timeouts say which operation timed out.
			return answer(ClassTimeout, timeoutText)
		}
	}
	if msg == "" {
		msg = st.Code().String()
	}
	a := Answer{Status: classOf(st.Code()).Status(), Msg: msg}
	if st.Code() == codes.ResourceExhausted {
		a.Status, a.RetryAfter = resourceExhausted(err)
	}
	return a
}

// resourceExhausted tells Qdrant's InsufficientStorage (507) from its rate
// limit (429), and reads the rate limit's Retry-After from the call's
// trailer or, when go-client consumed it, from go-client's error.
func resourceExhausted(err error) (int, string) {
	var te *trailerError
	if errors.As(err, &te) {
		if len(te.trailer.Get(InsufficientStorageKey)) > 0 {
			return ClassInsufficientStorage.Status(), ""
		}
		if ra := te.trailer.Get("retry-after"); len(ra) > 0 {
			if n, err := strconv.ParseUint(ra[0], 10, 32); err == nil {
				return ClassRateLimited.Status(), strconv.FormatUint(n, 10)
			}
		}
	}
	var ex *qdrant.QdrantResourceExhaustedError
	if errors.As(err, &ex) && ex.RetryAfterS > 0 {
		return ClassRateLimited.Status(), strconv.Itoa(ex.RetryAfterS)
	}
	return ClassRateLimited.Status(), ""
}

// trailerError is an upstream error with the trailer of its call.
type trailerError struct {
	err     error
	trailer metadata.MD
}

func (e *trailerError) Error() string { return e.err.Error() }
func (e *trailerError) Unwrap() error { return e.err }

// WithTrailer attaches the trailer of the gRPC call that failed with err,
// where Classify finds Retry-After and InsufficientStorageKey.
func WithTrailer(err error, md metadata.MD) error {
	if err == nil || len(md) == 0 {
		return err
	}
	return &trailerError{err: err, trailer: md}
}
