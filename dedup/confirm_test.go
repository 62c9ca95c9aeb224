package dedup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
)

// A session confirms a memory once: n counts independent evidence, and a
// confirmation repeated from the same session (or a second one without a
// session) is answered already_counted, n unchanged.
func TestConfirmCountsOncePerSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		observed string   // the session of the observation that made the memory
		confirms []string // sessions of the confirmations, in order
		wantN    []int    // n after each
		repeats  []bool   // already_counted of each
	}{
		{"same session twice", "", []string{"s1", "s1"}, []int{1, 1}, []bool{false, true}},
		{"two sessions", "", []string{"s1", "s2"}, []int{1, 2}, []bool{false, false}},
		{"without a session twice", "", []string{"", ""}, []int{1, 1}, []bool{false, true}},
		{"a session and none", "", []string{"s1", "", "s1", ""}, []int{1, 2, 2, 2}, []bool{false, false, true, true}},
		// The session that stated the fact confirms it once too.
		{"the observing session", "s1", []string{"s1", "s1", "s2"}, []int{1, 1, 2}, []bool{false, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			m := h.observe(t, dedup.Observation{Text: "Dana works in finance", Source: "speculation", SessionID: c.observed})
			var gotN []int
			var gotRepeat []bool
			for i, s := range c.confirms {
				h.clock.set(t0.Add(time.Duration(i+1) * time.Minute))
				out, err := h.eng.Confirm(context.Background(), dedup.Confirmation{Collection: "mem", MemoryID: m.MemoryID, SessionID: s})
				if err != nil {
					t.Fatalf("confirm %d: %v", i, err)
				}
				if out.Decision != dedup.DecisionConfirmed {
					t.Errorf("confirm %d: decision %s, want confirmed", i, out.Decision)
				}
				if out.AlreadyCounted != (out.Reason != "") {
					t.Errorf("confirm %d: already_counted %v with reason %q, want a reason exactly when already counted", i, out.AlreadyCounted, out.Reason)
				}
				gotN, gotRepeat = append(gotN, out.Observations), append(gotRepeat, out.AlreadyCounted)
				if stored := h.get(t, "mem", m.MemoryID); stored.Observations != out.Observations || stored.Source != "confirmed" {
					t.Errorf("confirm %d: stored n=%d s=%s, want the answer's n %d and s confirmed", i, stored.Observations, stored.Source, out.Observations)
				}
			}
			if diff := cmp.Diff(c.wantN, gotN); diff != "" {
				t.Errorf("n after each confirmation (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.repeats, gotRepeat); diff != "" {
				t.Errorf("already_counted (-want +got):\n%s", diff)
			}
			// Every confirmation is recorded; a repeat with n unchanged, a note,
			// and last_observed_at still moved forward.
			recs := h.audit(t, "mem", m.MemoryID)
			var confirms []dedup.AuditRecord
			for _, r := range recs {
				if r.Reason == "confirm" {
					confirms = append(confirms, r)
				}
			}
			if len(confirms) != len(c.confirms) {
				t.Fatalf("%d confirm records, want %d", len(confirms), len(c.confirms))
			}
			for i, r := range confirms {
				if counted := r.NewN == r.OldN+1; counted == c.repeats[i] || c.repeats[i] != strings.Contains(r.Note, "observations unchanged") {
					t.Errorf("record %d: n %d -> %d, note %q; want a repeat: %v", i, r.OldN, r.NewN, r.Note, c.repeats[i])
				}
			}
			last := t0.Add(time.Duration(len(c.confirms)) * time.Minute)
			if got := h.get(t, "mem", m.MemoryID).LastObservedAt; !got.Equal(last) {
				t.Errorf("last_observed_at %v, want the last confirmation's %v", got, last)
			}
		})
	}
}

// Forgetting replays confirmations by the same rule: a session's repeats
// still add nothing, and once its confirmation is forgotten another
// session's counts.
func TestForgetReplaysConfirmationsOncePerSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.observe(t, dedup.Observation{Text: "Dana works in finance", Source: "speculation", SessionID: "s0"})
	for _, s := range []string{"s1", "s1", "s2", "s2"} {
		if _, err := h.eng.Confirm(context.Background(), dedup.Confirmation{Collection: "mem", MemoryID: m.MemoryID, SessionID: s}); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.get(t, "mem", m.MemoryID).Observations; n != 2 {
		t.Fatalf("n = %d after confirmations from two sessions, want 2", n)
	}
	h.forget(t, "", "s2")
	if n := h.get(t, "mem", m.MemoryID).Observations; n != 1 {
		t.Errorf("n = %d after forgetting s2, want 1 (s1's repeat still adds nothing)", n)
	}
	out, err := h.eng.Confirm(context.Background(), dedup.Confirmation{Collection: "mem", MemoryID: m.MemoryID, SessionID: "s2"})
	if err != nil || out.AlreadyCounted || out.Observations != 2 {
		t.Errorf("s2 confirms again after it was forgotten: %+v %v, want counted, n 2", out, err)
	}
}

