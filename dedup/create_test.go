package dedup_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
)

// layout is what a collection looks like to a caller: its vectors and its
// payload indexes, and its companion's.
type layout struct {
	Size, AuditSize         uint64
	Distance                qdrant.Distance
	Indexes, AuditIndexes   []string
	RecordModel, RecordDims any
}

func layoutOf(t *testing.T, h *harness, coll string) layout {
	t.Helper()
	ctx := context.Background()
	info, err := h.client.GetCollectionInfo(ctx, coll)
	if err != nil {
		t.Fatalf("collection %s: %v", coll, err)
	}
	audit, err := h.client.GetCollectionInfo(ctx, memory.AuditCollection(coll))
	if err != nil {
		t.Fatalf("companion of %s: %v", coll, err)
	}
	keys := func(m map[string]*qdrant.PayloadSchemaInfo) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	pts, err := h.client.Get(ctx, &qdrant.GetPoints{CollectionName: memory.AuditCollection(coll),
		Ids: []*qdrant.PointId{memory.EmbedderRecordID()}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("embedder record of %s: %v (%d points)", coll, err, len(pts))
	}
	rec := memory.ParseEmbedderRecord(pts[0].GetPayload())
	p := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
	return layout{
		Size: p.GetSize(), Distance: p.GetDistance(),
		AuditSize:    audit.GetConfig().GetParams().GetVectorsConfig().GetParams().GetSize(),
		Indexes:      keys(info.GetPayloadSchema()),
		AuditIndexes: keys(audit.GetPayloadSchema()),
		RecordModel:  rec.Model, RecordDims: rec.Dimensions,
	}
}

// TestCreateCollection: CreateCollection makes what the first observation
// of a text makes (collection, indexes, companion, embedder record), keeps
// an existing memory collection, and refuses what the first write would.
func TestCreateCollection(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.observe(t, dedup.Observation{Collection: "observed", Text: "Dana likes tea"})
	want := layoutOf(t, h, "observed")

	got, err := h.eng.CreateCollection(ctx, "made")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if d := cmp.Diff(dedup.Created{Collection: "made", Model: "test-topics-v1:256", Dimensions: topicDims,
		AuditCollection: "made_memrank_audit"}, got); d != "" {
		t.Errorf("first create (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, layoutOf(t, h, "made")); d != "" {
		t.Errorf("created unlike the first observe (-observe +create):\n%s", d)
	}
	if got, err := h.eng.CreateCollection(ctx, "made"); err != nil || !got.Existed {
		t.Errorf("second create: %+v, %v; want Existed", got, err)
	}
	if out := h.observe(t, dedup.Observation{Collection: "made", Text: "Dana likes tea"}); out.CreatedCollection || out.Decision != dedup.DecisionInserted {
		t.Errorf("observe after create: created %v, decision %s", out.CreatedCollection, out.Decision)
	}

	// Dropped through Qdrant's API behind the engine's back: made again.
	if err := h.client.DeleteCollection(ctx, "made"); err != nil {
		t.Fatal(err)
	}
	if got, err := h.eng.CreateCollection(ctx, "made"); err != nil || got.Existed {
		t.Errorf("create after a drop: %+v, %v; want created", got, err)
	}
	if ok, err := h.client.CollectionExists(ctx, "made"); err != nil || !ok {
		t.Errorf("after a drop, create left no collection: %v, %v", ok, err)
	}
}

func TestCreateCollectionRefused(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "theirs",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 384, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, coll string
		check      func(error) bool
	}{
		{"vectors of another size", "theirs", func(err error) bool {
			var me *dedup.MismatchError
			return errors.As(err, &me) && me.HadDims == 384 && me.WantDims == topicDims
		}},
		{"a companion", "theirs_memrank_audit", func(err error) bool {
			var ie *dedup.InputError
			return errors.As(err, &ie) && ie.Field == "collection"
		}},
		{"no name", "", func(err error) bool {
			var ie *dedup.InputError
			return errors.As(err, &ie) && ie.Field == "collection"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := h.eng.CreateCollection(ctx, tt.coll); !tt.check(err) {
				t.Errorf("err %v", err)
			}
		})
	}
	if ok, _ := h.client.CollectionExists(ctx, "theirs_memrank_audit"); ok {
		t.Error("a refused create made a companion")
	}
}
