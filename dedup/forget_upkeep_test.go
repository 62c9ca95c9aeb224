package dedup_test

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
)

// use records one use of id in session at at.
func (h *harness) use(t *testing.T, id, session string, at time.Time) {
	t.Helper()
	if at.After(h.clock.Now()) {
		h.clock.set(at) // the use happens at its time: a later one is refused
	}
	if _, err := h.eng.Used(context.Background(), dedup.Use{Collection: "mem", MemoryID: id, SessionID: session, At: at}); err != nil {
		t.Fatalf("use %s in %s: %v", id, session, err)
	}
}

// upkeepRecords writes n audit records of id's upkeep straight into the
// companion, alternately uses in session "bulk" and tier changes, as
// heavy use and consolidation leave them: cheaper than n API calls.
func (h *harness) upkeepRecords(t *testing.T, id string, n int) {
	t.Helper()
	wait := true
	for start := 0; start < n; start += 2000 {
		var pts []*qdrant.PointStruct
		for i := start; i < min(n, start+2000); i++ {
			reason, session := "used", "bulk"
			if i%2 == 1 {
				reason, session = "tier", ""
			}
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewID(uuid.NewString()), Vectors: qdrant.NewVectorsDense([]float32{1}),
				Payload: qdrant.NewValueMap(map[string]any{"kind": "audit", "memory_id": id, "reason": reason,
					"session_id": session, "turn_id": strconv.Itoa(i), "at": memory.FormatTime(t0.Add(-time.Hour)),
					"written_at_ns": int64(i), "seq": int64(0), "collection": "mem", "decision": reason})})
		}
		if _, err := h.client.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "mem_memrank_audit",
			Wait: &wait, Points: pts}); err != nil {
			t.Fatal(err)
		}
	}
}

