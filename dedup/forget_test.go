package dedup_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
)

// sessionObs are one fact seen in four sessions, each with its own levels,
// turn, modality and entities, a day apart.
func sessionObs() map[string]dedup.Observation {
	lp := -0.05
	return map[string]dedup.Observation{
		"s1": {Text: "Dana uses Neovim", MemoryType: "preference", Source: "direct", ExtractorModel: "gpt-4o",
			SessionID: "s1", TurnID: "4", Modality: "chat", Entities: []string{"Dana", "Neovim"},
			ObservedAt: t0, ObservationID: "obs-s1"},
		"s2": {Text: "Dana uses Neovim", MemoryType: "fact", Source: "weak_inference", ExtractorModel: "small-model",
			SessionID: "s2", TurnID: "7", Modality: "email", Entities: []string{"Dana", "Editor"},
			ObservedAt: t0.Add(24 * time.Hour)},
		"s3": {Text: "Dana uses neovim.", MemoryType: "preference", Source: "strong_inference", ExtractorLogprob: &lp,
			SessionID: "s3", TurnID: "1", Modality: "calendar", Entities: []string{"Dana"},
			ObservedAt: t0.Add(48 * time.Hour)},
		// The same session again, later: a restatement.
		"s1b": {Text: "Dana uses Neovim", Source: "speculation", SessionID: "s1", TurnID: "9", Modality: "chat",
			ObservedAt: t0.Add(72 * time.Hour)},
	}
}

// facts are the fields forgetting recomputes, as compared between a memory
// that lost a session and one that never saw it.
type facts struct {
	Source, Type, Extractor, Grounding string
	Logprob                            float64
	N                                  int
	Confidence                         float64
	Sessions, Turns, Entities, Modals  []string
	Created, Last                      time.Time
	Retrievable                        bool
	SupersededBy                       string
}

func factsOf(m memory.Memory) facts {
	return facts{Source: m.Source, Type: m.MemoryType, Extractor: m.ExtractorModel, Grounding: m.Grounding.String(),
		Logprob: m.ExtractorLogprob, N: m.Observations, Confidence: math.Round(m.Confidence*1e9) / 1e9,
		Sessions: m.SessionIDs, Turns: m.TurnIDs, Entities: m.Entities, Modals: m.Modalities,
		Created: m.CreatedAt, Last: m.LastObservedAt, Retrievable: m.Retrievable, SupersededBy: m.SupersededBy}
}

func (h *harness) observeAll(t *testing.T, keys []string) string {
	t.Helper()
	all := sessionObs()
	var id string
	for _, k := range keys {
		o := all[k]
		h.clock.set(o.ObservedAt)
		id = h.observe(t, o).MemoryID
	}
	return id
}

func (h *harness) forget(t *testing.T, tenant, session string) dedup.ForgetReport {
	t.Helper()
	rep, err := h.eng.ForgetSession(context.Background(), "mem", tenant, session)
	if err != nil {
		t.Fatalf("forget %s: %v", session, err)
	}
	return rep
}

