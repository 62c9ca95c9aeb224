package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// TestRepliesMatchEngine: the gRPC server passes whole payloads on as their
// stored bytes (store/wire.go); every read a client makes over gRPC must
// still decode to exactly what the engine answers, whole payloads,
// selected ones, none, and vectors alike.
func TestRepliesMatchEngine(t *testing.T) {
	db := newDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createColl(t, db, "c", 3, qdrant.Distance_Cosine)
	payloads := []map[string]any{
		{"s": "text", "i": 1, "f": 2.5, "b": true, "n": nil, "l": []any{"x", 3, 4.5, false}, "o": map[string]any{"deep": map[string]any{"k": []any{map[string]any{"z": "y"}}}}, "g": "a"},
		{"s": "other", "i": 2, "ü": "utf-8", "": "empty key", "g": "a"},
		{"i": 3, "g": "b"},
		nil,
	}
	var pts []pt
	for i := range 12 {
		pts = append(pts, pt{id: num(uint64(i + 1)), vec: []float32{float32(i%3 + 1), float32(i%5 + 1), float32(i%7 + 1)}, payload: payloads[i%len(payloads)]})
	}
	pts = append(pts, pt{id: qdrant.NewID("9b1d4c2e-2f4e-4f61-8c34-1f5f1d0b7a10"), vec: []float32{1, 0, 0}, payload: payloads[0]})
	upsert(t, db, "c", pts...)
	if _, err := db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "i", FieldType: qdrant.FieldType_FieldTypeInteger.Enum()}); err != nil {
		t.Fatal(err)
	}
	ip := upstream.ServeInProcess(store.NewServer(db))
	defer ip.Close()
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	rpc := client.GetPointsClient()

	limit := uint64(20)
	groupSize := uint64(3)
	selections := map[string]*qdrant.WithPayloadSelector{
		"whole":   qdrant.NewWithPayload(true),
		"none":    qdrant.NewWithPayload(false),
		"include": qdrant.NewWithPayloadInclude("s", "o.deep"),
		"exclude": qdrant.NewWithPayloadExclude("l", "i"),
	}
	for name, sel := range selections {
		t.Run(name, func(t *testing.T) {
			vectors := qdrant.NewWithVectors(name == "whole")
			tests := []struct {
				name        string
				engine, rpc func() (any, error)
			}{
				{"get", func() (any, error) {
					return db.Get(ctx, &qdrant.GetPoints{CollectionName: "c", Ids: []*qdrant.PointId{num(1), num(2), num(4), num(99)}, WithPayload: sel, WithVectors: vectors})
				}, func() (any, error) {
					r, err := rpc.Get(ctx, &qdrant.GetPoints{CollectionName: "c", Ids: []*qdrant.PointId{num(1), num(2), num(4), num(99)}, WithPayload: sel, WithVectors: vectors})
					return r.GetResult(), err
				}},
				{"scroll", func() (any, error) {
					r, _, err := db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Limit: qdrant.PtrOf(uint32(20)), WithPayload: sel, WithVectors: vectors})
					return r, err
				}, func() (any, error) {
					r, err := rpc.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Limit: qdrant.PtrOf(uint32(20)), WithPayload: sel, WithVectors: vectors})
					return r.GetResult(), err
				}},
				{"scroll by an indexed filter", func() (any, error) {
					r, _, err := db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("i", 2)}}, WithPayload: sel})
					return r, err
				}, func() (any, error) {
					r, err := rpc.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("i", 2)}}, WithPayload: sel})
					return r.GetResult(), err
				}},
				{"scroll ordered", func() (any, error) {
					r, _, err := db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", OrderBy: &qdrant.OrderBy{Key: "i"}, WithPayload: sel})
					return r, err
				}, func() (any, error) {
					r, err := rpc.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", OrderBy: &qdrant.OrderBy{Key: "i"}, WithPayload: sel})
					return r.GetResult(), err
				}},
				{"query", func() (any, error) {
					return db.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 2, 3), Limit: &limit, WithPayload: sel, WithVectors: vectors})
				}, func() (any, error) {
					r, err := rpc.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 2, 3), Limit: &limit, WithPayload: sel, WithVectors: vectors})
					return r.GetResult(), err
				}},
				{"query batch", func() (any, error) {
					return db.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "c", QueryPoints: []*qdrant.QueryPoints{{CollectionName: "c", Query: qdrant.NewQuery(3, 2, 1), WithPayload: sel}}})
				}, func() (any, error) {
					r, err := rpc.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "c", QueryPoints: []*qdrant.QueryPoints{{CollectionName: "c", Query: qdrant.NewQuery(3, 2, 1), WithPayload: sel}}})
					var out [][]*qdrant.ScoredPoint
					for _, b := range r.GetResult() {
						out = append(out, b.GetResult())
					}
					return out, err
				}},
				{"search", func() (any, error) {
					return db.Search(ctx, &qdrant.SearchPoints{CollectionName: "c", Vector: []float32{1, 1, 0}, Limit: limit, WithPayload: sel, WithVectors: vectors})
				}, func() (any, error) {
					r, err := rpc.Search(ctx, &qdrant.SearchPoints{CollectionName: "c", Vector: []float32{1, 1, 0}, Limit: limit, WithPayload: sel, WithVectors: vectors})
					return r.GetResult(), err
				}},
				{"search batch", func() (any, error) {
					return db.SearchBatch(ctx, &qdrant.SearchBatchPoints{CollectionName: "c", SearchPoints: []*qdrant.SearchPoints{{CollectionName: "c", Vector: []float32{2, 1, 0}, Limit: limit, WithPayload: sel}}})
				}, func() (any, error) {
					r, err := rpc.SearchBatch(ctx, &qdrant.SearchBatchPoints{CollectionName: "c", SearchPoints: []*qdrant.SearchPoints{{CollectionName: "c", Vector: []float32{2, 1, 0}, Limit: limit, WithPayload: sel}}})
					var out [][]*qdrant.ScoredPoint
					for _, b := range r.GetResult() {
						out = append(out, b.GetResult())
					}
					return out, err
				}},
				{"query groups", func() (any, error) {
					return db.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: "c", Query: qdrant.NewQuery(1, 2, 3), GroupBy: "g", GroupSize: &groupSize, WithPayload: sel})
				}, func() (any, error) {
					r, err := rpc.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: "c", Query: qdrant.NewQuery(1, 2, 3), GroupBy: "g", GroupSize: &groupSize, WithPayload: sel})
					return r.GetResult().GetGroups(), err
				}},
				{"search groups", func() (any, error) {
					return db.SearchGroups(ctx, &qdrant.SearchPointGroups{CollectionName: "c", Vector: []float32{1, 2, 3}, GroupBy: "g", GroupSize: 2, Limit: 5, WithPayload: sel})
				}, func() (any, error) {
					r, err := rpc.SearchGroups(ctx, &qdrant.SearchPointGroups{CollectionName: "c", Vector: []float32{1, 2, 3}, GroupBy: "g", GroupSize: 2, Limit: 5, WithPayload: sel})
					return r.GetResult().GetGroups(), err
				}},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					want, err := tc.engine()
					if err != nil {
						t.Fatalf("engine: %v", err)
					}
					got, err := tc.rpc()
					if err != nil {
						t.Fatalf("gRPC: %v", err)
					}
					if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
						t.Errorf("(-engine +gRPC):\n%s", diff)
					}
					if name == "whole" && !carriesPayload(got) {
						t.Errorf("no point carries a payload: %v", got)
					}
				})
			}
		})
	}
}

// carriesPayload reports whether some point in a result has a payload.
func carriesPayload(res any) bool {
	n := 0
	count := func(p interface {
		GetPayload() map[string]*qdrant.Value
	}) {
		n += len(p.GetPayload())
	}
	switch r := res.(type) {
	case []*qdrant.RetrievedPoint:
		for _, p := range r {
			count(p)
		}
	case []*qdrant.ScoredPoint:
		for _, p := range r {
			count(p)
		}
	case [][]*qdrant.ScoredPoint:
		for _, b := range r {
			for _, p := range b {
				count(p)
			}
		}
	case []*qdrant.PointGroup:
		for _, g := range r {
			for _, p := range g.GetHits() {
				count(p)
			}
		}
	}
	return n > 0
}
