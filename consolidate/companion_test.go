package consolidate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/memory"
)

// foreignCollection creates coll through Qdrant's API, as another tool
// would, holding one memory-shaped point labelled active but observed ten
// years before t0 (a run labels it archived), and no audit companion.
func (h *harness) foreignCollection(t *testing.T, coll string) {
	t.Helper()
	ctx := context.Background()
	if err := h.client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: coll,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	wait := true
	if _, err := h.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: []*qdrant.PointStruct{{
		Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0),
		Payload: qdrant.NewValueMap(map[string]any{"text": "Dana lived in Oslo", "memory_type": "fact", "source": "direct",
			"confidence": 0.9, "created_at": "2016-05-01T09:00:00Z", "tier": "active", "retrievable": true}),
	}}}); err != nil {
		t.Fatal(err)
	}
}

// TestJobsCreateTheCompanion: a run or an archive on a collection written
// through Qdrant's API (no audit companion) creates the companion through
// the job's hook before writing, as the write path does, and audits what
// it changed; a dry run creates nothing.
func TestJobsCreateTheCompanion(t *testing.T) {
	tests := []struct {
		name          string
		do            func(ctx context.Context, j *consolidate.Job, coll string) (created bool, err error)
		wantCompanion bool
		wantCreated   bool
		wantReason    string // an audit record of this reason is in the companion
	}{
		{
			name: "run",
			do: func(ctx context.Context, j *consolidate.Job, coll string) (bool, error) {
				rep, err := j.Run(ctx, consolidate.Request{Collection: coll, Operator: true})
				return rep.CompanionCreated, err
			},
			wantCompanion: true, wantCreated: true, wantReason: "tier",
		},
		{
			name: "dry run",
			do: func(ctx context.Context, j *consolidate.Job, coll string) (bool, error) {
				rep, err := j.Run(ctx, consolidate.Request{Collection: coll, Operator: true, DryRun: true})
				return rep.CompanionCreated, err
			},
		},
		{
			name: "archive",
			do: func(ctx context.Context, j *consolidate.Job, coll string) (bool, error) {
				_, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: coll, ID: "1", Operator: true})
				return false, err
			},
			wantCompanion: true, wantReason: "archive",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			const coll = "foreign"
			h.foreignCollection(t, coll)
			cfg := consolidate.DefaultConfig()
			cfg.Rate = 0
			j, err := consolidate.New(h.client, consolidate.Options{Config: cfg, Codec: h.codec, Now: h.clock.Now,
				EnsureCompanion: h.eng.EnsureAudit})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			created, err := tc.do(ctx, j, coll)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if created != tc.wantCreated {
				t.Errorf("companion created %v, want %v", created, tc.wantCreated)
			}
			exists, err := h.client.CollectionExists(ctx, memory.AuditCollection(coll))
			if err != nil || exists != tc.wantCompanion {
				t.Fatalf("companion exists %v (%v), want %v", exists, err, tc.wantCompanion)
			}
			if tc.wantReason == "" {
				return
			}
			n, err := h.client.Count(ctx, &qdrant.CountPoints{CollectionName: memory.AuditCollection(coll), Exact: qdrant.PtrOf(true),
				Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("reason", tc.wantReason)}}})
			if err != nil || n != 1 {
				t.Errorf("audit records of reason %q: %d (%v), want 1", tc.wantReason, n, err)
			}
			if created, err := tc.do(ctx, j, coll); err != nil || created {
				t.Errorf("again: created %v, %v; want the companion found, not created", created, err)
			}
		})
	}
}

// TestJobWithoutCompanionHook: without the hook a job needs the companion,
// and says which one is missing.
func TestJobWithoutCompanionHook(t *testing.T) {
	h := newHarness(t)
	h.foreignCollection(t, "foreign")
	_, err := h.job(t, consolidate.Config{}, "r1").Run(context.Background(), consolidate.Request{Collection: "foreign", Operator: true})
	if err == nil || !strings.Contains(err.Error(), "foreign"+memory.AuditSuffix) {
		t.Fatalf("run without the companion and the hook: %v, want an error naming the companion", err)
	}
}