// TestForgetSessionRecomputes: a memory that loses a session ends exactly
// as if that session had never been observed.
func TestForgetSessionRecomputes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		observed []string
		forget   string
		remain   []string // nil: the memory is deleted
		updated  int
		deleted  int
	}{
		{"the first of two", []string{"s1", "s2"}, "s1", []string{"s2"}, 1, 0},
		{"the second of two", []string{"s1", "s2"}, "s2", []string{"s1"}, 1, 0},
		{"the middle of three", []string{"s1", "s2", "s3"}, "s2", []string{"s1", "s3"}, 1, 0},
		{"the first of three", []string{"s1", "s2", "s3"}, "s1", []string{"s2", "s3"}, 1, 0},
		{"a session seen twice", []string{"s1", "s2", "s1b"}, "s1", []string{"s2"}, 1, 0},
		{"the only session", []string{"s1", "s1b"}, "s1", nil, 0, 1},
		{"a session never seen", []string{"s1", "s2"}, "s9", []string{"s1", "s2"}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id := h.observeAll(t, c.observed)
			h.clock.set(t0.Add(100 * time.Hour))
			rep := h.forget(t, "", c.forget)
			if rep.MemoriesUpdated != c.updated || rep.MemoriesDeleted != c.deleted {
				t.Errorf("report %+v, want %d updated and %d deleted", rep, c.updated, c.deleted)
			}
			if c.remain == nil {
				if n := h.count(t, "mem"); n != 0 {
					t.Errorf("%d memories left, want none", n)
				}
				return
			}
			fresh := newHarness(t)
			fresh.observeAll(t, c.remain)
			want := factsOf(fresh.get(t, "mem", id))
			if diff := cmp.Diff(want, factsOf(h.get(t, "mem", id))); diff != "" {
				t.Errorf("after forgetting %s (-as if never seen +got):\n%s", c.forget, diff)
			}
			again := h.forget(t, "", c.forget)
			if again.MemoriesUpdated+again.MemoriesDeleted+again.AuditRedacted+again.AuditDeleted+again.AuditKept != 0 {
				t.Errorf("forgetting again: %+v, want every count 0", again)
			}
		})
	}
}

// auditPayloads are the companion's points as JSON, one per record.
func (h *harness) auditPayloads(t *testing.T) []string {
	t.Helper()
	limit := uint32(1000)
	pts, err := h.client.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: "mem_memrank_audit",
		Limit: &limit, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pts {
		if p.GetPayload()["kind"].GetStringValue() == "audit" {
			out = append(out, string(qdrantjson.AppendPayload(nil, p.GetPayload())))
		}
	}
	return out
}

// TestForgetAuditPolicies: the forgotten session's records are redacted,
// deleted or kept; with redact and delete no record names the session or
// copies what it said, and the forget itself is recorded.
func TestForgetAuditPolicies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		policy                  string
		redacted, deleted, kept int
		mentions                bool // the session is still named in the audit
	}{
		{dedup.AuditRedact, 1, 0, 0, false},
		{dedup.AuditDelete, 0, 1, 0, false},
		{dedup.AuditKeep, 0, 0, 1, true},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(cfg *dedup.Config, _ *harness) { cfg.Forget.Audit = c.policy })
			id := h.observeAll(t, []string{"s1", "s2"})
			before := len(h.auditPayloads(t))
			rep := h.forget(t, "", "s1")
			if rep.AuditRedacted != c.redacted || rep.AuditDeleted != c.deleted || rep.AuditKept != c.kept || rep.AuditPolicy != c.policy {
				t.Errorf("report %+v", rep)
			}
			after := h.auditPayloads(t)
			if want := before - c.deleted + 1; len(after) != want {
				t.Errorf("%d audit records, want %d (one for the forget)", len(after), want)
			}
			var named bool
			for _, p := range after {
				named = named || strings.Contains(p, `"s1"`) || strings.Contains(p, "obs-s1") || strings.Contains(p, "Neovim")
			}
			if named != c.mentions {
				t.Errorf("the audit names the session: %v, want %v:\n%s", named, c.mentions, strings.Join(after, "\n"))
			}
			trail := h.audit(t, "mem", id)
			last := trail[len(trail)-1]
			if last.Reason != "forget" || last.Decision != dedup.DecisionForgotten || last.OldN != 1 || last.NewN != 0 {
				t.Errorf("last record %+v, want the forget: n 1 -> 0", last)
			}
			if c.policy == dedup.AuditRedact && (!trail[0].Forgotten || trail[0].Reason != "insert" || trail[0].SessionID != "" || trail[0].New == 0) {
				t.Errorf("first record %+v, want the insert redacted, its confidence kept", trail[0])
			}
			if again := h.forget(t, "", "s1"); again != (dedup.ForgetReport{Collection: "mem", AuditPolicy: c.policy}) {
				t.Errorf("forgetting again: %+v, want every count 0", again)
			}
			if m := h.get(t, "mem", id); strings.Contains(strings.Join(append(m.SessionIDs, append(m.TurnIDs, m.Entities...)...), " "), "s1") ||
				strings.Contains(strings.Join(m.Entities, " "), "Neovim") {
				t.Errorf("the memory still carries s1: %+v", m)
			}
		})
	}
}

