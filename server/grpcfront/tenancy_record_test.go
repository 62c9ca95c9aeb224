package grpcfront

import (
	"strings"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/tenancy"
)

// recordingUpstream is a Qdrant stand-in that keeps every request's bytes
// and answers each with an empty message.
type recordingUpstream struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method string
	body   []byte
}

func (u *recordingUpstream) handle(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	var in frame
	if err := ss.RecvMsg(&in); err != nil {
		return err
	}
	u.mu.Lock()
	u.reqs = append(u.reqs, recorded{method, append([]byte(nil), in.b...)})
	u.mu.Unlock()
	return ss.SendMsg(&frame{})
}

// requestTypes decode what reached the upstream, by method.
var requestTypes = map[string]func() proto.Message{
	"/qdrant.Points/Query":                 func() proto.Message { return &qdrant.QueryPoints{} },
	"/qdrant.Points/QueryBatch":            func() proto.Message { return &qdrant.QueryBatchPoints{} },
	"/qdrant.Points/Search":                func() proto.Message { return &qdrant.SearchPoints{} },
	"/qdrant.Points/Scroll":                func() proto.Message { return &qdrant.ScrollPoints{} },
	"/qdrant.Points/Count":                 func() proto.Message { return &qdrant.CountPoints{} },
	"/qdrant.Points/Facet":                 func() proto.Message { return &qdrant.FacetCounts{} },
	"/qdrant.Points/Get":                   func() proto.Message { return &qdrant.GetPoints{} },
	"/qdrant.Points/Upsert":                func() proto.Message { return &qdrant.UpsertPoints{} },
	"/qdrant.Points/Delete":                func() proto.Message { return &qdrant.DeletePoints{} },
	"/qdrant.Points/SetPayload":            func() proto.Message { return &qdrant.SetPayloadPoints{} },
	"/qdrant.Points/OverwritePayload":      func() proto.Message { return &qdrant.SetPayloadPoints{} }, // ClearPayload, scoped
	"/qdrant.Collections/Get":              func() proto.Message { return &qdrant.GetCollectionInfoRequest{} },
	"/qdrant.Collections/List":             func() proto.Message { return &qdrant.ListCollectionsRequest{} },
	"/qdrant.Collections/CollectionExists": func() proto.Message { return &qdrant.CollectionExistsRequest{} },
}

// scopedTo reports whether a filter carries the tenant's condition among
// its must clauses, as the policy adds it.
func scopedTo(f *qdrant.Filter, cond *qdrant.Condition) bool {
	for _, c := range f.GetMust() {
		if proto.Equal(c, cond) {
			return true
		}
	}
	return false
}

