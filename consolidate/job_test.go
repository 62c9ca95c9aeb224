package consolidate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

func TestRunWritesTheReadPathsTiers(t *testing.T) {
	h := newHarness(t)
	ids := h.seed(t, 40)
	now := t0.Add(24 * time.Hour)
	h.clock.set(now)
	j := h.job(t, consolidate.Config{}, "r1")

	dry, err := j.Run(context.Background(), consolidate.Request{Collection: "mem", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Written != 0 || dry.Audited != 0 || len(h.tierRecords(t, "tier")) != 0 {
		t.Fatalf("dry run wrote: %+v", dry)
	}
	rep, err := j.Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != len(ids) || rep.Archived == 0 || rep.Archived == len(ids) {
		t.Fatalf("want a mix of tiers over %d memories, got %+v", len(ids), rep)
	}
	if fmt.Sprint(rep.Transitions) != fmt.Sprint(dry.Transitions) || rep.Archived != dry.Archived {
		t.Errorf("dry run said %v (%d archived), the run did %v (%d)", dry.Transitions, dry.Archived, rep.Transitions, rep.Archived)
	}
	if rep.Lifted != 0 || dry.Lifted != 0 {
		t.Errorf("lifted %d (dry %d) with no earlier age archive", rep.Lifted, dry.Lifted)
	}
	recs := h.tierRecords(t, "tier")
	transitions := 0
	for _, id := range ids {
		m, _ := h.get(t, id)
		tier, retr := h.expected(&m, now)
		if m.Tier != tier || m.Retrievable != retr {
			t.Errorf("%s: stored %s/%v, want the label %s/%v", id, m.Tier, m.Retrievable, tier, retr)
		}
		if tier != scoring.TierActive {
			transitions++
			if recs[id] != 1 {
				t.Errorf("%s: %d audit records of its transition, want 1", id, recs[id])
			}
		} else if recs[id] != 0 {
			t.Errorf("%s: unchanged, yet %d audit records", id, recs[id])
		}
	}
	if rep.Audited != transitions || rep.Written != transitions {
		t.Errorf("audited %d, written %d; want %d each", rep.Audited, rep.Written, transitions)
	}
	// Age changes the label, never retrievable: every memory labelled
	// archived is still in answers, and no record took one out.
	for _, r := range h.records(t, "tier", "") {
		if !r["old_retrievable"].GetBoolValue() || !r["new_retrievable"].GetBoolValue() || r["decision"].GetStringValue() != "consolidated" {
			t.Errorf("tier record %v: want retrievable true -> true, consolidated", r)
		}
	}
	if rep.Tiers["archived"] == 0 {
		t.Error("no memory labelled archived: the seed should put some past their decay floor")
	}

	again, err := j.Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Written != 0 || again.Audited != 0 || len(again.Transitions) != 0 {
		t.Errorf("second run at the same clock changed something: %+v", again)
	}
	last, ok, err := j.LastRun(context.Background(), "mem", "")
	if err != nil || !ok || !last.ComputedAt.Equal(now) || last.Tiers["archived"] != rep.Tiers["archived"] {
		t.Errorf("last run = %+v, %v, %v; want computed at %s with %v", last, ok, err, now, rep.Tiers)
	}
}

// A memory past its decay floor is labelled archived and stays in
// answers; a reviewer's archive takes it out, and seeing the fact again
// brings it back.
func TestReinforcementRevivesAnArchivedMemory(t *testing.T) {
	h := newHarness(t)
	old := t0.Add(-3 * 365 * 24 * time.Hour)
	first := h.observe(t, dedup.Observation{Text: text(1), Source: scoring.SourceStrongInference, SessionID: "s1", ObservedAt: old, Modality: "chat"})
	j := h.job(t, consolidate.Config{}, "r1")
	rep, err := j.Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := h.get(t, first.MemoryID); m.Tier != scoring.TierArchived || !m.Retrievable || rep.Archived != 1 {
		t.Fatalf("past its floor: %s/%v (%d archived); want the label archived, still retrievable", m.Tier, m.Retrievable, rep.Archived)
	}
	if out, err := j.Archive(context.Background(), consolidate.ArchiveRequest{Collection: "mem", ID: first.MemoryID}); err != nil ||
		!out.Archived || out.From != "archived" {
		t.Fatalf("a reviewer's archive of the label: %+v, %v", out, err)
	}
	if m, _ := h.get(t, first.MemoryID); m.Tier != scoring.TierArchived || m.Retrievable {
		t.Fatalf("after the reviewer's archive: %s/%v, want archived/false", m.Tier, m.Retrievable)
	}
	// Seen again, independently: the same memory (no duplicate), alive.
	again := h.observe(t, dedup.Observation{Text: text(1), Source: scoring.SourceStrongInference, SessionID: "s2",
		Modality: "email"})
	if again.MemoryID != first.MemoryID || again.Decision != dedup.DecisionIndependent {
		t.Fatalf("re-observation: %+v, want independent on %s", again, first.MemoryID)
	}
	m, _ := h.get(t, first.MemoryID)
	if m.Tier != scoring.TierActive || !m.Retrievable {
		t.Errorf("after reinforcement: %s/%v, want active/true", m.Tier, m.Retrievable)
	}
	rep, err = j.Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil || rep.Written != 0 {
		t.Errorf("run after revival: %+v, %v; want nothing to write", rep, err)
	}
}

// Two jobs on one collection at once, while the write path reinforces some
// memories: every transition has exactly one audit record, and no update
// of the write path is lost.
func TestConcurrentRunsAndWrites(t *testing.T) {
	h := newHarness(t)
	const n = 120
	ids := h.seed(t, n)
	now := t0.Add(time.Hour)
	h.clock.set(now)
	cfg := consolidate.DefaultConfig()
	cfg.Rate, cfg.BatchSize = 0, 16
	jobs := []*consolidate.Job{h.job(t, cfg, "r1"), h.job(t, cfg, "r2")}

	reinforced := map[string]bool{}
	for i := 0; i < n; i += 7 {
		reinforced[ids[i]] = true
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, j := range jobs {
		wg.Go(func() {
			if _, err := j.Run(context.Background(), consolidate.Request{Collection: "mem"}); err != nil {
				errs <- err
			}
		})
	}
	wg.Go(func() {
		for i := 0; i < n; i += 7 {
			if _, err := h.eng.Observe(context.Background(), dedup.Observation{Collection: "mem", Text: text(i),
				Source: scoring.SourceStrongInference, SessionID: fmt.Sprintf("late%d", i), Modality: "email"}); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A third run finishes what the races left (writes the write path
	// overtook); it must not audit a transition twice.
	if _, err := jobs[0].Run(context.Background(), consolidate.Request{Collection: "mem"}); err != nil {
		t.Fatal(err)
	}
	recs := h.tierRecords(t, "tier")
	for _, id := range ids {
		m, _ := h.get(t, id)
		if reinforced[id] {
			if m.Observations != 1 || m.Tier != scoring.TierActive || !m.Retrievable {
				t.Errorf("%s reinforced: n=%d %s/%v, want n=1 active/true", id, m.Observations, m.Tier, m.Retrievable)
			}
			continue
		}
		tier, retr := h.expected(&m, now)
		if m.Tier != tier || m.Retrievable != retr {
			t.Errorf("%s: stored %s/%v, want %s/%v", id, m.Tier, m.Retrievable, tier, retr)
		}
		want := 0
		if tier != scoring.TierActive {
			want = 1
		}
		if recs[id] != want {
			t.Errorf("%s: %d audit records, want %d", id, recs[id], want)
		}
	}
}

func TestCompactAccessCounts(t *testing.T) {
	h := newHarness(t)
	now := t0.Add(24 * time.Hour)
	h.clock.set(now)
	recent := h.observe(t, dedup.Observation{Text: text(1), Source: scoring.SourceDirect}).MemoryID
	idle := h.observe(t, dedup.Observation{Text: text(2), Source: scoring.SourceDirect}).MemoryID
	ctx := context.Background()
	set := func(id string, counts map[string]int64, lastAccess time.Time) {
		fields := map[string]*qdrant.Value{}
		for k, v := range counts {
			fields[k] = qdrant.NewValueInt(v)
		}
		wait := true
		if _, err := h.client.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
			PointsSelector: qdrant.NewPointsSelector(qdrant.NewID(id)),
			Payload: map[string]*qdrant.Value{"access_counts": qdrant.NewValueFromFields(fields),
				"last_accessed_at": qdrant.NewValueString(lastAccess.Format(time.RFC3339))}}); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int64{"gone": 5, "live": 3, "unknown": 2, "_merged": 4}
	set(recent, counts, now.Add(-time.Hour))
	set(idle, counts, now.Add(-30*24*time.Hour))
	heartbeat := func(replica string, at time.Time) {
		if err := consolidate.WriteHeartbeat(ctx, h.client, "mem", replica, at); err != nil {
			t.Fatal(err)
		}
	}
	heartbeat("gone", now.Add(-10*24*time.Hour))
	heartbeat("live", now.Add(-time.Minute))

	rep, err := h.job(t, consolidate.Config{}, "r1").Run(ctx, consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.CompactedKeys != 3 {
		t.Errorf("compacted %d keys, want 3 (gone twice, unknown on the idle memory)", rep.CompactedKeys)
	}
	for _, tc := range []struct {
		name string
		id   string
		want map[string]int64
	}{
		{"recently accessed: a key without heartbeat stays", recent, map[string]int64{"_compacted": 5, "live": 3, "unknown": 2, "_merged": 4}},
		{"idle: every key of a replica not known alive goes", idle, map[string]int64{"_compacted": 7, "live": 3, "_merged": 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := h.get(t, tc.id)
			got := map[string]int64{}
			for _, a := range m.AccessCounts {
				got[a.Replica] = a.Count
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("access_counts = %v, want %v", got, tc.want)
			}
			if m.AccessCount() != 14 {
				t.Errorf("access count %d, want 14: a count was lost or doubled", m.AccessCount())
			}
		})
	}
	if rep, err := h.job(t, consolidate.Config{}, "r2").Run(ctx, consolidate.Request{Collection: "mem"}); err != nil || rep.CompactedKeys != 0 {
		t.Errorf("second run: %d keys, %v; want none", rep.CompactedKeys, err)
	}
}

// The access recorder leaves its heartbeat in the companion as it flushes;
// compaction reads it.
func TestRecorderWritesItsHeartbeat(t *testing.T) {
	h := newHarness(t)
	id := h.observe(t, dedup.Observation{Text: text(1), Source: scoring.SourceDirect}).MemoryID
	rec, err := rank.NewRecorder(h.client, rank.RecorderConfig{ReplicaID: "pod-a", Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rec.Record("mem", qdrant.NewID(id), 0)
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	pts, err := h.client.Get(context.Background(), &qdrant.GetPoints{CollectionName: "mem" + memory.AuditSuffix,
		Ids: []*qdrant.PointId{memory.HeartbeatID("pod-a")}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("heartbeat: %d points, %v", len(pts), err)
	}
	if got := pts[0].GetPayload()[memory.HeartbeatFlushedKey].GetStringValue(); got != memory.FormatTime(t0) {
		t.Errorf("flushed_at %q, want %s", got, memory.FormatTime(t0))
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