// TestForgetTenancy: a tenant forgets only its own memories, even under a
// session id another tenant also used; without a tenant nothing happens.
func TestForgetTenancy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *dedup.Config, _ *harness) { c.Tenancy = scope{} })
	a := h.observe(t, dedup.Observation{Text: "Likes jazz", Tenant: "alice", SessionID: "s1"})
	b := h.observe(t, dedup.Observation{Text: "Likes jazz", Tenant: "bob", SessionID: "s1"})
	if _, err := h.eng.ForgetSession(context.Background(), "mem", "", "s1"); err == nil {
		t.Error("a forget without a tenant was accepted")
	}
	if rep, err := h.eng.DeleteMemory(context.Background(), "mem", "alice", b.MemoryID); err != nil || rep.MemoriesDeleted != 0 {
		t.Errorf("alice deleting bob's memory: %+v, %v; want nothing deleted", rep, err)
	}
	rep := h.forget(t, "alice", "s1")
	if rep.MemoriesDeleted != 1 {
		t.Errorf("report %+v, want alice's memory deleted", rep)
	}
	if _, err := h.eng.Memory(context.Background(), "mem", "alice", a.MemoryID); !errors.Is(err, dedup.ErrNotFound) {
		t.Errorf("alice's memory after the forget: %v", err)
	}
	if m, err := h.eng.Memory(context.Background(), "mem", "bob", b.MemoryID); err != nil || len(m.Audit) != 1 || m.Audit[0].Forgotten {
		t.Errorf("bob's memory: %+v, %v; want it untouched", m, err)
	}
}

// TestForgetCorrection: a correction only the forgotten session made is
// deleted, and the claim it superseded is retrievable again.
func TestForgetCorrection(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	lisbon := h.observe(t, dedup.Observation{Text: "Dana lives in Lisbon", Source: "direct", SessionID: "s1"})
	porto := h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s2", Corrects: lisbon.MemoryID})
	if porto.Decision != dedup.DecisionCorrected || h.get(t, "mem", lisbon.MemoryID).Retrievable {
		t.Fatalf("correction %+v did not supersede", porto)
	}
	rep := h.forget(t, "", "s2")
	if rep.MemoriesDeleted != 1 || rep.MemoriesUpdated != 1 {
		t.Errorf("report %+v, want the correction deleted and the claim updated", rep)
	}
	m := h.get(t, "mem", lisbon.MemoryID)
	if !m.Retrievable || m.SupersededBy != "" || m.Contradictions != 0 {
		t.Errorf("Lisbon after the forget: retrievable %v, superseded by %q; want retrievable again", m.Retrievable, m.SupersededBy)
	}
	// Seeing the correction's text again later is a new memory, not the
	// old correction's trail come back.
	again := h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s3"})
	if again.Decision != dedup.DecisionInserted || again.Observations != 0 {
		t.Errorf("Porto observed again: %+v", again)
	}
	if m := h.get(t, "mem", lisbon.MemoryID); !m.Retrievable {
		t.Error("a new observation of the forgotten correction superseded the claim again")
	}
}

