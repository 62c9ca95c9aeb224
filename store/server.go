package store

import (
	"context"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // accept gzip-compressed requests, as Qdrant does
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/upstream"
)

// HealthTitle and HealthVersion answer Qdrant/HealthCheck. The title says
// plainly that this is not Qdrant; the version is a Qdrant version the
// go-client's compatibility check accepts (same major, minor within one).
const (
	HealthTitle   = "memrank embedded store (not Qdrant)"
	HealthVersion = "1.19.0"
)

// MaxMessageSize is the largest gRPC message the server accepts or sends
// (Qdrant's own default request limit is 32 MiB for REST; batches of
// vectors over gRPC are commonly larger than grpc-go's 4 MiB default).
const MaxMessageSize = 64 << 20

// implemented lists the Qdrant methods this engine serves; every other
// method of the Qdrant services answers Unimplemented naming itself.
var implemented = map[string]bool{
	"/qdrant.Qdrant/HealthCheck":                true,
	"/qdrant.Collections/Get":                   true,
	"/qdrant.Collections/List":                  true,
	"/qdrant.Collections/Create":                true,
	"/qdrant.Collections/Delete":                true,
	"/qdrant.Collections/CollectionExists":      true,
	"/qdrant.Collections/Update":                true,
	"/qdrant.Collections/UpdateAliases":         true,
	"/qdrant.Collections/ListAliases":           true,
	"/qdrant.Collections/ListCollectionAliases": true,
	"/qdrant.Points/Upsert":                     true,
	"/qdrant.Points/Delete":                     true,
	"/qdrant.Points/UpdateVectors":              true,
	"/qdrant.Points/Get":                        true,
	"/qdrant.Points/SetPayload":                 true,
	"/qdrant.Points/OverwritePayload":           true,
	"/qdrant.Points/DeletePayload":              true,
	"/qdrant.Points/ClearPayload":               true,
	"/qdrant.Points/CreateFieldIndex":           true,
	"/qdrant.Points/DeleteFieldIndex":           true,
	"/qdrant.Points/Search":                     true,
	"/qdrant.Points/SearchBatch":                true,
	"/qdrant.Points/Scroll":                     true,
	"/qdrant.Points/Count":                      true,
	"/qdrant.Points/Query":                      true,
	"/qdrant.Points/QueryBatch":                 true,
	"/qdrant.Points/QueryGroups":                true,
	"/qdrant.Points/SearchGroups":               true,
	"/qdrant.Points/UpdateBatch":                true,
	"/qdrant.Points/DeleteVectors":              true,
}

func notImplemented(fullMethod string) error {
	name := strings.TrimPrefix(strings.TrimPrefix(fullMethod, "/"), "qdrant.")
	return status.Errorf(codes.Unimplemented, "memrank embedded store: %s is not implemented", name)
}

func gateUnimplemented(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if strings.HasPrefix(info.FullMethod, "/qdrant.") && !implemented[info.FullMethod] {
		return nil, notImplemented(info.FullMethod)
	}
	return handler(ctx, req)
}

func unknownMethod(_ any, stream grpc.ServerStream) error {
	m, ok := grpc.MethodFromServerStream(stream)
	if !ok {
		m = "unknown method"
	}
	return notImplemented(m)
}

// NewServer returns a *grpc.Server with the Qdrant services (Qdrant,
// Collections, Points) served by db, plus grpc.health.v1 and server
// reflection. opts are appended after the defaults (message size limits,
// a keepalive policy that tolerates go-client's 10 s pings), so they can
// override them or add stats handlers and interceptors. An interceptor
// that reads a reply's points before they are marshalled finds whole
// payloads in the points' unknown fields, not in Payload (see wire.go): they
// are decoded into Payload only on the client's side.
func NewServer(db *DB, opts ...grpc.ServerOption) *grpc.Server {
	base := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.KeepaliveEnforcementPolicy(upstream.ServerKeepalive()),
		grpc.ChainUnaryInterceptor(gateUnimplemented),
		grpc.UnknownServiceHandler(unknownMethod),
	}
	srv := grpc.NewServer(append(base, opts...)...)
	qdrant.RegisterQdrantServer(srv, qdrantService{})
	qdrant.RegisterCollectionsServer(srv, &collectionsService{db: db})
	qdrant.RegisterPointsServer(srv, &pointsService{db: db})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	reflection.Register(srv)
	return srv
}

