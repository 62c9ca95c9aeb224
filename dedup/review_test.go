package dedup_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/dedup"
)

// The write path never writes into an audit companion: its records are
// evidence, not memories.
func TestAuditCollectionRefused(t *testing.T) {
	h := newHarness(t)
	first := h.observe(t, dedup.Observation{Text: "Dana likes figs", SessionID: "a"})
	audit := "mem" + dedup.AuditSuffix
	ctx := context.Background()
	var ie *dedup.InputError
	if _, err := h.eng.Observe(ctx, dedup.Observation{Collection: audit, Text: "forged", Vector: []float32{1}}); !errors.As(err, &ie) || ie.Field != "collection" {
		t.Errorf("observe into the audit: %v", err)
	}
	if _, err := h.eng.Confirm(ctx, dedup.Confirmation{Collection: audit, MemoryID: first.MemoryID}); !errors.As(err, &ie) {
		t.Errorf("confirm in the audit: %v", err)
	}
	if _, err := h.eng.Memory(ctx, audit, "", first.MemoryID); !errors.As(err, &ie) {
		t.Errorf("memory in the audit: %v", err)
	}
	if _, err := h.eng.Stats(ctx, audit, ""); !errors.As(err, &ie) {
		t.Errorf("stats of the audit: %v", err)
	}
}

// A collection that does not measure cosine is judged by the cosine of the
// vectors: unrelated facts do not merge because their distance is large.
func TestEuclidCollectionJudgedByCosine(t *testing.T) {
	h := newHarness(t)
	if err := h.client.CreateCollection(context.Background(), &qdrant.CreateCollection{CollectionName: "mem",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: topicDims, Distance: qdrant.Distance_Euclid})}); err != nil {
		t.Fatal(err)
	}
	h.emb.on("bike", 1, "Dana owns a red bicycle")
	h.emb.on("bike", 0.99, "Dana has a red bike")
	a := h.observe(t, dedup.Observation{Text: "Dana owns a red bicycle", SessionID: "a"})
	h.clock.set(t0.Add(2 * time.Hour))
	b := h.observe(t, dedup.Observation{Text: "The quarterly tax filing is due in spring", SessionID: "b"})
	if b.Decision != dedup.DecisionInserted || b.MemoryID == a.MemoryID {
		t.Errorf("%+v, want a memory of its own", b)
	}
	h.clock.set(t0.Add(4 * time.Hour))
	if c := h.observe(t, dedup.Observation{Text: "Dana has a red bike", SessionID: "c"}); c.Decision != dedup.DecisionIndependent || c.Tier != 2 {
		t.Errorf("%+v, want an independent observation at tier 2", c)
	}
}