// TestForgetKeepsSupersessionOfSurvivor: a correction the forgotten
// session made, that another session also supports, still stands.
func TestForgetKeepsSupersessionOfSurvivor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	lisbon := h.observe(t, dedup.Observation{Text: "Dana lives in Lisbon", Source: "direct", SessionID: "s1", ObservedAt: t0})
	porto := h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s2", Corrects: lisbon.MemoryID, ObservedAt: t0})
	h.clock.set(t0.Add(48 * time.Hour))
	h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s3", Modality: "email", ObservedAt: t0.Add(48 * time.Hour)})
	h.forget(t, "", "s2")
	if m := h.get(t, "mem", lisbon.MemoryID); m.Retrievable || m.SupersededBy != porto.MemoryID {
		t.Errorf("Lisbon: retrievable %v superseded by %q; want still superseded by %s", m.Retrievable, m.SupersededBy, porto.MemoryID)
	}
	p := h.get(t, "mem", porto.MemoryID)
	if diff := cmp.Diff([]string{"s3"}, p.SessionIDs); diff != "" || p.Contradictions != 1 || p.Observations != 0 {
		t.Errorf("Porto: n %d, contradictions %d, sessions %s", p.Observations, p.Contradictions, diff)
	}
}

// TestDeleteMemory: one memory deleted with its audit trail as configured;
// the claim it superseded comes back; a second delete finds nothing.
func TestDeleteMemory(t *testing.T) {
	t.Parallel()
	cases := []struct {
		policy                  string
		redacted, deleted, kept int
	}{
		{dedup.AuditRedact, 2, 0, 0}, // the correction's insert, and its contradiction record as the winner
		{dedup.AuditDelete, 0, 2, 0},
		{dedup.AuditKeep, 0, 0, 2},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(cfg *dedup.Config, _ *harness) { cfg.Forget.Audit = c.policy })
			ctx := context.Background()
			lisbon := h.observe(t, dedup.Observation{Text: "Dana lives in Lisbon", Source: "direct", SessionID: "s1"})
			porto := h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s2", Corrects: lisbon.MemoryID})
			rep, err := h.eng.DeleteMemory(ctx, "mem", "", porto.MemoryID)
			if err != nil {
				t.Fatal(err)
			}
			want := dedup.ForgetReport{Collection: "mem", MemoriesUpdated: 1, MemoriesDeleted: 1, AuditPolicy: c.policy,
				AuditRedacted: c.redacted, AuditDeleted: c.deleted, AuditKept: c.kept}
			if diff := cmp.Diff(want, rep); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if n := h.count(t, "mem"); n != 1 {
				t.Errorf("%d memories, want 1", n)
			}
			if m := h.get(t, "mem", lisbon.MemoryID); !m.Retrievable || m.SupersededBy != "" {
				t.Errorf("Lisbon: retrievable %v superseded by %q", m.Retrievable, m.SupersededBy)
			}
			trail, err := h.eng.Memory(ctx, "mem", "", lisbon.MemoryID)
			if err != nil || trail.Audit[len(trail.Audit)-1].Related != porto.MemoryID || trail.Audit[len(trail.Audit)-1].Decision != dedup.DecisionDeleted {
				t.Errorf("Lisbon's trail: %+v, %v; want a record of the deletion that freed it", trail.Audit, err)
			}
			again, err := h.eng.DeleteMemory(ctx, "mem", "", porto.MemoryID)
			if err != nil || again.MemoriesDeleted+again.MemoriesUpdated+again.AuditDeleted+again.AuditRedacted+again.AuditKept != 0 {
				t.Errorf("deleting again: %+v, %v; want every count 0", again, err)
			}
			// Porto observed again is new: its old trail does not count, and
			// Lisbon, recomputed, is not superseded by it again.
			p := h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s3"})
			if p.Decision != dedup.DecisionInserted || p.MemoryID != porto.MemoryID {
				t.Errorf("Porto again: %+v", p)
			}
			h.observe(t, dedup.Observation{Text: "Dana lives in Lisbon", SessionID: "s4"})
			if r, err := h.eng.ForgetSession(ctx, "mem", "", "s4"); err != nil || r.MemoriesUpdated != 1 {
				t.Fatalf("forget s4: %+v, %v", r, err)
			}
			if m := h.get(t, "mem", lisbon.MemoryID); !m.Retrievable || m.SupersededBy != "" {
				t.Errorf("Lisbon recomputed: retrievable %v superseded by %q; the deleted memory's supersession came back", m.Retrievable, m.SupersededBy)
			}
		})
	}
}

