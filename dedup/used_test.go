package dedup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memrank/memrank/dedup"
)

// TestUsed: a use counts once per call (once per observation id), moves
// last_used_at forward, is audited with reason used, and leaves the
// confidence, n and the rest of the memory as they were.
func TestUsed(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	obs := h.observe(t, dedup.Observation{Text: "Dana uses Neovim", Source: "direct", SessionID: "s1"})
	before := h.get(t, "mem", obs.MemoryID)

	at := t0.Add(2 * time.Hour)
	tests := []struct {
		name         string
		use          dedup.Use
		wantUses     int
		wantReplayed bool
		wantLastUsed time.Time
	}{
		{name: "first", use: dedup.Use{ObservationID: "u1", SessionID: "s2", TurnID: "3", At: at}, wantUses: 1, wantLastUsed: at},
		{name: "retried with its id", use: dedup.Use{ObservationID: "u1", SessionID: "s2", TurnID: "3", At: at},
			wantUses: 1, wantReplayed: true, wantLastUsed: at},
		{name: "an older use does not move last_used_at back", use: dedup.Use{At: t0.Add(time.Hour)}, wantUses: 2, wantLastUsed: at},
		{name: "without an id, each call counts", use: dedup.Use{At: at.Add(time.Hour)}, wantUses: 3, wantLastUsed: at.Add(time.Hour)},
	}
	h.clock.set(at.Add(time.Hour)) // the latest use is now
	for _, tc := range tests {
		u := tc.use
		u.Collection, u.MemoryID = "mem", obs.MemoryID
		out, err := h.eng.Used(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if out.Decision != dedup.DecisionUsed || out.Uses != tc.wantUses || out.Replayed != tc.wantReplayed ||
			!near(out.Confidence, obs.Confidence) || out.MemoryID != obs.MemoryID {
			t.Errorf("%s: outcome %+v", tc.name, out)
		}
		m := h.get(t, "mem", obs.MemoryID)
		if m.Uses != tc.wantUses || !m.LastUsedAt.Equal(tc.wantLastUsed) {
			t.Errorf("%s: stored uses %d last used %v, want %d %v", tc.name, m.Uses, m.LastUsedAt, tc.wantUses, tc.wantLastUsed)
		}
		if m.Confidence != before.Confidence || m.Observations != before.Observations || len(m.SessionIDs) != 1 {
			t.Errorf("%s: the use changed the evidence: %+v", tc.name, m)
		}
	}
	recs := h.audit(t, "mem", obs.MemoryID)
	var used int
	for _, r := range recs {
		if r.Reason == "used" {
			used++
			if r.Decision != dedup.DecisionUsed || r.Old != r.New {
				t.Errorf("audit record %+v", r)
			}
		}
	}
	if used != 3 {
		t.Errorf("%d used records, want 3 (the replay adds none)", used)
	}

	// A later observation keeps the uses: the write path never writes them.
	h.clock.set(t0.Add(72 * time.Hour))
	h.observe(t, dedup.Observation{Text: "Dana uses neovim.", Source: "direct", SessionID: "s9", Modality: "email"})
	if m := h.get(t, "mem", obs.MemoryID); m.Uses != 3 {
		t.Errorf("after an observation: uses %d, want 3", m.Uses)
	}
}

func TestUsedNotFoundAndTenancy(t *testing.T) {
	h := newHarness(t, func(c *dedup.Config, _ *harness) { c.Tenancy = scope{} })
	ctx := context.Background()
	a := h.observe(t, dedup.Observation{Text: "Likes jazz", Tenant: "alice"})
	tests := []struct {
		name string
		use  dedup.Use
		want error
	}{
		{"another tenant's memory", dedup.Use{Collection: "mem", Tenant: "bob", MemoryID: a.MemoryID}, dedup.ErrNotFound},
		{"unknown id", dedup.Use{Collection: "mem", Tenant: "alice", MemoryID: "42"}, dedup.ErrNotFound},
		{"unknown collection", dedup.Use{Collection: "nope", Tenant: "alice", MemoryID: a.MemoryID}, dedup.ErrNotFound},
	}
	for _, tc := range tests {
		if _, err := h.eng.Used(ctx, tc.use); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	var ie *dedup.InputError
	if _, err := h.eng.Used(ctx, dedup.Use{Collection: "mem", MemoryID: a.MemoryID}); !errors.As(err, &ie) || ie.Field != "tenant" {
		t.Errorf("no tenant: %v", err)
	}
	if _, err := h.eng.Used(ctx, dedup.Use{Collection: "mem", Tenant: "alice", MemoryID: "not-an-id"}); !errors.As(err, &ie) || ie.Field != "id" {
		t.Errorf("bad id: %v", err)
	}
	if m := h.get(t, "mem", a.MemoryID); m.Uses != 0 {
		t.Errorf("uses %d after refused uses", m.Uses)
	}
}

// TestUsedBatch: each distinct id once, unknown ids answered apart, and a
// retry with the batch's observation id counts nothing twice.
func TestUsedBatch(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	a := h.observe(t, dedup.Observation{Text: "Likes jazz"})
	b := h.observe(t, dedup.Observation{Text: "Plays chess"})
	batch := dedup.UseBatch{Collection: "mem", IDs: []string{a.MemoryID, "42", b.MemoryID, a.MemoryID}, ObservationID: "turn-7"}
	for round := range 2 {
		res, err := h.eng.UsedBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 || res[0].MemoryID != a.MemoryID || !res[1].NotFound || res[2].MemoryID != b.MemoryID {
			t.Fatalf("round %d: results %+v", round, res)
		}
		if res[0].Outcome.Replayed != (round == 1) || res[0].Outcome.Uses != 1 {
			t.Errorf("round %d: %+v", round, res[0].Outcome)
		}
	}
	for _, id := range []string{a.MemoryID, b.MemoryID} {
		if m := h.get(t, "mem", id); m.Uses != 1 {
			t.Errorf("%s: uses %d, want 1", id, m.Uses)
		}
	}
	var ie *dedup.InputError
	if _, err := h.eng.UsedBatch(ctx, dedup.UseBatch{Collection: "mem"}); !errors.As(err, &ie) || ie.Field != "ids" {
		t.Errorf("empty batch: %v", err)
	}
	many := make([]string, dedup.MaxUseBatch+1)
	for i := range many {
		many[i] = "1"
	}
	if _, err := h.eng.UsedBatch(ctx, dedup.UseBatch{Collection: "mem", IDs: many}); !errors.As(err, &ie) || ie.Field != "ids" {
		t.Errorf("oversized batch: %v", err)
	}
}
