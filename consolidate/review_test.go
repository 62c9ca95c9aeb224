package consolidate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/tenancy"
)

func TestReviewQueueAndArchive(t *testing.T) {
	h := newHarness(t)
	h.seed(t, 60)
	ctx := context.Background()
	j := h.job(t, consolidate.Config{}, "r1")
	empty, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem"})
	if err != nil || empty.Total != 0 {
		t.Fatalf("before any consolidation: %+v, %v; want an empty queue", empty, err)
	}
	rep, err := j.Run(ctx, consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if q.Total != rep.ReviewQueue || q.Total == 0 || len(q.Items) != min(3, q.Total) {
		t.Fatalf("queue total %d (%d items), the run counted %d stale", q.Total, len(q.Items), rep.ReviewQueue)
	}
	for i, it := range q.Items {
		if it.Tier != "stale" || it.Why == "" {
			t.Errorf("item %d: %+v", i, it)
		}
		if i > 0 && it.IdleDays > q.Items[i-1].IdleDays {
			t.Errorf("not oldest first: %v after %v", it.IdleDays, q.Items[i-1].IdleDays)
		}
	}
	if !q.ConsolidatedAt.Equal(t0) {
		t.Errorf("consolidated_at %s, want %s", q.ConsolidatedAt, t0)
	}
	withDormant, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem", Limit: 1000, DormantIdle: time.Hour})
	if err != nil || withDormant.Total < q.Total {
		t.Errorf("with dormant: %d, %v; want at least %d", withDormant.Total, err, q.Total)
	}

	target := q.Items[0].ID
	out, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: target})
	if err != nil || !out.Archived || out.From != "stale" {
		t.Fatalf("archive: %+v, %v", out, err)
	}
	if m, _ := h.get(t, target); m.Tier != scoring.TierArchived || m.Retrievable {
		t.Errorf("stored %s/%v after archive", m.Tier, m.Retrievable)
	}
	if again, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: target}); err != nil || again.Archived {
		t.Errorf("second archive: %+v, %v; want nothing changed", again, err)
	}
	if n := h.tierRecords(t, "archive")[target]; n != 1 {
		t.Errorf("%d archive records, want 1", n)
	}
	trail, err := h.eng.Memory(ctx, "mem", "", target)
	if err != nil {
		t.Fatal(err)
	}
	if last := trail.Audit[len(trail.Audit)-1]; last.Reason != "archive" || last.OldTier != "stale" || last.NewTier != "archived" ||
		last.Decision != "reviewed" {
		t.Errorf("the memory's trail ends with %+v, want the archive stale -> archived", last)
	}
	// A run does not bring an archived memory back; only reinforcement does.
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.get(t, target); m.Tier != scoring.TierArchived {
		t.Errorf("a run un-archived a reviewed memory: %s", m.Tier)
	}
	if _, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: "1234"}); !errors.Is(err, consolidate.ErrNotFound) {
		t.Errorf("unknown memory: %v, want ErrNotFound", err)
	}
	if _, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: "nope"}); !errors.Is(err, consolidate.ErrInput) {
		t.Errorf("bad id: %v, want ErrInput", err)
	}
}