// TestForgetErrors: bad input and unknown collections are refused; nothing
// is written.
func TestForgetErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.observe(t, dedup.Observation{Text: "Dana uses Neovim", SessionID: "s1"})
	ctx := context.Background()
	var ie *dedup.InputError
	cases := []struct {
		name string
		call func() error
		want func(error) bool
	}{
		{"no session", func() error { _, err := h.eng.ForgetSession(ctx, "mem", "", ""); return err }, func(err error) bool { return errors.As(err, &ie) }},
		{"no collection", func() error { _, err := h.eng.ForgetSession(ctx, "", "", "s1"); return err }, func(err error) bool { return errors.As(err, &ie) }},
		{"the audit companion", func() error { _, err := h.eng.ForgetSession(ctx, "mem_memrank_audit", "", "s1"); return err }, func(err error) bool { return err != nil }},
		{"unknown collection", func() error { _, err := h.eng.ForgetSession(ctx, "nope", "", "s1"); return err }, func(err error) bool { return errors.Is(err, dedup.ErrNotFound) }},
		{"bad memory id", func() error { _, err := h.eng.DeleteMemory(ctx, "mem", "", "not-an-id"); return err }, func(err error) bool { return errors.As(err, &ie) }},
		{"delete in unknown collection", func() error {
			_, err := h.eng.DeleteMemory(ctx, "nope", "", "1")
			return err
		}, func(err error) bool { return errors.Is(err, dedup.ErrNotFound) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !c.want(err) {
				t.Errorf("err %v", err)
			}
		})
	}
	if n := h.count(t, "mem"); n != 1 {
		t.Errorf("%d memories, want 1", n)
	}
}

// TestForgetRacingObserve: observations of the same memory while its
// other session is forgotten never bring the forgotten evidence back.
func TestForgetRacingObserve(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.observeAll(t, []string{"s1", "s2"})
	s2 := sessionObs()["s2"]
	var wg sync.WaitGroup
	errs := make(chan error, 21)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := s2
			o.Collection, o.TurnID = "mem", "r"+string(rune('a'+i))
			_, err := h.eng.Observe(context.Background(), o)
			errs <- err
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := h.eng.ForgetSession(context.Background(), "mem", "", "s1")
		errs <- err
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m := h.get(t, "mem", id)
	for _, v := range append(append(m.SessionIDs, m.TurnIDs...), m.Entities...) {
		if strings.HasPrefix(v, "s1") || v == "Neovim" {
			t.Errorf("the forgotten session came back: %q in %+v", v, m)
		}
	}
	fresh := newHarness(t)
	fresh.observeAll(t, []string{"s2"})
	if want := fresh.get(t, "mem", id); m.Observations != 0 || m.Confidence != want.Confidence || m.Source != want.Source {
		t.Errorf("n %d conf %v source %s; want 0, %v, %s", m.Observations, m.Confidence, m.Source, want.Confidence, want.Source)
	}
}

// TestForgetAcrossMerge: a memory that merged a stored duplicate keeps the
// duplicate's evidence when the session that caused the merge is
// forgotten; only that session's own observation goes.
func TestForgetAcrossMerge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		forget, keep string
	}{
		{"s2", "s1"},
		{"s1", "s2"},
	}
	for _, c := range cases {
		t.Run(c.forget, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			first := h.mergedTwin(t)
			h.forget(t, "", c.forget)
			w := h.get(t, "mem", first.MemoryID)
			wantConf := math.Max(0.8, formula(0.95, 2, 0.85, 0.80))
			if w.Observations != 2 || w.Source != "direct" || !within(w.Confidence, wantConf, 1e-9) {
				t.Errorf("winner n %d source %s conf %.4f; want 2, direct, %.4f (itself merged with the twin)", w.Observations, w.Source, w.Confidence, wantConf)
			}
			if diff := cmp.Diff([]string{c.keep, "old1", "old2"}, w.SessionIDs); diff != "" || !w.CreatedAt.Equal(t0.Add(-48*time.Hour)) {
				t.Errorf("winner created %v, sessions (-want +got):\n%s", w.CreatedAt, diff)
			}
			if l := h.get(t, "mem", "7"); l.SupersededBy != first.MemoryID || l.Retrievable || !cmp.Equal(l.SessionIDs, []string{"old1", "old2"}) {
				t.Errorf("twin: superseded by %q, retrievable %v, sessions %v; want still merged", l.SupersededBy, l.Retrievable, l.SessionIDs)
			}
		})
	}
}