// TestTenantRequestsReachUpstreamScoped: everything alice sends through
// the front reaches the upstream either scoped to her (every filter, by id
// or by filter, every prefetch; every upserted point carries her) or as a
// collection read; a fake upstream records every request. Requests that
// cannot be scoped never arrive.
func TestTenantRequestsReachUpstreamScoped(t *testing.T) {
	up := &recordingUpstream{}
	upAddr := serve(t, grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(up.handle)))
	policy := &tenancy.Policy{Key: "user_id", APIKeys: map[string]string{"key-alice": "alice"}}
	alice := client(t, startFront(t, upAddr, Config{Tenancy: policy}), qdrant.Config{APIKey: "key-alice"})
	ctx := testCtx(t)
	v := []float32{1, 0}
	f := &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "note")}}
	ids := qdrant.NewPointsSelector(qdrant.NewIDNum(7))
	calls := []func() error{
		func() error {
			_, err := alice.Query(ctx, &qdrant.QueryPoints{CollectionName: "m", Query: qdrant.NewQueryDense(v), Filter: f,
				Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(v)}, {Query: qdrant.NewQueryDense(v), Filter: f}}})
			return err
		},
		func() error {
			_, err := alice.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "m", QueryPoints: []*qdrant.QueryPoints{{CollectionName: "m", Query: qdrant.NewQueryDense(v)}}})
			return err
		},
		func() error { _, err := alice.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "m"}); return err },
		func() error {
			_, err := alice.Count(ctx, &qdrant.CountPoints{CollectionName: "m", Filter: f})
			return err
		},
		func() error {
			_, err := alice.Facet(ctx, &qdrant.FacetCounts{CollectionName: "m", Key: "kind"})
			return err
		},
		func() error {
			_, err := alice.Get(ctx, &qdrant.GetPoints{CollectionName: "m", Ids: []*qdrant.PointId{qdrant.NewIDNum(7)}})
			return err
		},
		func() error {
			_, err := alice.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m", Points: []*qdrant.PointStruct{
				{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsDense(v), Payload: qdrant.NewValueMap(map[string]any{"text": "x"})}}})
			return err
		},
		func() error {
			_, err := alice.Delete(ctx, &qdrant.DeletePoints{CollectionName: "m", Points: ids})
			return err
		},
		func() error {
			_, err := alice.Delete(ctx, &qdrant.DeletePoints{CollectionName: "m", Points: qdrant.NewPointsSelectorFilter(f)})
			return err
		},
		func() error {
			_, err := alice.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "m", Payload: qdrant.NewValueMap(map[string]any{"k": 1}), PointsSelector: ids})
			return err
		},
		func() error {
			_, err := alice.ClearPayload(ctx, &qdrant.ClearPayloadPoints{CollectionName: "m", Points: ids})
			return err
		},
		func() error { _, err := alice.GetCollectionInfo(ctx, "m"); return err },
		func() error { _, err := alice.ListCollections(ctx); return err },
	}
	for _, call := range calls {
		_ = call() // the answers are empty; what matters is what arrived
	}
	// What cannot be scoped is refused, not forwarded.
	_, _ = alice.GetPointsClient().UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "m"})
	_, _ = alice.GetPointsClient().Recommend(ctx, &qdrant.RecommendPoints{CollectionName: "m", Positive: []*qdrant.PointId{qdrant.NewIDNum(1)}})
	_ = alice.DeleteCollection(ctx, "m")

	cond := policy.Condition("alice")
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.reqs) < len(calls) {
		t.Fatalf("the upstream saw %d requests, want at least %d", len(up.reqs), len(calls))
	}
	for _, r := range up.reqs {
		newMsg, ok := requestTypes[r.method]
		if !ok {
			t.Errorf("%s reached the upstream", r.method)
			continue
		}
		m := newMsg()
		if err := proto.Unmarshal(r.body, m); err != nil {
			t.Fatalf("%s: %v", r.method, err)
		}
		if strings.HasPrefix(r.method, "/qdrant.Collections/") {
			continue // collection reads: metadata, no points
		}
		if !scopedRequest(m, cond) {
			t.Errorf("%s reached the upstream unscoped: %v", r.method, m)
		}
	}
}

// scopedRequest checks one decoded point request.
func scopedRequest(m proto.Message, cond *qdrant.Condition) bool {
	switch q := m.(type) {
	case *qdrant.QueryPoints:
		return scopedQuery(q, cond)
	case *qdrant.QueryBatchPoints:
		for _, s := range q.GetQueryPoints() {
			if !scopedQuery(s, cond) {
				return false
			}
		}
		return len(q.GetQueryPoints()) > 0
	case *qdrant.ScrollPoints:
		return scopedTo(q.GetFilter(), cond)
	case *qdrant.CountPoints:
		return scopedTo(q.GetFilter(), cond)
	case *qdrant.FacetCounts:
		return scopedTo(q.GetFilter(), cond)
	case *qdrant.SearchPoints:
		return scopedTo(q.GetFilter(), cond)
	case *qdrant.GetPoints:
		// Get has no filter in Qdrant's API: the front asks for the tenant
		// key too and drops the points that are not the tenant's before
		// answering (tenancy.GetScope.Filter).
		for _, k := range q.GetWithPayload().GetInclude().GetFields() {
			if k == cond.GetField().GetKey() {
				return true
			}
		}
		return q.GetWithPayload().GetEnable()
	case *qdrant.UpsertPoints:
		for _, p := range q.GetPoints() {
			if p.GetPayload()["user_id"].GetStringValue() != "alice" {
				return false
			}
		}
		return scopedTo(q.GetUpdateFilter(), cond)
	case *qdrant.DeletePoints:
		return scopedTo(q.GetPoints().GetFilter(), cond)
	case *qdrant.SetPayloadPoints:
		return scopedTo(q.GetPointsSelector().GetFilter(), cond)
	}
	return false
}

func scopedQuery(q *qdrant.QueryPoints, cond *qdrant.Condition) bool {
	if !scopedTo(q.GetFilter(), cond) {
		return false
	}
	var prefetches func(ps []*qdrant.PrefetchQuery) bool
	prefetches = func(ps []*qdrant.PrefetchQuery) bool {
		for _, p := range ps {
			if !scopedTo(p.GetFilter(), cond) || !prefetches(p.GetPrefetch()) {
				return false
			}
		}
		return true
	}
	return prefetches(q.GetPrefetch())
}