type qdrantService struct {
	qdrant.UnimplementedQdrantServer
}

func (qdrantService) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: HealthTitle, Version: HealthVersion}, nil
}

var _ qdrant.QdrantServer = qdrantService{}

// withTimeout applies a request's timeout field (seconds), if any.
func withTimeout(ctx context.Context, secs *uint64) (context.Context, context.CancelFunc) {
	if secs == nil || *secs == 0 || *secs > 1<<31 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(*secs)*time.Second)
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }

type collectionsService struct {
	qdrant.UnimplementedCollectionsServer
	db *DB
}

var _ qdrant.CollectionsServer = (*collectionsService)(nil)

func (s *collectionsService) Get(ctx context.Context, req *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	t := time.Now()
	info, err := s.db.CollectionInfo(ctx, req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return &qdrant.GetCollectionInfoResponse{Result: info, Time: since(t)}, nil
}

func (s *collectionsService) List(ctx context.Context, _ *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	t := time.Now()
	names, err := s.db.ListCollections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*qdrant.CollectionDescription, len(names))
	for i, n := range names {
		out[i] = &qdrant.CollectionDescription{Name: n}
	}
	return &qdrant.ListCollectionsResponse{Collections: out, Time: since(t)}, nil
}

func (s *collectionsService) Create(ctx context.Context, req *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	t := time.Now()
	if err := s.db.CreateCollection(ctx, req); err != nil {
		return nil, err
	}
	return &qdrant.CollectionOperationResponse{Result: true, Time: since(t)}, nil
}

func (s *collectionsService) Delete(ctx context.Context, req *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	t := time.Now()
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return nil, validation("timeout", "value 0 invalid, must be 1 or larger")
	}
	ok, err := s.db.DeleteCollection(ctx, req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return &qdrant.CollectionOperationResponse{Result: ok, Time: since(t)}, nil
}

func (s *collectionsService) CollectionExists(ctx context.Context, req *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	t := time.Now()
	ok, err := s.db.CollectionExists(ctx, req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}, Time: since(t)}, nil
}

func (s *collectionsService) Update(ctx context.Context, req *qdrant.UpdateCollection) (*qdrant.CollectionOperationResponse, error) {
	t := time.Now()
	if err := s.db.UpdateCollection(ctx, req); err != nil {
		return nil, err
	}
	return &qdrant.CollectionOperationResponse{Result: true, Time: since(t)}, nil
}

func (s *collectionsService) UpdateAliases(ctx context.Context, req *qdrant.ChangeAliases) (*qdrant.CollectionOperationResponse, error) {
	t := time.Now()
	if err := s.db.UpdateAliases(ctx, req); err != nil {
		return nil, err
	}
	return &qdrant.CollectionOperationResponse{Result: true, Time: since(t)}, nil
}

func (s *collectionsService) ListAliases(ctx context.Context, _ *qdrant.ListAliasesRequest) (*qdrant.ListAliasesResponse, error) {
	t := time.Now()
	res, err := s.db.ListAliases(ctx)
	if err != nil {
		return nil, err
	}
	return &qdrant.ListAliasesResponse{Aliases: res, Time: since(t)}, nil
}