// TestForgetOlderRecords: audit records written before they carried the
// observation's evidence still give n, confidence and the levels; the
// names are found from the levels.
func TestForgetOlderRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.observeAll(t, []string{"s1", "s2"})
	// Strip what newer records carry, as an older memrank wrote them.
	limit := uint32(100)
	pts, err := h.client.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: "mem_memrank_audit", Limit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	var ids []*qdrant.PointId
	for _, p := range pts {
		ids = append(ids, p.GetId())
	}
	wait := true
	if _, err := h.client.DeletePayload(context.Background(), &qdrant.DeletePayloadPoints{CollectionName: "mem_memrank_audit", Wait: &wait,
		Keys:           []string{"evidence", "obs_text_hash", "modality", "entities", "source_name", "type_name", "extractor_model", "extractor_logprob"},
		PointsSelector: qdrant.NewPointsSelectorIDs(ids)}); err != nil {
		t.Fatal(err)
	}
	h.forget(t, "", "s1")
	fresh := newHarness(t)
	fresh.observeAll(t, []string{"s2"})
	want, got := fresh.get(t, "mem", id), h.get(t, "mem", id)
	if got.Observations != want.Observations || got.Confidence != want.Confidence || got.Source != want.Source ||
		got.MemoryType != want.MemoryType || !within(got.Levels.Extractor, want.Levels.Extractor, 1e-12) {
		t.Errorf("got n %d conf %v %s %s e %v; want n %d conf %v %s %s e %v", got.Observations, got.Confidence, got.Source, got.MemoryType,
			got.Levels.Extractor, want.Observations, want.Confidence, want.Source, want.MemoryType, want.Levels.Extractor)
	}
	if !cmp.Equal(got.SessionIDs, []string{"s2"}) || !cmp.Equal(got.TurnIDs, []string{"s2:7"}) {
		t.Errorf("sessions %v turns %v", got.SessionIDs, got.TurnIDs)
	}
}

// mergedTwin stores "Dana likes sushi" (s1), a twin written by another tool
// (point 7: direct, n 2, sessions old1 and old2, then changed by twin), and
// a third wording (s2) that merges the twin into the first; it returns the
// first's outcome.
func (h *harness) mergedTwin(t *testing.T, twinOpts ...func(*memory.Memory)) dedup.Outcome {
	t.Helper()
	a, b, c := "Dana likes sushi", "Dana is really into sushi", "Sushi is what Dana likes"
	h.emb.on("sushi", 1, a)
	h.emb.on("sushi", 0.99, b)
	h.emb.on("sushi", 0.97, c)
	first := h.observe(t, dedup.Observation{Text: a, Source: "weak_inference", SessionID: "s1"})
	vecs, _ := h.emb.Embed(context.Background(), []string{b})
	twin := memory.Memory{Text: b, MemoryType: "fact", Source: "direct", ExtractorModel: "gpt-4o",
		Observations: 2, Confidence: 0.8, HasConfidence: true, Retrievable: true,
		CreatedAt: t0.Add(-48 * time.Hour), LastObservedAt: t0.Add(-24 * time.Hour), SessionIDs: []string{"old1", "old2"}}
	for _, o := range twinOpts {
		o(&twin)
	}
	wait := true
	if _, err := h.client.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "mem", Wait: &wait,
		Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsDense(vecs[0]), Payload: h.codec.Encode(&twin)}}}); err != nil {
		t.Fatal(err)
	}
	h.clock.set(t0.Add(2 * time.Hour))
	if out := h.observe(t, dedup.Observation{Text: c, Source: "weak_inference", SessionID: "s2"}); len(out.Merged) != 1 {
		t.Fatalf("setup: %+v, want the twin merged", out)
	}
	return first
}

