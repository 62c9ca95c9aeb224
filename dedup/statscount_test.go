package dedup_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// fillStatsCollection writes n memories of every kind /v1/stats tells
// apart: several types and ages, superseded ones, unscored points of
// another tool, and a stored tier that is the one the scan computes (as
// consolidation would have written it). Half belong to tenant "alice".
func fillStatsCollection(t *testing.T, h *harness, coll string, n int, tenant string) {
	t.Helper()
	ctx := context.Background()
	// The first observation creates the collection and its indexes; its
	// memory goes, since its stored tier is the write path's "active".
	first := h.observe(t, dedup.Observation{Collection: coll, Text: "Dana likes figs", SessionID: "s0", Tenant: tenant})
	if _, err := h.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: coll,
		Points: qdrant.NewPointsSelector(qdrant.NewID(first.MemoryID))}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	types := []string{"fact", "preference", "event", "entity", "relation"}
	now := h.clock.Now()
	params := h.codec.Params()
	var pts []*qdrant.PointStruct
	for i := range n {
		payload := map[string]*qdrant.Value{"user_id": qdrant.NewValueString([]string{"alice", "bob"}[i%2])}
		if i%17 == 0 { // a point another tool wrote: no memory fields
			payload["text"] = qdrant.NewValueString(fmt.Sprintf("a note %d", i))
		} else {
			created := now.Add(-time.Duration(rng.IntN(900*24)) * time.Hour)
			m := memory.Memory{
				Text: fmt.Sprintf("memory %d", i), MemoryType: types[rng.IntN(len(types))], Source: "direct",
				ExtractorModel: "gpt-4o", Confidence: math.Round(rng.Float64()*1000) / 1000, HasConfidence: true,
				CreatedAt: created, LastObservedAt: created, Retrievable: true, Schema: 1,
			}
			if i%11 == 0 {
				m.SupersededBy = "1"
				m.Retrievable = false
			}
			for k, v := range h.codec.Encode(&m) {
				payload[k] = v
			}
			if i%44 == 0 { // archived, then superseded: it keeps its stored tier
				payload["tier"] = qdrant.NewValueString("archived")
			}
			if i%13 == 0 && m.SupersededBy == "" { // archived by a person: out of answers
				payload["tier"], payload["retrievable"] = qdrant.NewValueString("archived"), qdrant.NewValueBool(false)
			}
			if m.SupersededBy == "" && i%13 != 0 { // consolidation leaves superseded and archived memories alone
				stored := h.codec.DecodeQdrant(payload)
				in := h.codec.Inputs(&stored)
				payload["tier"], payload["retrievable"] = consolidated(params.Evaluate(&in, 1, now))
			}
		}
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(1000 + i)), Vectors: qdrant.NewVectorsDense(make([]float32, 256)), Payload: payload})
	}
	pts[1].Vectors = qdrant.NewVectorsDense(append([]float32{1}, make([]float32, 255)...))
	wait := true
	if _, err := h.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Points: pts, Wait: &wait}); err != nil {
		t.Fatal(err)
	}
}

// The counted stats give the scan's figures (the average within 0.005)
// when the stored tiers are current, and count exactly what the scan
// counts: archived apart, superseded apart, points without a confidence as
// unscored; with tenancy on, only the tenant's.
func TestCountedStatsMatchScan(t *testing.T) {
	tests := []struct {
		name    string
		tenancy bool
		tenant  string
		points  int // memories + archived + superseded
	}{
		{name: "tenancy off", points: 600},
		{name: "alice", tenancy: true, tenant: "alice", points: 300},
		{name: "bob", tenancy: true, tenant: "bob", points: 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *dedup.Config, _ *harness) {
				if tt.tenancy {
					c.Tenancy = scope{}
				}
			})
			fillStatsCollection(t, h, "mem", 600, tt.tenant)
			ctx := context.Background()
			counted, err := h.eng.Stats(ctx, "mem", tt.tenant)
			if err != nil {
				t.Fatal(err)
			}
			scanned, err := h.eng.ScanStats(ctx, "mem", tt.tenant)
			if err != nil {
				t.Fatal(err)
			}
			if counted.Method != "counted" || scanned.Method != "scanned" {
				t.Errorf("methods %q, %q", counted.Method, scanned.Method)
			}
			if counted.Archived == 0 || counted.Superseded == 0 || counted.Buckets["unscored"] == 0 || counted.Tiers["stale"] == 0 {
				t.Errorf("the fixture lacks a kind: %+v", counted)
			}
			if math.Abs(counted.Average-scanned.Average) > 0.005 {
				t.Errorf("average %v, scan %v", counted.Average, scanned.Average)
			}
			ignore := cmpopts.IgnoreFields(dedup.Stats{}, "Method", "Average", "TiersAsOf")
			if diff := cmp.Diff(scanned, counted, ignore); diff != "" {
				t.Errorf("counted differs from the scan (-scan +counted):\n%s", diff)
			}
			if total := counted.Memories + counted.Archived + counted.Superseded; total != tt.points {
				t.Errorf("%d points accounted for, want %d", total, tt.points)
			}
		})
	}
}

// consolidated is what consolidation stores for a score: the tier as a
// label, retrievable.
func consolidated(s scoring.Score) (tier, retrievable *qdrant.Value) {
	return qdrant.NewValueString(s.Tier.String()), qdrant.NewValueBool(true)
}

// A collection without the counts' indexes (another tool's, or one from
// before them) is scanned once rather than counted a hundred times by
// reading every payload.
func TestStatsWithoutIndexesScan(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "foreign",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 256, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	m := memory.Memory{Text: "Dana likes figs", MemoryType: "fact", Source: "direct", Confidence: 0.7, HasConfidence: true,
		CreatedAt: t0, LastObservedAt: t0, Retrievable: true, Schema: 1}
	wait := true
	if _, err := h.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "foreign", Wait: &wait, Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense(make([]float32, 256)), Payload: h.codec.Encode(&m)}}}); err != nil {
		t.Fatal(err)
	}
	st, err := h.eng.Stats(ctx, "foreign", "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Method != "scanned" || st.Memories != 1 || st.Buckets["medium"] != 1 {
		t.Errorf("stats %+v, want one medium memory, scanned", st)
	}
	if _, err := h.eng.Stats(ctx, "missing", ""); !errors.Is(err, dedup.ErrNotFound) {
		t.Errorf("stats of a missing collection: %v, want ErrNotFound", err)
	}
}