// auditCount counts id's audit records matching more conditions.
func (h *harness) auditCount(t *testing.T, id string, must, mustNot []*qdrant.Condition) uint64 {
	t.Helper()
	exact := true
	n, err := h.client.Count(context.Background(), &qdrant.CountPoints{CollectionName: "mem_memrank_audit", Exact: &exact,
		Filter: &qdrant.Filter{Must: append(must, qdrant.NewMatchKeyword("memory_id", id)), MustNot: mustNot}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForgetHeavilyUsed: a memory with more upkeep records (uses, tier
// changes) than a replay may read can still be forgotten and deleted, and
// the upkeep records of the forgotten session, or of the deleted memory,
// are redacted or deleted with the rest.
func TestForgetHeavilyUsed(t *testing.T) {
	t.Parallel()
	const bulk = 10300 // past the replay's bound of 10,000 records by more than a page
	deleteRecord := qdrant.NewMatchKeyword("reason", "delete")
	setup := func(t *testing.T, policy string) (*harness, string) {
		// Some 10,000 payload rewrites take seconds under -race on a busy
		// machine: the deadline is not what this test is about.
		h := newHarness(t, func(cfg *dedup.Config, _ *harness) { cfg.Forget.Audit, cfg.Timeout = policy, 2*time.Minute })
		id := h.observeAll(t, []string{"s1", "s2"})
		h.use(t, id, "u", t0.Add(30*time.Hour))
		h.upkeepRecords(t, id, bulk)
		return h, id
	}
	t.Run("redact", func(t *testing.T) {
		t.Parallel()
		h, id := setup(t, dedup.AuditRedact)
		rep := h.forget(t, "", "u")
		if rep.AuditRedacted != 1 || rep.MemoriesUpdated != 1 {
			t.Errorf("forgetting the session of one use: %+v, want its record redacted", rep)
		}
		if n := h.auditCount(t, id, []*qdrant.Condition{qdrant.NewMatchKeyword("session_id", "u")}, nil); n != 0 {
			t.Errorf("%d records still name the forgotten session", n)
		}
		rep = h.forget(t, "", "s1")
		if rep.MemoriesUpdated != 1 || rep.AuditRedacted != 1 {
			t.Errorf("forgetting s1: %+v, want the memory recomputed", rep)
		}
		if m := h.get(t, "mem", id); !slices.Equal(m.SessionIDs, []string{"s2"}) {
			t.Errorf("sessions %v, want s2", m.SessionIDs)
		}
		// Not yet forgotten: the bulk and the evidence of s2 (the use of u,
		// the insert of s1 and the two forget records were).
		want := bulk + 1
		rep, err := h.eng.DeleteMemory(context.Background(), "mem", "", id)
		if err != nil || rep.MemoriesDeleted != 1 || rep.AuditRedacted != want {
			t.Fatalf("delete: %+v, %v; want the memory deleted and %d records redacted", rep, err, want)
		}
		if n := h.auditCount(t, id, []*qdrant.Condition{qdrant.NewMatchKeywords("session_id", "bulk", "u", "s2")}, nil); n != 0 {
			t.Errorf("%d records still name their session", n)
		}
		if n := h.auditCount(t, id, nil, []*qdrant.Condition{qdrant.NewMatchBool("memory_deleted", true), deleteRecord}); n != 0 {
			t.Errorf("%d records (besides the delete's) not marked as of a deleted memory", n)
		}
		if again, err := h.eng.DeleteMemory(context.Background(), "mem", "", id); err != nil || again.AuditRedacted != 0 {
			t.Errorf("deleting again: %+v, %v", again, err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		t.Parallel()
		h, id := setup(t, dedup.AuditDelete)
		total := int(h.auditCount(t, id, nil, nil))
		rep, err := h.eng.DeleteMemory(context.Background(), "mem", "", id)
		if err != nil || rep.AuditDeleted != total {
			t.Fatalf("delete: %+v, %v; want %d records deleted", rep, err, total)
		}
		if n := h.auditCount(t, id, nil, []*qdrant.Condition{deleteRecord}); n != 0 {
			t.Errorf("%d records left besides the delete's", n)
		}
	})
}

// TestForgetUses: forgetting a session takes its uses out of the memory:
// uses counts the others, and last_used_at is the latest other use.
func TestForgetUses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, policy string
	}{{"redact", dedup.AuditRedact}, {"delete", dedup.AuditDelete}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(cfg *dedup.Config, _ *harness) { cfg.Forget.Audit = c.policy })
			id := h.observeAll(t, []string{"s1", "s2"})
			v := t0.Add(50 * time.Hour)
			h.use(t, id, "v", v)
			h.use(t, id, "u", t0.Add(60*time.Hour))
			h.use(t, id, "u", t0.Add(70*time.Hour))
			rep := h.forget(t, "", "u")
			if rep.AuditRedacted+rep.AuditDeleted != 2 {
				t.Errorf("report %+v, want the two uses' records forgotten", rep)
			}
			if m := h.get(t, "mem", id); m.Uses != 1 || !m.LastUsedAt.Equal(v) {
				t.Errorf("after forgetting u: uses %d last used %v, want 1 and %v", m.Uses, m.LastUsedAt, v)
			}
			h.forget(t, "", "v")
			if m := h.get(t, "mem", id); m.Uses != 0 || !m.LastUsedAt.IsZero() {
				t.Errorf("after forgetting v: uses %d last used %v, want none", m.Uses, m.LastUsedAt)
			}
			if m := h.get(t, "mem", id); !slices.Equal(m.SessionIDs, []string{"s1", "s2"}) {
				t.Errorf("sessions %v: a use is no evidence", m.SessionIDs)
			}
		})
	}
}

// TestForgetAttribution: the attribution is the remaining evidence's, as
// the write path would have set it without the forgotten session.
func TestForgetAttribution(t *testing.T) {
	t.Parallel()
	const text = "Dana moved to Berlin"
	obs := map[string]dedup.Observation{
		"reported": {Text: text, Source: "direct", Attribution: "reported", SessionID: "s1", ObservedAt: t0},
		"weak":     {Text: text, Source: "speculation", SessionID: "s1", ObservedAt: t0},
		"plain":    {Text: text, Source: "direct", SessionID: "s2", ObservedAt: t0.Add(24 * time.Hour)},
		"reported later": {Text: text, Source: "direct", Attribution: "reported", SessionID: "s2",
			ObservedAt: t0.Add(24 * time.Hour)},
	}
	cases := []struct {
		name           string
		observed       []string
		forget, remain string
	}{
		{"the reported first observation", []string{"reported", "plain"}, "s1", "plain"},
		{"the reported later observation", []string{"weak", "reported later"}, "s2", "weak"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var id string
			for _, k := range c.observed {
				h.clock.set(obs[k].ObservedAt)
				id = h.observe(t, obs[k]).MemoryID
			}
			if got := h.get(t, "mem", id).Attribution; got != "reported" {
				t.Fatalf("setup: attribution %q, want reported", got)
			}
			h.forget(t, "", c.forget)
			fresh := newHarness(t)
			fresh.clock.set(obs[c.remain].ObservedAt)
			fresh.observe(t, obs[c.remain])
			want, got := fresh.get(t, "mem", id), h.get(t, "mem", id)
			if got.Attribution != want.Attribution || got.Source != want.Source {
				t.Errorf("attribution %q source %s, want %q %s (as if only %s were observed)",
					got.Attribution, got.Source, want.Attribution, want.Source, c.remain)
			}
		})
	}
}