// TestDeleteMerged: deleting a memory deletes the duplicates merged into
// it; deleting a merged duplicate takes its evidence out of the memory it
// was merged into.
func TestDeleteMerged(t *testing.T) {
	t.Parallel()
	t.Run("the winner", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		first := h.mergedTwin(t)
		rep, err := h.eng.DeleteMemory(context.Background(), "mem", "", first.MemoryID)
		if err != nil || rep.MemoriesDeleted != 2 || rep.MemoriesUpdated != 0 {
			t.Errorf("report %+v, %v; want the memory and its merged twin deleted", rep, err)
		}
		if n := h.count(t, "mem"); n != 0 {
			t.Errorf("%d memories left", n)
		}
	})
	t.Run("the merged twin", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		first := h.mergedTwin(t)
		rep, err := h.eng.DeleteMemory(context.Background(), "mem", "", "7")
		if err != nil || rep.MemoriesDeleted != 1 || rep.MemoriesUpdated != 1 {
			t.Errorf("report %+v, %v; want the twin deleted and the winner recomputed", rep, err)
		}
		w := h.get(t, "mem", first.MemoryID)
		want := formula(0.5, 1, 0.65, 0.80)
		if w.Observations != 1 || w.Source != "weak_inference" || !within(w.Confidence, want, 1e-9) ||
			!cmp.Equal(w.SessionIDs, []string{"s1", "s2"}) || !w.CreatedAt.Equal(t0) {
			t.Errorf("winner n %d %s conf %.4f sessions %v created %v; want 1, weak_inference, %.4f, s1 s2, %v",
				w.Observations, w.Source, w.Confidence, w.SessionIDs, w.CreatedAt, want, t0)
		}
	})
}

// BenchmarkForgetSession forgets one of the two sessions of 200 memories
// on the embedded store: 200 memories recomputed from their trails and
// written back, 200 audit records redacted. The setup of each iteration
// is not timed.
func BenchmarkForgetSession(b *testing.B) {
	const memories = 200
	for b.Loop() {
		b.StopTimer()
		h := newHarness(b)
		for i := range memories {
			text := "Dana's fact number " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
			h.clock.set(t0)
			h.observe(b, dedup.Observation{Text: text, Source: "direct", SessionID: "gone", Modality: "chat"})
			h.clock.set(t0.Add(24 * time.Hour))
			h.observe(b, dedup.Observation{Text: text, SessionID: "kept", Modality: "email"})
		}
		b.StartTimer()
		rep, err := h.eng.ForgetSession(context.Background(), "mem", "", "gone")
		if err != nil || rep.MemoriesUpdated != memories {
			b.Fatalf("%+v, %v", rep, err)
		}
	}
}

// TestForgetLoser: when the claim a correction won against is forgotten,
// the correction no longer counts that contradiction.
func TestForgetLoser(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	lisbon := h.observe(t, dedup.Observation{Text: "Dana lives in Lisbon", Source: "direct", SessionID: "s1"})
	porto := h.observe(t, dedup.Observation{Text: "Dana lives in Porto", SessionID: "s2", Corrects: lisbon.MemoryID})
	if p := h.get(t, "mem", porto.MemoryID); p.Contradictions != 1 {
		t.Fatalf("setup: contradictions %d", p.Contradictions)
	}
	rep := h.forget(t, "", "s1")
	if rep.MemoriesDeleted != 1 || rep.MemoriesUpdated != 1 {
		t.Errorf("report %+v, want Lisbon deleted and Porto recomputed", rep)
	}
	if p := h.get(t, "mem", porto.MemoryID); p.Contradictions != 0 || !p.Retrievable || !cmp.Equal(p.SessionIDs, []string{"s2"}) {
		t.Errorf("Porto: contradictions %d retrievable %v sessions %v", p.Contradictions, p.Retrievable, p.SessionIDs)
	}
}