func (s *collectionsService) ListCollectionAliases(ctx context.Context, req *qdrant.ListCollectionAliasesRequest) (*qdrant.ListAliasesResponse, error) {
	t := time.Now()
	res, err := s.db.ListCollectionAliases(ctx, req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return &qdrant.ListAliasesResponse{Aliases: res, Time: since(t)}, nil
}

type pointsService struct {
	qdrant.UnimplementedPointsServer
	db *DB
}

var _ qdrant.PointsServer = (*pointsService)(nil)

func opResponse(res *qdrant.UpdateResult, err error, t time.Time) (*qdrant.PointsOperationResponse, error) {
	if err != nil {
		return nil, err
	}
	return &qdrant.PointsOperationResponse{Result: res, Time: since(t)}, nil
}

func (s *pointsService) Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.Upsert(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) Delete(ctx context.Context, req *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.Delete(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) UpdateVectors(ctx context.Context, req *qdrant.UpdatePointVectors) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.UpdateVectors(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) Get(ctx context.Context, req *qdrant.GetPoints) (*qdrant.GetResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.Get(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.GetResponse{Result: res, Time: since(t)}, nil
}

func (s *pointsService) SetPayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.SetPayload(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) OverwritePayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.OverwritePayload(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) DeletePayload(ctx context.Context, req *qdrant.DeletePayloadPoints) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.DeletePayload(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) ClearPayload(ctx context.Context, req *qdrant.ClearPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.ClearPayload(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) CreateFieldIndex(ctx context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	res, err := s.db.CreateFieldIndex(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) DeleteFieldIndex(ctx context.Context, req *qdrant.DeleteFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	res, err := s.db.DeleteFieldIndex(ctx, req)
	return opResponse(res, err, t)
}

func (s *pointsService) Search(ctx context.Context, req *qdrant.SearchPoints) (*qdrant.SearchResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.SearchResponse{Result: res, Time: since(t)}, nil
}

func batchResults(rs [][]*qdrant.ScoredPoint) []*qdrant.BatchResult {
	out := make([]*qdrant.BatchResult, len(rs))
	for i, r := range rs {
		out[i] = &qdrant.BatchResult{Result: r}
	}
	return out
}

func (s *pointsService) SearchBatch(ctx context.Context, req *qdrant.SearchBatchPoints) (*qdrant.SearchBatchResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.SearchBatch(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.SearchBatchResponse{Result: batchResults(res), Time: since(t)}, nil
}

func (s *pointsService) Scroll(ctx context.Context, req *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, next, err := s.db.Scroll(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.ScrollResponse{Result: res, NextPageOffset: next, Time: since(t)}, nil
}

func (s *pointsService) Count(ctx context.Context, req *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	n, err := s.db.Count(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: n}, Time: since(t)}, nil
}

func (s *pointsService) Query(ctx context.Context, req *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.QueryResponse{Result: res, Time: since(t)}, nil
}

func (s *pointsService) QueryBatch(ctx context.Context, req *qdrant.QueryBatchPoints) (*qdrant.QueryBatchResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.QueryBatch(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.QueryBatchResponse{Result: batchResults(res), Time: since(t)}, nil
}

func groupsResponse(gs []*qdrant.PointGroup) *qdrant.GroupsResult {
	return &qdrant.GroupsResult{Groups: gs}
}

func (s *pointsService) QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) (*qdrant.QueryGroupsResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.QueryGroups(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.QueryGroupsResponse{Result: groupsResponse(res), Time: since(t)}, nil
}

func (s *pointsService) SearchGroups(ctx context.Context, req *qdrant.SearchPointGroups) (*qdrant.SearchGroupsResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(forWire(ctx), req.Timeout)
	defer cancel()
	res, err := s.db.SearchGroups(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.SearchGroupsResponse{Result: groupsResponse(res), Time: since(t)}, nil
}

func (s *pointsService) UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) (*qdrant.UpdateBatchResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.UpdateBatch(ctx, req)
	if err != nil {
		return nil, err
	}
	return &qdrant.UpdateBatchResponse{Result: res, Time: since(t)}, nil
}

func (s *pointsService) DeleteVectors(ctx context.Context, req *qdrant.DeletePointVectors) (*qdrant.PointsOperationResponse, error) {
	t := time.Now()
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res, err := s.db.DeleteVectors(ctx, req)
	return opResponse(res, err, t)
}