func TestSchedulerRunsMemoryCollectionsUnderALease(t *testing.T) {
	h := newHarness(t)
	h.seed(t, 10)
	cfg := consolidate.DefaultConfig()
	cfg.Interval, cfg.Rate = time.Minute, 0
	var mu sync.Mutex
	var runs []string
	onRun := func(r consolidate.Report, err error) {
		if err != nil {
			t.Errorf("run: %v", err)
		}
		mu.Lock()
		runs = append(runs, r.Collection)
		mu.Unlock()
	}
	a := h.job(t, cfg, "a").Schedule(h.client, onRun)
	b := h.job(t, cfg, "b").Schedule(h.client, onRun)
	// Never consolidated: due at the loop's first wake-up, whenever the
	// replica started.
	if due, err := a.Due(context.Background(), "mem"); err != nil || !due {
		t.Errorf("before any run: due %v, %v; want due", due, err)
	}
	a.RunOnce(context.Background())
	if due, err := b.Due(context.Background(), "mem"); err != nil || due {
		t.Errorf("right after a's run: due %v, %v for b; want not due for an Interval", due, err)
	}
	b.RunOnce(context.Background()) // a holds the lease
	if len(runs) != 1 || runs[0] != "mem" {
		t.Errorf("runs %v, want one of mem (the companion is not a memory collection; b had no lease)", runs)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// With tenancy on, a tenant's run touches only the tenant's memories, its
// audit records carry the tenant (so the tenant's trail shows them), and
// the tenant's queue and archive never reach another tenant's memory.
func TestTenantScoped(t *testing.T) {
	h := newHarness(t)
	policy := &tenancy.Policy{Key: "user_id", Header: "x-tenant"}
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	if h.eng, err = dedup.New(h.client, dedup.Config{Codec: h.codec, Embedder: emb, Tenancy: policy, Now: h.clock.Now}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old := t0.Add(-5 * 365 * 24 * time.Hour)
	ids := map[string]string{}
	for _, tenant := range []string{"alice", "bob"} {
		ids[tenant] = h.observe(t, dedup.Observation{Tenant: tenant, Text: text(1), Source: scoring.SourceDirect, ObservedAt: old}).MemoryID
	}
	cfg := consolidate.DefaultConfig()
	cfg.Rate = 0
	j, err := consolidate.New(h.client, consolidate.Options{Config: cfg, Codec: h.codec, Tenancy: policy, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := j.Run(ctx, consolidate.Request{Collection: "mem", Tenant: "alice"})
	if err != nil || rep.Memories != 1 || rep.Archived != 1 {
		t.Fatalf("alice's run: %+v, %v", rep, err)
	}
	if m, _ := h.get(t, ids["bob"]); m.Tier != scoring.TierActive {
		t.Errorf("bob's memory changed by alice's run: %s", m.Tier)
	}
	if m, _ := h.get(t, ids["alice"]); m.Tier != scoring.TierArchived || !m.Retrievable {
		t.Errorf("alice's five-year-old memory: %s/%v, want the label archived, still retrievable", m.Tier, m.Retrievable)
	}
	view, err := h.eng.Memory(ctx, "mem", "alice", ids["alice"])
	if err != nil || view.Audit[len(view.Audit)-1].Reason != "tier" {
		t.Errorf("alice's trail lacks the transition: %+v, %v", view.Audit, err)
	}
	if _, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", Tenant: "alice", ID: ids["bob"]}); !errors.Is(err, consolidate.ErrNotFound) {
		t.Errorf("alice archived bob's memory: %v", err)
	}
	if _, ok, err := j.LastRun(ctx, "mem", "alice"); err != nil || !ok {
		t.Errorf("alice's last run: %v, %v", ok, err)
	}
	if q, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem", Tenant: "bob"}); err != nil || !q.ConsolidatedAt.IsZero() {
		t.Errorf("bob's queue before any run covering bob: %v, %v", q.ConsolidatedAt, err)
	}
	// Without a tenant, only the operator's explicit request spans every
	// tenant: a missing tenant never widens a request.
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem"}); !errors.Is(err, consolidate.ErrInput) {
		t.Errorf("run without a tenant or the operator's flag: %v, want ErrInput", err)
	}
	if _, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem"}); !errors.Is(err, consolidate.ErrInput) {
		t.Errorf("queue without a tenant or the operator's flag: %v, want ErrInput", err)
	}
	if _, err := j.Archive(ctx, consolidate.ArchiveRequest{Collection: "mem", ID: ids["bob"]}); !errors.Is(err, consolidate.ErrInput) {
		t.Errorf("archive without a tenant or the operator's flag: %v, want ErrInput", err)
	}
	if m, _ := h.get(t, ids["bob"]); m.Tier != scoring.TierActive {
		t.Errorf("bob's memory changed by refused requests: %s", m.Tier)
	}
	// The operator's run covers every tenant.
	if rep, err := j.Run(ctx, consolidate.Request{Collection: "mem", Operator: true}); err != nil || rep.Memories != 2 || rep.Archived != 1 {
		t.Errorf("operator's run: %+v, %v", rep, err)
	}
	if q, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem", Tenant: "bob"}); err != nil || !q.ConsolidatedAt.Equal(t0) {
		t.Errorf("bob's queue after the operator's run: consolidated at %v, %v", q.ConsolidatedAt, err)
	}
}