// "Correction always wins": re-observing the corrected claim later, even
// with a judge that calls it a contradiction and with the old claim's
// higher confidence, leaves the correction standing.
func TestCorrectionNotUndoneByOldClaim(t *testing.T) {
	old, fix := "Dana works at Acme Corp", "Dana works at Globex"
	h := newHarness(t, withJudge(func(string) string { return verdict("contradicts", "employer differs") }))
	h.emb.on("employer", 0.95, old, fix) // ~0.90: the judge band
	orig := h.observe(t, dedup.Observation{Text: old, Source: "direct", ExtractorModel: "claude-opus-4", SessionID: "s1"})
	h.clock.set(t0.Add(time.Hour))
	corr, err := h.eng.Correct(context.Background(), dedup.Observation{Collection: "mem", Corrects: orig.MemoryID, Text: fix,
		Source: "speculation", SessionID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	h.clock.set(t0.Add(2 * time.Hour))
	again := h.observe(t, dedup.Observation{Text: old, Source: "direct", ExtractorModel: "claude-opus-4", SessionID: "s1",
		ObservedAt: t0})
	if again.Decision == dedup.DecisionContradiction || again.Superseded != "" {
		t.Fatalf("%+v: the old claim came back", again)
	}
	if m := h.get(t, "mem", orig.MemoryID); m.SupersededBy != corr.MemoryID {
		t.Errorf("original superseded_by %q, want the correction %s", m.SupersededBy, corr.MemoryID)
	}
	if m := h.get(t, "mem", corr.MemoryID); m.SupersededBy != "" {
		t.Errorf("the correction was superseded by %s", m.SupersededBy)
	}
}

// flaky fails the first n audit upserts.
type flaky struct {
	*qdrant.Client
	fail atomic.Int64
}

func (f *flaky) Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error) {
	if strings.HasSuffix(req.GetCollectionName(), dedup.AuditSuffix) && len(req.GetPoints()) > 0 &&
		req.GetPoints()[0].GetPayload()["kind"].GetStringValue() == "audit" && f.fail.Add(-1) >= 0 {
		return nil, status.Error(codes.Unavailable, "flaky")
	}
	return f.Client.Upsert(ctx, req)
}

// A failed audit write is retried: the confirmation is recorded once, and
// a caller's retry with the same observation_id replays it.
func TestAuditWriteRetried(t *testing.T) {
	h := newHarness(t)
	m := h.observe(t, dedup.Observation{Text: "Dana is vegetarian", Source: "strong_inference"})
	f := &flaky{Client: h.client}
	f.fail.Store(2)
	eng, err := dedup.New(f, dedup.Config{Codec: h.codec, Embedder: h.emb, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	c := dedup.Confirmation{Collection: "mem", MemoryID: m.MemoryID, ObservationID: "confirm-1"}
	first, err := eng.Confirm(context.Background(), c)
	if err != nil {
		t.Fatalf("confirm with two failed audit writes: %v", err)
	}
	again, err := eng.Confirm(context.Background(), c)
	if err != nil || !again.Replayed || again.Observations != first.Observations {
		t.Fatalf("retry: %+v %v, want the replay of %+v", again, err, first)
	}
	if got := h.get(t, "mem", m.MemoryID).Observations; got != 1 {
		t.Errorf("n = %d after one confirmation, want 1", got)
	}
	var reasons []string
	for _, r := range h.audit(t, "mem", m.MemoryID) {
		reasons = append(reasons, r.Reason)
	}
	if diff := cmp.Diff([]string{"insert", "confirm"}, reasons); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// A slow judge holds up only the observation that needs it: the LLM call is
// made before the collection's lock is taken.
func TestSlowJudgeDoesNotBlockOtherWrites(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, withJudge(func(string) string {
		<-release
		return verdict("same", "")
	}))
	h.emb.on("cello", 0.93, "Dana plays the cello", "Dana plays cello in an orchestra")
	h.observe(t, dedup.Observation{Text: "Dana plays the cello", SessionID: "a"})
	done := make(chan dedup.Outcome)
	go func() {
		out, _ := h.eng.Observe(context.Background(), dedup.Observation{Collection: "mem", Text: "Dana plays cello in an orchestra", SessionID: "b"})
		done <- out
	}()
	for h.judge.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := h.eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Dana's sister lives in Rome", SessionID: "c"}); err != nil {
		t.Errorf("an unrelated write waited for the judge: %v", err)
	}
	close(release)
	if out := <-done; out.Decision != dedup.DecisionRestatement && out.Decision != dedup.DecisionIndependent {
		t.Errorf("the judged observation: %+v", out)
	}
	if c := h.judge.calls.Load(); c != 1 {
		t.Errorf("%d judge calls, want 1 (the decision reuses the verdict)", c)
	}
}

// Process-wide counters are not shown to tenants; turn ids are kept per
// session.
func TestTenantStatsAndTurnKeys(t *testing.T) {
	h := newHarness(t, func(c *dedup.Config, _ *harness) { c.Tenancy = scope{} })
	out := h.observe(t, dedup.Observation{Text: "Likes jazz", Tenant: "alice", SessionID: "s1", TurnID: "3"})
	h.clock.set(t0.Add(2 * time.Hour))
	h.observe(t, dedup.Observation{Text: "Really likes jazz", Tenant: "alice", SessionID: "s2", TurnID: "3"})
	st, err := h.eng.Stats(context.Background(), "mem", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if st.Decisions != nil || st.Judge != (dedup.JudgeStats{}) || st.Memories < 1 {
		t.Errorf("stats for a tenant: %+v", st)
	}
	if got := h.get(t, "mem", out.MemoryID).TurnIDs; !cmp.Equal(got, []string{"s1:3"}) && !cmp.Equal(got, []string{"s1:3", "s2:3"}) {
		t.Errorf("turn ids %v, want session-qualified", got)
	}
}
