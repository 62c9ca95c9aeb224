package dedup_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/tenancy"
)

// adoptedPoint is a memory written whole, as the demo set writes them.
func adoptedPoint(h *harness, id uint64, m memory.Memory, extra map[string]*qdrant.Value) *qdrant.PointStruct {
	p := h.codec.Encode(&m)
	for k, v := range extra {
		p[k] = v
	}
	v := make([]float32, topicDims)
	v[id%topicDims] = 1
	return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectorsDense(v), Payload: p}
}

// TestRecordAdopted: every memory of the batch gets one backfill record
// with its confidence, observations and creation time; a point that is not
// a memory, or has no tenant under tenancy, gets none; writing them again
// adds nothing; the points are not written.
func TestRecordAdopted(t *testing.T) {
	created := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	stored := memory.Memory{Text: "Uses Neovim as her main editor", MemoryType: "preference", Source: "direct",
		ExtractorModel: "claude-3-5-sonnet", Observations: 4, Confidence: 0.851, HasConfidence: true,
		CreatedAt: created, LastObservedAt: created.Add(48 * time.Hour), Retrievable: true, Schema: memory.SchemaVersion}
	computed := memory.Memory{Text: "Reviews pull requests every morning", MemoryType: "preference", Source: "direct",
		ExtractorModel: "claude-3-5-sonnet", CreatedAt: created, Retrievable: true, Schema: memory.SchemaVersion}
	dana := map[string]*qdrant.Value{"user_id": qdrant.NewValueString("dana")}
	tests := []struct {
		name    string
		tenancy bool
		points  func(h *harness) []*qdrant.PointStruct
		tenant  string
		want    map[string]int // audit records per memory id
	}{
		{
			name: "memories and a page without memory fields",
			points: func(h *harness) []*qdrant.PointStruct {
				return []*qdrant.PointStruct{adoptedPoint(h, 1, stored, nil), adoptedPoint(h, 2, computed, nil),
					{Id: qdrant.NewIDNum(3), Vectors: qdrant.NewVectorsDense(make([]float32, topicDims)),
						Payload: map[string]*qdrant.Value{"text": qdrant.NewValueString("Team wiki: editor setup guide")}}}
			},
			want: map[string]int{"1": 1, "2": 1, "3": 0},
		},
		{
			name:    "tenancy: a memory without a tenant is skipped",
			tenancy: true,
			tenant:  "dana",
			points: func(h *harness) []*qdrant.PointStruct {
				return []*qdrant.PointStruct{adoptedPoint(h, 1, stored, dana), adoptedPoint(h, 2, computed, nil)}
			},
			want: map[string]int{"1": 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []option
			if tc.tenancy {
				opts = append(opts, func(c *dedup.Config, _ *harness) { c.Tenancy = &tenancy.Policy{Key: "user_id", Header: "x-tenant"} })
			}
			h := newHarness(t, opts...)
			ctx := context.Background()
			if err := h.client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "adopted",
				VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: topicDims, Distance: qdrant.Distance_Cosine})}); err != nil {
				t.Fatal(err)
			}
			pts := tc.points(h)
			wantN := 0
			for _, n := range tc.want {
				wantN += n
			}
			for round := range 2 {
				n, err := h.eng.RecordAdopted(ctx, "adopted", pts)
				if err != nil || n != wantN {
					t.Fatalf("round %d: wrote %d, %v; want %d", round, n, err, wantN)
				}
			}
			if got := h.count(t, "adopted"); got != 0 {
				t.Errorf("the memory collection has %d points: RecordAdopted wrote memories", got)
			}
			wait := true
			if _, err := h.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "adopted", Wait: &wait, Points: pts}); err != nil {
				t.Fatal(err)
			}
			for id, n := range tc.want {
				v, err := h.eng.Memory(ctx, "adopted", tc.tenant, id)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if len(v.Audit) != n {
					t.Fatalf("%s: %d records, want %d: %+v", id, len(v.Audit), n, v.Audit)
				}
				if n == 0 {
					continue
				}
				r := v.Audit[0]
				if r.Reason != "backfill" || r.Decision != dedup.DecisionBackfilled || !r.At.Equal(created) || r.MemoryID != id {
					t.Errorf("%s: record %+v", id, r)
				}
				if id == "1" && (r.New != 0.851 || r.NewN != 4) {
					t.Errorf("%s: confidence %v, n %d; want the stored 0.851 and 4", id, r.New, r.NewN)
				}
				if id == "2" && (r.New <= 0 || r.New > 1) {
					t.Errorf("%s: computed confidence %v", id, r.New)
				}
			}
		})
	}
}

// TestRecordAdoptedIsBackfillRecord: the record of an adopted memory is
// the one a backfill writes for the same memory, and adopting a point a
// backfill adopted adds nothing to its trail.
func TestRecordAdoptedIsBackfillRecord(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	seedForeign(t, h.client, "m0", []map[string]any{mem0Payload("Dana uses Neovim", "dana", "2026-04-01T10:00:00Z", "")})
	h.backfill(t, dedup.Backfill{Collection: "m0", Mapping: foreign.Mem0(), EmbedderModel: "text-embedding-3-small", ExtractorModel: "gpt-4o-mini"})
	backfilled := h.audit(t, "m0", "1")
	if len(backfilled) != 1 {
		t.Fatalf("backfill trail %+v", backfilled)
	}
	pts, err := h.client.Get(ctx, &qdrant.GetPoints{CollectionName: "m0", Ids: []*qdrant.PointId{qdrant.NewIDNum(1)},
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("get: %v", err)
	}
	p := &qdrant.PointStruct{Id: pts[0].GetId(), Payload: pts[0].GetPayload(),
		Vectors: qdrant.NewVectorsDense(pts[0].GetVectors().GetVector().GetDense().GetData())}

	// Again in the backfilled collection: the same record id.
	if n, err := h.eng.RecordAdopted(ctx, "m0", []*qdrant.PointStruct{p}); err != nil || n != 1 {
		t.Fatalf("adopt in m0: %d, %v", n, err)
	}
	if diff := cmp.Diff(backfilled, h.audit(t, "m0", "1")); diff != "" {
		t.Errorf("the backfilled memory's trail changed (-before +after):\n%s", diff)
	}

	// The same memory written whole into another collection.
	seedForeign(t, h.client, "copy", nil)
	wait := true
	if _, err := h.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "copy", Wait: &wait, Points: []*qdrant.PointStruct{p}}); err != nil {
		t.Fatal(err)
	}
	before := pointPayloads(t, h.client, "copy")
	if n, err := h.eng.RecordAdopted(ctx, "copy", []*qdrant.PointStruct{p}); err != nil || n != 1 {
		t.Fatalf("adopt in copy: %d, %v", n, err)
	}
	if diff := cmp.Diff(backfilled, h.audit(t, "copy", "1")); diff != "" {
		t.Errorf("adopted record vs the backfill's (-backfill +adopted):\n%s", diff)
	}
	if diff := cmp.Diff(before, pointPayloads(t, h.client, "copy"), protocmp.Transform()); diff != "" {
		t.Errorf("the adopted memory's payload changed:\n%s", diff)
	}
}