// A short queue is the head of the long one, with the same total.
func TestReviewLimitIsTheHeadOfTheQueue(t *testing.T) {
	h := newHarness(t)
	h.seed(t, 80)
	ctx := context.Background()
	j := h.job(t, consolidate.Config{BatchSize: 7, Interval: time.Hour, Timeout: time.Second}, "r1")
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem"}); err != nil {
		t.Fatal(err)
	}
	req := consolidate.ReviewRequest{Collection: "mem", DormantIdle: time.Hour, Limit: consolidate.MaxReviewLimit}
	all, err := j.Review(ctx, req)
	if err != nil || all.Total < 10 || len(all.Items) != all.Total {
		t.Fatalf("whole queue: %d of %d, %v; want at least 10, all listed", len(all.Items), all.Total, err)
	}
	req.Limit = 4
	head, err := j.Review(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if head.Total != all.Total {
		t.Errorf("total %d with a limit, %d without", head.Total, all.Total)
	}
	if diff := cmp.Diff(all.Items[:4], head.Items); diff != "" {
		t.Errorf("limited queue is not the head of the whole one (-whole +limited):\n%s", diff)
	}
}

// A tenant's last run is the later of its own and the operator's: the
// scheduled run writes only the operator's record, and a tenant must see
// it (GET /v1/stats' tiers_as_of reads ReadLastRun).
func TestReadLastRunIsTheLaterOfTheTenantsAndTheOperators(t *testing.T) {
	h := newHarness(t)
	policy := &tenancy.Policy{Key: "user_id", Header: "x-tenant"}
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	if h.eng, err = dedup.New(h.client, dedup.Config{Codec: h.codec, Embedder: emb, Tenancy: policy, Now: h.clock.Now}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tenant := range []string{"alice", "bob"} {
		h.observe(t, dedup.Observation{Tenant: tenant, Text: text(1), Source: scoring.SourceDirect, ObservedAt: t0})
	}
	cfg := consolidate.DefaultConfig()
	cfg.Rate = 0
	j, err := consolidate.New(h.client, consolidate.Options{Config: cfg, Codec: h.codec, Tenancy: policy, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := consolidate.ReadLastRun(ctx, h.client, "mem", "bob"); ok || err != nil {
		t.Errorf("before any run: ok %v, %v", ok, err)
	}
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem", Operator: true}); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)
	h.clock.set(later)
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem", Tenant: "alice"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tenant string
		at           time.Time
		memories     int // the run's counted memories; -1: not given (the operator's, seen by a tenant)
	}{
		{"the operator", "", t0, 2},
		{"a tenant with only the operator's run", "bob", t0, -1},
		{"a tenant whose own run is later", "alice", later, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, ok, err := consolidate.ReadLastRun(ctx, h.client, "mem", tc.tenant)
			if err != nil || !ok || !run.ComputedAt.Equal(tc.at) {
				t.Fatalf("ReadLastRun = %v, %v, %v; want computed at %v", run.ComputedAt, ok, err, tc.at)
			}
			sum := 0
			for _, n := range run.Tiers {
				sum += n
			}
			if tc.memories < 0 && run.Tiers != nil || tc.memories >= 0 && sum != tc.memories {
				t.Errorf("tiers %v, want %d memories counted", run.Tiers, tc.memories)
			}
			q, err := j.Review(ctx, consolidate.ReviewRequest{Collection: "mem", Tenant: tc.tenant, Operator: tc.tenant == ""})
			if err != nil || !q.ConsolidatedAt.Equal(tc.at) {
				t.Errorf("queue consolidated at %v, %v; want %v", q.ConsolidatedAt, err, tc.at)
			}
		})
	}
	// Alice's later run does not move the operator's record.
	h.clock.set(later.Add(time.Hour))
	if _, err := j.Run(ctx, consolidate.Request{Collection: "mem", Operator: true}); err != nil {
		t.Fatal(err)
	}
	if run, _, err := consolidate.ReadLastRun(ctx, h.client, "mem", "alice"); err != nil || !run.ComputedAt.Equal(later.Add(time.Hour)) {
		t.Errorf("alice after a later operator's run: %v, %v", run.ComputedAt, err)
	}
}
