package grpcfront

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/tenancy"
)

// tenantFixture is a store with a collection "mem" holding alice's points
// 1-5 and bob's points 11-15, all written through a front with tenancy on.
type tenantFixture struct {
	direct, admin, alice, bob, anonymous *qdrant.Client
	front                                string // the front's address
}

func newTenantFixture(t *testing.T, withRanker bool) tenantFixture {
	t.Helper()
	_, addr := openStore(t)
	cfg := Config{Tenancy: &tenancy.Policy{Key: "user_id", Header: "x-tenant", AdminAPIKeys: []string{"operator"}}}
	if withRanker {
		cfg.ranker = &fakeRanker{src: sourceFor(t, addr)}
	}
	front := startFront(t, addr, cfg)
	fx := tenantFixture{
		front:     front,
		direct:    client(t, addr, qdrant.Config{}),
		admin:     client(t, front, qdrant.Config{APIKey: "operator"}),
		alice:     client(t, front, qdrant.Config{Headers: map[string]string{"x-tenant": "alice"}}),
		bob:       client(t, front, qdrant.Config{Headers: map[string]string{"x-tenant": "bob"}}),
		anonymous: client(t, front, qdrant.Config{}),
	}
	ctx := testCtx(t)
	if err := fx.admin.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mem",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	upsert := func(c *qdrant.Client, first uint64) {
		var pts []*qdrant.PointStruct
		for i := range uint64(5) {
			pts = append(pts, &qdrant.PointStruct{
				Id:      qdrant.NewIDNum(first + i),
				Vectors: qdrant.NewVectors(1, float32(i)/10),
				Payload: qdrant.NewValueMap(map[string]any{"text": fmt.Sprintf("memory %d", first+i), "kind": "note", "items": []any{map[string]any{"user_id": "x"}}}),
			})
		}
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
			t.Fatal(err)
		}
	}
	upsert(fx.alice, 1)
	upsert(fx.bob, 11)
	return fx
}

var bobsIDs = []uint64{11, 12, 13, 14, 15}

func numIDs(ids ...uint64) []*qdrant.PointId {
	var out []*qdrant.PointId
	for _, id := range ids {
		out = append(out, qdrant.NewIDNum(id))
	}
	return out
}

func noneOfBobs(t *testing.T, what string, got []uint64) {
	t.Helper()
	for _, id := range got {
		if id > 10 {
			t.Fatalf("%s returned bob's point %d to alice (got %v)", what, id, got)
		}
	}
}

func retrievedIDs(pts []*qdrant.RetrievedPoint) []uint64 {
	var out []uint64
	for _, p := range pts {
		out = append(out, p.GetId().GetNum())
	}
	return out
}

// With tenancy on, alice never sees bob's memories, whatever she sends.
func TestTenancyIsolation(t *testing.T) {
	for _, withRanker := range []bool{false, true} {
		t.Run(fmt.Sprintf("ranker=%v", withRanker), func(t *testing.T) {
			testTenancyIsolation(t, newTenantFixture(t, withRanker))
		})
	}
}