// TestForgetUndoesEvidenceRules: forgetting replays seed 001's boosts and
// penalty, and seed 002's flag, as the write path applied them: a boost
// from a forgotten session goes, one from a kept session stays; a penalty
// goes with the contradicting claim.
func TestForgetUndoesEvidenceRules(t *testing.T) {
	t.Parallel()
	t.Run("corroboration", func(t *testing.T) {
		t.Parallel()
		texts := []string{"Dana uses Neovim", "Neovim is the editor Dana uses", "Dana edits code in Neovim"}
		h := newHarness(t)
		h.emb.on("editor", math.Sqrt(0.88), texts...)
		first := h.observe(t, dedup.Observation{Text: texts[0], Source: "direct", ExtractorModel: "gpt-4o",
			MemoryType: "preference", Entities: []string{"Dana", "Neovim"}, SessionID: "a"})
		h.observe(t, dedup.Observation{Text: texts[1], Source: "strong_inference", Entities: []string{"Neovim"}, SessionID: "b"})
		h.observe(t, dedup.Observation{Text: texts[2], Source: "strong_inference", Entities: []string{"Neovim"}, SessionID: "c"})
		if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, 0.80) {
			t.Fatalf("boosted to %v, want 0.80", m.Confidence)
		}
		h.forget(t, "", "b")
		if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, 0.765) {
			t.Errorf("after forgetting one corroborating session: %v, want 0.765 (one boost left)", m.Confidence)
		}
		h.forget(t, "", "c")
		if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, first.Confidence) {
			t.Errorf("after forgetting both: %v, want the unboosted %v", m.Confidence, first.Confidence)
		}
	})
	t.Run("contradiction penalty", func(t *testing.T) {
		t.Parallel()
		const stored, claim = "Dana lives in Lisbon", "Dana lives in Porto"
		h := newHarness(t, withJudge(func(string) string { return verdict("contradicts", "two cities") }))
		h.emb.on("home", 0.95, stored, claim)
		first := h.observe(t, dedup.Observation{Text: stored, Source: "direct", ExtractorModel: "gpt-4o", SessionID: "a"})
		h.observe(t, dedup.Observation{Text: claim, Source: "speculation", SessionID: "b"})
		if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, first.Confidence-0.15) {
			t.Fatalf("penalised to %v", m.Confidence)
		}
		h.forget(t, "", "b")
		if m := h.get(t, "mem", first.MemoryID); !near(m.Confidence, first.Confidence) || m.Contradictions != 0 {
			t.Errorf("after forgetting the contradicting session: confidence %v contradictions %d, want %v and 0",
				m.Confidence, m.Contradictions, first.Confidence)
		}
	})
	t.Run("recurring event", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		var last dedup.Outcome
		for i, mod := range []string{"chat", "email", "calendar", "document", "voice", "sms"} {
			h.clock.set(t0.Add(time.Duration(i) * 48 * time.Hour))
			last = h.observe(t, dedup.Observation{Text: "Flew to Tokyo for the offsite", MemoryType: "event",
				Source: "direct", SessionID: "s" + mod, Modality: mod})
		}
		h.forget(t, "", "snone") // nothing to forget: a replay must not touch it
		h.forget(t, "", "schat")
		m := h.get(t, "mem", last.MemoryID)
		if m.Observations != 4 || m.Confidence > last.Confidence {
			t.Errorf("after forgetting the first sighting: n %d confidence %v, want 4 and at most %v", m.Observations, m.Confidence, last.Confidence)
		}
	})
}