// TestForgetCorroborationGate: replay opens seed 001's evidence gate on
// the corroborations that remain, counted as the write path counts them,
// including those that raised nothing; the count is recomputed.
func TestForgetCorroborationGate(t *testing.T) {
	t.Parallel()
	texts := []string{"Dana uses Neovim", "Neovim is the editor Dana uses", "Dana edits code in Neovim", "Dana's editor is Neovim"}
	h := newHarness(t, func(cfg *dedup.Config, _ *harness) { cfg.Corroboration.Boost = 0.10 })
	h.emb.on("editor", math.Sqrt(0.88), texts...)
	first := h.observe(t, dedup.Observation{Text: texts[0], Source: "direct", ExtractorModel: "gpt-4o",
		MemoryType: "preference", Entities: []string{"Dana", "Neovim"}, SessionID: "a"})
	// b lifts it to the gate (0.80), c adds nothing (still below the gate's
	// count), d opens the gate: 0.90.
	for i, s := range []string{"b", "c", "d"} {
		h.observe(t, dedup.Observation{Text: texts[i+1], Source: "strong_inference", Entities: []string{"Neovim"}, SessionID: s})
	}
	m := h.get(t, "mem", first.MemoryID)
	if !near(m.Confidence, 0.90) || m.Corroborations != 3 {
		t.Fatalf("setup: confidence %v corroborations %d, want 0.90 and 3", m.Confidence, m.Corroborations)
	}
	// A restatement in z has nothing to do with the boosts.
	h.observe(t, dedup.Observation{Text: texts[0], Source: "speculation", SessionID: "z"})
	h.forget(t, "", "z")
	if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, 0.90) || m.Corroborations != 3 {
		t.Errorf("after forgetting z: confidence %v corroborations %d, want 0.90 and 3", m.Confidence, m.Corroborations)
	}
	// Without b: c lifts it to 0.80, d is the second corroboration.
	h.forget(t, "", "b")
	if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, 0.80) || m.Corroborations != 2 {
		t.Errorf("after forgetting b: confidence %v corroborations %d, want 0.80 and 2", m.Confidence, m.Corroborations)
	}
}

// TestForgetKeepsMergedFlags: a merge's replay folds the merged memory in
// as the write path did, its flags and attribution included.
func TestForgetKeepsMergedFlags(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.mergedTwin(t, func(m *memory.Memory) {
		m.Flags, m.Attribution = []string{dedup.FlagRecurringEvent}, "reported"
	})
	if w := h.get(t, "mem", first.MemoryID); !slices.Equal(w.Flags, []string{dedup.FlagRecurringEvent}) || w.Attribution != "reported" {
		t.Fatalf("setup: flags %v attribution %q", w.Flags, w.Attribution)
	}
	h.forget(t, "", "s1")
	if w := h.get(t, "mem", first.MemoryID); !slices.Equal(w.Flags, []string{dedup.FlagRecurringEvent}) || w.Attribution != "reported" {
		t.Errorf("after forgetting s1: flags %v attribution %q, want the twin's kept", w.Flags, w.Attribution)
	}
}

// TestDeleteErasesBackfillOriginal: a deleted memory's payload as a
// backfill kept it (its text) goes with it, so a rollback cannot bring the
// erased text back; the other memories' originals stay.
func TestDeleteErasesBackfillOriginal(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	seedForeign(t, h.client, "m0", []map[string]any{
		mem0Payload("Dana uses Neovim", "dana", "2026-04-01T10:00:00Z", ""),
		mem0Payload("Dana has two cats", "dana", "2026-04-02T10:00:00Z", ""),
	})
	h.backfill(t, dedup.Backfill{Collection: "m0", Mapping: foreign.Mem0(), EmbedderModel: "text-embedding-3-small"})
	companion := "m0_memrank_backfill"
	originals := func() int {
		t.Helper()
		exact := true
		n, err := h.client.Count(ctx, &qdrant.CountPoints{CollectionName: companion, Exact: &exact,
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "original")}}})
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	if n := originals(); n != 2 {
		t.Fatalf("%d originals kept, want 2", n)
	}
	if _, err := h.eng.DeleteMemory(ctx, "m0", "", "1"); err != nil {
		t.Fatal(err)
	}
	if n := originals(); n != 1 {
		t.Errorf("%d originals after deleting one memory, want 1: the erased text survives for a rollback", n)
	}
	if _, err := h.eng.RollbackBackfill(ctx, dedup.BackfillRollback{Collection: "m0"}); err != nil {
		t.Fatal(err)
	}
	if got := pointPayloads(t, h.client, "m0"); len(got) != 1 || got["2"] == nil {
		t.Errorf("after rollback: %d points, want only the memory that was not deleted", len(got))
	}
	// A collection never backfilled has no companion: deleting still works.
	out := h.observe(t, dedup.Observation{Text: "Dana likes figs", SessionID: "s"})
	if _, err := h.eng.DeleteMemory(ctx, "mem", "", out.MemoryID); err != nil {
		t.Errorf("delete without a backfill companion: %v", err)
	}
}