func testTenancyIsolation(t *testing.T, fx tenantFixture) {
	ctx := testCtx(t)
	if n, err := fx.direct.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"}); err != nil || n != 10 {
		t.Fatalf("the store holds %d points (%v), want 10", n, err)
	}
	key := func(v string) *qdrant.Condition { return qdrant.NewMatchKeyword("user_id", v) }
	filters := []struct {
		name    string
		filter  *qdrant.Filter
		refused bool // InvalidArgument: the filter names the tenant key, or is invalid
	}{
		{"none", nil, false},
		{"must bob", &qdrant.Filter{Must: []*qdrant.Condition{key("bob")}}, true},
		{"should bob", &qdrant.Filter{Should: []*qdrant.Condition{key("bob"), key("alice")}}, true},
		{"must_not alice", &qdrant.Filter{MustNot: []*qdrant.Condition{key("alice")}}, true},
		{"min_should bob", &qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 1, Conditions: []*qdrant.Condition{key("bob")}}}, true},
		{"nested on the key", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewNestedFilter("user_id", &qdrant.Filter{})}}, true},
		{"nested inside", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewNestedFilter("items", &qdrant.Filter{Must: []*qdrant.Condition{key("x")}})}}, true},
		{"deep should", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(&qdrant.Filter{Should: []*qdrant.Condition{key("bob")}})}}, true},
		{"is_empty", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewIsEmpty("user_id")}}, true},
		{"has_id of bob's points", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(numIDs(bobsIDs...)...)}}, false},
		{"should has_id of bob's, or anything", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewHasID(numIDs(bobsIDs...)...), qdrant.NewMatchKeyword("kind", "note")}}, false},
		{"must_not alice's ids", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasID(numIDs(1, 2, 3, 4, 5)...)}}, false},
		{"min_should 1 of nothing", &qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 1, Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "nothing")}}}, false},
		{"min_should 0 (invalid: the upstream's error)", &qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 0, Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "nothing")}}}, true},
	}
	limit := qdrant.PtrOf(uint64(20))
	vec := []float32{1, 0.2}
	for _, f := range filters {
		t.Run(f.name, func(t *testing.T) {
			check := func(what string, got []uint64, err error) {
				t.Helper()
				if f.refused {
					wantStatus(t, err, codes.InvalidArgument, "")
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				noneOfBobs(t, what, got)
			}
			pts, err := fx.alice.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Filter: f.filter, Limit: limit})
			check("Query", ids(pts), err)
			pts, err = fx.alice.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Limit: limit,
				Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(vec), Filter: f.filter, Limit: limit}}})
			check("Query with prefetch", ids(pts), err)
			sr, err := fx.alice.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "mem", Vector: vec, Filter: f.filter, Limit: 20})
			check("Search", ids(sr.GetResult()), err)
			batch, err := fx.alice.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "mem", QueryPoints: []*qdrant.QueryPoints{
				{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Limit: limit},
				{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Filter: f.filter, Limit: limit},
			}})
			var all []uint64
			for _, b := range batch {
				all = append(all, ids(b.GetResult())...)
			}
			check("QueryBatch", all, err)
			groups, err := fx.alice.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Filter: f.filter, GroupBy: "kind", Limit: limit})
			all = nil
			for _, g := range groups {
				all = append(all, ids(g.GetHits())...)
			}
			if status := statusCode(err); status != codes.Unimplemented { // the store may lack groups
				check("QueryGroups", all, err)
			}
			scroll, err := fx.alice.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "mem", Filter: f.filter, Limit: qdrant.PtrOf(uint32(20))})
			check("Scroll", retrievedIDs(scroll), err)
			n, err := fx.alice.Count(ctx, &qdrant.CountPoints{CollectionName: "mem", Filter: f.filter})
			if !f.refused && err == nil && n > 5 {
				t.Fatalf("Count = %d: alice has 5 points", n)
			}
			check("Count", nil, err)
		})
	}

	t.Run("query by bob's point id", func(t *testing.T) {
		_, err := fx.alice.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryID(qdrant.NewIDNum(12))})
		wantStatus(t, err, codes.NotFound, "Not found: No point with id 12 found")
		_, err = fx.alice.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec),
			Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryRecommend(&qdrant.RecommendInput{Positive: []*qdrant.VectorInput{qdrant.NewVectorInputID(qdrant.NewIDNum(13))}})}}})
		wantStatus(t, err, codes.NotFound, "Not found: No point with id 13 found")
		pts, err := fx.alice.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryID(qdrant.NewIDNum(2)), Limit: limit})
		if err != nil || len(pts) != 4 {
			t.Fatalf("query by alice's own id: %v, %v; want her 4 other points", ids(pts), err)
		}
		noneOfBobs(t, "query by alice's id", ids(pts))
	})

	t.Run("get", func(t *testing.T) {
		got, err := fx.alice.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: numIDs(bobsIDs...), WithPayload: qdrant.NewWithPayload(true)})
		if err != nil || len(got) != 0 {
			t.Fatalf("alice's Get of bob's ids = %v, %v; want nothing", retrievedIDs(got), err)
		}
		got, err = fx.alice.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: numIDs(1, 11, 2, 12)})
		if err != nil || !slices.Equal(retrievedIDs(got), []uint64{1, 2}) {
			t.Fatalf("Get of mixed ids = %v, %v; want [1 2]", retrievedIDs(got), err)
		}
		for _, p := range got {
			if len(p.GetPayload()) != 0 {
				t.Fatalf("Get without payload answered payload %v: the front must strip what it added", p.GetPayload())
			}
		}
		got, err = fx.alice.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: numIDs(1), WithPayload: qdrant.NewWithPayloadInclude("text")})
		if err != nil || len(got) != 1 || len(got[0].GetPayload()) != 1 || got[0].GetPayload()["text"] == nil {
			t.Fatalf("Get with include [text] = %v, %v", got, err)
		}
	})

	t.Run("writes to bob's points change nothing", func(t *testing.T) {
		before, err := fx.direct.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: numIDs(bobsIDs...), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
		if err != nil {
			t.Fatal(err)
		}
		writes := map[string]func() error{
			"delete by ids": func() error {
				_, err := fx.alice.Delete(ctx, &qdrant.DeletePoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelector(numIDs(11, 12)...)})
				return err
			},
			"set payload by ids": func() error {
				_, err := fx.alice.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Payload: qdrant.NewValueMap(map[string]any{"pwned": true}), PointsSelector: qdrant.NewPointsSelector(numIDs(13)...)})
				return err
			},
			"overwrite payload by filter": func() error {
				_, err := fx.alice.OverwritePayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Payload: qdrant.NewValueMap(map[string]any{"x": 1}),
					PointsSelector: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(numIDs(14)...)}})})
				return err
			},
			"upsert over bob's id": func() error {
				_, err := fx.alice.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{
					{Id: qdrant.NewIDNum(15), Vectors: qdrant.NewVectors(0, 1), Payload: qdrant.NewValueMap(map[string]any{"text": "mine now"})}}})
				return err
			},
			"clear payload": func() error {
				_, err := fx.alice.ClearPayload(ctx, &qdrant.ClearPayloadPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelector(numIDs(11)...)})
				return err
			},
			"delete payload": func() error {
				_, err := fx.alice.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Keys: []string{"text"}, PointsSelector: qdrant.NewPointsSelector(numIDs(12)...)})
				return err
			},
		}
		for name, write := range writes {
			if err := write(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		after, err := fx.direct.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: numIDs(bobsIDs...), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Fatalf("bob had %d points, now %d", len(before), len(after))
		}
		for i := range before {
			if !protoEqual(before[i].GetPayload(), after[i].GetPayload()) || !protoEqual(before[i].GetVectors(), after[i].GetVectors()) {
				t.Errorf("bob's point %d changed: %v -> %v", before[i].GetId().GetNum(), before[i], after[i])
			}
		}
	})

	t.Run("alice's own writes stay hers", func(t *testing.T) {
		if _, err := fx.alice.ClearPayload(ctx, &qdrant.ClearPayloadPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelector(numIDs(1)...)}); err != nil {
			t.Fatal(err)
		}
		got, err := fx.direct.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: numIDs(1), WithPayload: qdrant.NewWithPayload(true)})
		if err != nil || len(got) != 1 || len(got[0].GetPayload()) != 1 || got[0].GetPayload()["user_id"].GetStringValue() != "alice" {
			t.Fatalf("after ClearPayload point 1 is %v (%v), want only user_id alice", got, err)
		}
		_, err = fx.alice.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Points: []*qdrant.PointStruct{
			{Id: qdrant.NewIDNum(6), Vectors: qdrant.NewVectors(1, 1), Payload: qdrant.NewValueMap(map[string]any{"user_id": "bob"})}}})
		wantStatus(t, err, codes.PermissionDenied, "")
		_, err = fx.alice.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Payload: qdrant.NewValueMap(map[string]any{"user_id": "bob"}), PointsSelector: qdrant.NewPointsSelector(numIDs(2)...)})
		wantStatus(t, err, codes.PermissionDenied, "")
		_, err = fx.alice.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: "mem", Keys: []string{"user_id"}, PointsSelector: qdrant.NewPointsSelector(numIDs(2)...)})
		wantStatus(t, err, codes.PermissionDenied, "")
		if n, err := fx.alice.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"}); err != nil || n != 5 {
			t.Fatalf("alice counts %d points (%v), want her 5", n, err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		_, err := fx.anonymous.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec)})
		wantStatus(t, err, codes.PermissionDenied, "tenant required")
		_, err = fx.admin.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "mem"})
		wantStatus(t, err, codes.PermissionDenied, "tenant required")
		_, err = fx.anonymous.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"})
		wantStatus(t, err, codes.PermissionDenied, "tenant required")
		err = fx.alice.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mine", VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})})
		wantStatus(t, err, codes.PermissionDenied, "")
		err = fx.anonymous.DeleteCollection(ctx, "mem")
		wantStatus(t, err, codes.PermissionDenied, "")
		_, err = fx.alice.GetPointsClient().UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "mem"})
		wantStatus(t, err, codes.PermissionDenied, "forbidden: UpdateBatch is not available when tenancy is on: send its operations one by one")
		_, err = fx.alice.GetPointsClient().Recommend(ctx, &qdrant.RecommendPoints{CollectionName: "mem", Positive: numIDs(11)})
		wantStatus(t, err, codes.PermissionDenied, "")
		// An API key that is not an administrator's manages nothing.
		stranger := client(t, fx.front, qdrant.Config{APIKey: "not-a-real-key"})
		err = stranger.DeleteCollection(ctx, "mem")
		wantStatus(t, err, codes.PermissionDenied, "Collections/Delete is an administration method: forbidden: this needs an administrator's API key (tenancy.admin_api_keys)")
		_, err = fx.anonymous.GetCollectionInfo(ctx, "mem")
		wantStatus(t, err, codes.PermissionDenied, "tenant required")
		if _, err := fx.alice.GetCollectionInfo(ctx, "mem"); err != nil {
			t.Fatalf("a tenant cannot read collection info: %v", err)
		}
		if ok, err := fx.alice.CollectionExists(ctx, "mem"); err != nil || !ok {
			t.Fatalf("a tenant cannot check a collection exists: %v %v", ok, err)
		}
	})
}

