package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/upstream"
)

// Auth is Qdrant's API-key model for the embedded store (service.api_key
// and service.read_only_api_key): open while APIKey is empty; otherwise
// every call but the health checks carries APIKey, or ReadOnlyAPIKey for
// calls that change nothing, in an api-key header or as an
// "Authorization: Bearer" token. JWTs are not supported.
type Auth struct {
	APIKey         string
	ReadOnlyAPIKey string
}

// Validate refuses a read-only key without a read-write one: the store
// would be open, the read-only key protecting nothing.
func (a Auth) Validate() error {
	if a.APIKey == "" && a.ReadOnlyAPIKey != "" {
		return errors.New("a read-only API key needs an API key too (without one the store is open)")
	}
	return nil
}

// Enabled says whether calls need a key.
func (a Auth) Enabled() bool { return a.APIKey != "" }

// ServerOptions are the interceptors that check the keys; none when open.
func (a Auth) ServerOptions() []grpc.ServerOption {
	if !a.Enabled() {
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := a.check(ctx, info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := a.check(ss.Context(), info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// check answers as Qdrant does (src/tonic/auth.rs): Unauthenticated
// without a credential, PermissionDenied with a wrong one or a read-only
// key on a write.
func (a Auth) check(ctx context.Context, method string) error {
	if method == "/qdrant.Qdrant/HealthCheck" || strings.HasPrefix(method, "/grpc.health.v1.") || strings.HasPrefix(method, "/grpc.reflection.") {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	creds := md.Get("api-key")
	for _, v := range md.Get("authorization") {
		if scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok && strings.EqualFold(scheme, "bearer") {
			creds = append(creds, strings.TrimSpace(tok))
		}
	}
	if len(creds) == 0 {
		return status.Error(codes.Unauthenticated, "Must provide an API key or an Authorization bearer token")
	}
	readOnly := false
	for _, c := range creds {
		switch {
		case equal(c, a.APIKey):
			return nil
		case a.ReadOnlyAPIKey != "" && equal(c, a.ReadOnlyAPIKey):
			readOnly = true
		}
	}
	if !readOnly {
		return status.Error(codes.PermissionDenied, "Invalid API key or JWT")
	}
	if upstream.Writes(method) || strings.HasPrefix(method, "/qdrant.Snapshots/") {
		return status.Error(codes.PermissionDenied, "Forbidden: the read-only API key cannot call "+strings.TrimPrefix(method, "/qdrant."))
	}
	return nil
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