// A time more than dedup.max_clock_skew ahead of the engine's clock is
// refused on every write that takes one, naming the field and the skew;
// within the skew, or in the past, it is taken.
func TestTimeAheadOfClockRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *dedup.Config, _ *harness) { c.MaxClockSkew = 10 * time.Minute })
	m := h.observe(t, dedup.Observation{Text: "Dana works in finance", SessionID: "s0"})
	ctx := context.Background()
	writes := map[string]func(at time.Time) (dedup.Outcome, error){
		"observe": func(at time.Time) (dedup.Outcome, error) {
			return h.eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Dana lives in Lisbon", ObservedAt: at})
		},
		"correct": func(at time.Time) (dedup.Outcome, error) {
			return h.eng.Correct(ctx, dedup.Observation{Collection: "mem", Text: "Dana works in law", Corrects: m.MemoryID, ObservedAt: at})
		},
		"confirm": func(at time.Time) (dedup.Outcome, error) {
			return h.eng.Confirm(ctx, dedup.Confirmation{Collection: "mem", MemoryID: m.MemoryID, At: at})
		},
		"used": func(at time.Time) (dedup.Outcome, error) {
			return h.eng.Used(ctx, dedup.Use{Collection: "mem", MemoryID: m.MemoryID, At: at})
		},
	}
	field := map[string]string{"observe": "observed_at", "correct": "observed_at", "confirm": "at", "used": "at"}
	cases := []struct {
		name   string
		ahead  time.Duration
		refuse bool
	}{
		{"two hours ahead", 2 * time.Hour, true},
		{"just past the skew", 10*time.Minute + time.Second, true},
		{"within the skew", 9 * time.Minute, false},
		{"in the past", -time.Hour, false},
	}
	for _, c := range cases {
		for _, name := range []string{"observe", "confirm", "used", "correct"} {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				now := t0.Add(24 * time.Hour)
				h.clock.set(now)
				before := h.get(t, "mem", m.MemoryID)
				_, err := writes[name](now.Add(c.ahead))
				var ie *dedup.InputError
				if !c.refuse {
					if err != nil {
						t.Fatalf("err %v, want the write taken", err)
					}
					return
				}
				if !errors.As(err, &ie) || ie.Field != field[name] || !strings.Contains(ie.Reason, "10m0s") || !strings.Contains(ie.Reason, "dedup.max_clock_skew") {
					t.Fatalf("err %v, want an input error on %s naming the 10m0s skew", err, field[name])
				}
				if after := h.get(t, "mem", m.MemoryID); after.Observations != before.Observations || after.Uses != before.Uses || after.SupersededBy != before.SupersededBy {
					t.Errorf("a refused write changed the memory: %+v -> %+v", before, after)
				}
			})
		}
	}
}

// The engine's clock decides what is in the future, not the wall clock: an
// engine run at an earlier instant (an evaluation) refuses what is ahead of
// it, and one run later takes a time that is ahead of the wall clock.
func TestTimeAheadUsesEngineClock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	wall := time.Now()
	h.clock.set(wall.Add(48 * time.Hour))
	if _, err := h.eng.Observe(context.Background(), dedup.Observation{Collection: "mem", Text: "Dana lives in Lisbon",
		ObservedAt: wall.Add(24 * time.Hour)}); err != nil {
		t.Errorf("a time ahead of the wall clock, behind the engine's: %v", err)
	}
	h.clock.set(wall.Add(-48 * time.Hour))
	var ie *dedup.InputError
	if _, err := h.eng.Observe(context.Background(), dedup.Observation{Collection: "mem", Text: "Dana lives in Porto",
		ObservedAt: wall}); !errors.As(err, &ie) || ie.Field != "observed_at" {
		t.Errorf("a time ahead of the engine's clock: %v, want refused", err)
	}
}

// An observation without an extractor_model stores no extractor_model key
// (nor does its audit record), and the record reads back without a
// problem; a memory that had an empty one loses it when it is next written.
func TestNoExtractorModelStoresNoKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	out := h.observe(t, dedup.Observation{Text: "Dana uses Neovim", Source: "direct", SessionID: "s1"})
	payload := func() map[string]*qdrant.Value {
		pts, err := h.client.Get(context.Background(), &qdrant.GetPoints{CollectionName: "mem",
			Ids: []*qdrant.PointId{qdrant.NewID(out.MemoryID)}, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil || len(pts) != 1 {
			t.Fatalf("get: %v", err)
		}
		return pts[0].GetPayload()
	}
	if v, ok := payload()["extractor_model"]; ok {
		t.Errorf("extractor_model stored as %v, want no key", v)
	}
	if probs := h.codec.DecodeQdrant(payload()).Problems; len(probs) != 0 {
		t.Errorf("decoding the memory reports %v, want nothing", probs)
	}
	for _, p := range h.auditPayloads(t) {
		if strings.Contains(p, `"extractor_model"`) {
			t.Errorf("audit record %s has extractor_model, want no key", p)
		}
	}
	// As an earlier memrank wrote it: the key with an empty value.
	wait := true
	if _, err := h.client.SetPayload(context.Background(), &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
		Payload:        map[string]*qdrant.Value{"extractor_model": qdrant.NewValueString("")},
		PointsSelector: qdrant.NewPointsSelector(qdrant.NewID(out.MemoryID))}); err != nil {
		t.Fatal(err)
	}
	h.observe(t, dedup.Observation{Text: "Dana uses Neovim", Source: "direct", SessionID: "s1"})
	if v, ok := payload()["extractor_model"]; ok {
		t.Errorf("after a restatement extractor_model is %v, want the empty key gone", v)
	}
	// A model given is stored.
	named := h.observe(t, dedup.Observation{Text: "Dana lives in Lisbon", ExtractorModel: "gpt-4o"})
	if got := h.get(t, "mem", named.MemoryID).ExtractorModel; got != "gpt-4o" {
		t.Errorf("extractor_model %q, want gpt-4o", got)
	}
}
