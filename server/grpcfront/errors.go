package grpcfront

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/tenancy"
)

// grpcStatus is what status errors implement; errors.As finds the
// upstream's status under go-client's *qdrant.QdrantError wrapping.
type grpcStatus interface{ GRPCStatus() *status.Status }

// refusals maps memrank's own refusals to gRPC codes: the one table of this
// front. The message the caller sees is the error's own text, which these
// errors keep free of internal detail.
var refusals = []struct {
	err  error
	code codes.Code
}{
	{tenancy.ErrUnauthenticated, codes.Unauthenticated},
	{errCompanion, codes.PermissionDenied},
	{tenancy.ErrNoTenant, codes.PermissionDenied},
	{tenancy.ErrForbidden, codes.PermissionDenied},
	{tenancy.ErrTenantFilter, codes.InvalidArgument},
	{tenancy.ErrUnsupported, codes.InvalidArgument},
	{rank.ErrInvalidRequest, codes.InvalidArgument},
	{rank.ErrGroupsUnsupported, codes.Unimplemented},
	{errMalformed, codes.Internal},
	{errNoRequest, codes.Internal},
}

var (
	// errMalformed is a request that does not decode, answered as Qdrant
	// (tonic) answers one: Internal, "failed to decode Protobuf message".
	errMalformed = errors.New("failed to decode Protobuf message")
	errNoRequest = errors.New("grpc: client streaming protocol violation: no request message")
)

// unreachableText answers Unavailable, in the REST fronts' words.
const unreachableText = "Service unavailable: the upstream is not reachable"

// timeoutText answers a deadline that ran out on memrank's side (the
// caller's or the front's budget), in the REST fronts' words; Qdrant's own
// timeouts say which operation timed out and pass as they are.
const timeoutText = "Timeout error: the request did not complete in time"

// withheld is the status a caller gets for an upstream's s: Unavailable
// with a neutral text, since grpc-go's transport texts name the upstream's
// address ("dial tcp 10.0.0.5:6334: connect: connection refused"); grpc-go's
// own deadline text as timeoutText; any other status unchanged.
func withheld(s *status.Status) *status.Status {
	switch {
	case s.Code() == codes.Unavailable && s.Message() != unreachableText:
		return status.New(codes.Unavailable, unreachableText)
	case s.Code() == codes.DeadlineExceeded && strings.HasPrefix(s.Message(), context.DeadlineExceeded.Error()):
		return status.New(codes.DeadlineExceeded, timeoutText)
	}
	return s
}

// settled says whether a call that ended with err has a known outcome for
// a collection change: it succeeded, or a status says it was refused
// (Qdrant's answers to a bad or refused request, and memrank's own
// refusals, come before anything is changed). A deadline, a cancelled
// call, a lost or failing upstream, or any status outside this list
// leaves the change possibly still to be applied.
func settled(err error) bool {
	switch status.Code(err) {
	case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.ResourceExhausted, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented,
		codes.Unauthenticated:
		return true
	}
	return false
}

// internalText is all a caller learns of an unexpected failure; the
// details go to the log.
const internalText = "memrank: internal error"

// toStatus turns an error of the intercepted path into the status the
// caller gets: the upstream's status unchanged (with its retry-after
// trailer rebuilt when go-client consumed it), memrank's refusals through
// the table, context ends as Canceled / DeadlineExceeded, anything else
// Internal with a neutral text. known reports whether err was expected (not
// worth an error log).
//
//lint:ignore ST1008 st is the result (a status to send), not a failure of toStatus
func toStatus(err error) (st error, trailer metadata.MD, known bool) {
	var ex *qdrant.QdrantResourceExhaustedError
	if errors.As(err, &ex) && ex.RetryAfterS > 0 {
		trailer = metadata.Pairs("retry-after", strconv.Itoa(ex.RetryAfterS))
	}
	var gs grpcStatus
	if errors.As(err, &gs) {
		if s := gs.GRPCStatus(); s != nil {
			return withheld(s).Err(), trailer, true
		}
	}
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return status.Error(r.code, err.Error()), nil, true
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, context.Canceled.Error()), nil, true
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, timeoutText), nil, true
	}
	return status.Error(codes.Internal, internalText), nil, false
}