func statusCode(err error) codes.Code {
	var gs grpcStatus
	if errors.As(err, &gs) {
		return gs.GRPCStatus().Code()
	}
	if err == nil {
		return codes.OK
	}
	return codes.Unknown
}

func protoEqual(a, b any) bool { return cmp.Equal(a, b, protocmp.Transform()) }

// TestTenancyAPIKeys: with tenants by API key, memrank knows every key: one
// that is neither a tenant's nor an administrator's is refused as
// Unauthenticated on every method, and only an administrator manages
// collections.
func TestTenancyAPIKeys(t *testing.T) {
	_, addr := openStore(t)
	front := startFront(t, addr, Config{Tenancy: &tenancy.Policy{Key: "user_id",
		APIKeys: map[string]string{"key-alice": "alice"}, AdminAPIKeys: []string{"key-root"}}})
	ctx := testCtx(t)
	root := client(t, front, qdrant.Config{APIKey: "key-root"})
	if err := root.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "tc",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	stranger := client(t, front, qdrant.Config{APIKey: "not-a-real-key"})
	wantStatus(t, stranger.DeleteCollection(ctx, "tc"), codes.Unauthenticated, "Collections/Delete is an administration method: unauthenticated: invalid API key")
	_, err := stranger.GetCollectionInfo(ctx, "tc")
	wantStatus(t, err, codes.Unauthenticated, "unauthenticated: invalid API key")
	_, err = stranger.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "tc"})
	wantStatus(t, err, codes.Unauthenticated, "unauthenticated: invalid API key")
	_, err = client(t, front, qdrant.Config{}).Count(ctx, &qdrant.CountPoints{CollectionName: "tc"})
	wantStatus(t, err, codes.Unauthenticated, "unauthenticated: must provide an API key or an Authorization bearer token")
	alice := client(t, front, qdrant.Config{APIKey: "key-alice"})
	wantStatus(t, alice.DeleteCollection(ctx, "tc"), codes.PermissionDenied, "Collections/Delete is an administration method: forbidden: this needs an administrator's API key (tenancy.admin_api_keys)")
	if _, err := alice.Count(ctx, &qdrant.CountPoints{CollectionName: "tc"}); err != nil {
		t.Fatalf("alice cannot count her points: %v", err)
	}
	if ok, err := root.CollectionExists(ctx, "tc"); err != nil || !ok {
		t.Fatalf("the collection is gone (%v, %v)", ok, err)
	}
}
