package dedup_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
)

// Two stored memories of one fact (say, written by two replicas before
// deterministic ids, or by another tool) are merged when an observation
// matches them: docs/scoring.md.
func TestMergeStoredDuplicates(t *testing.T) {
	h := newHarness(t)
	a, b, c := "Dana likes sushi", "Dana is really into sushi", "Sushi is what Dana likes"
	h.emb.on("sushi", 1, a)
	h.emb.on("sushi", 0.99, b) // a little further from c than a is: a leads
	h.emb.on("sushi", 0.97, c)
	first := h.observe(t, dedup.Observation{Text: a, Source: "weak_inference", SessionID: "s1"})

	// The twin, written behind memrank's back with more evidence and accesses.
	vecs, _ := h.emb.Embed(context.Background(), []string{b})
	twin := memory.Memory{Text: b, MemoryType: "fact", Source: "direct", ExtractorModel: "gpt-4o",
		Observations: 2, Confidence: 0.8, HasConfidence: true, Retrievable: true,
		CreatedAt: t0.Add(-48 * time.Hour), LastObservedAt: t0.Add(-24 * time.Hour),
		SessionIDs: []string{"old1", "old2"}, AccessCounts: []memory.AccessCount{{Replica: "r1", Count: 5}}, Uses: 3}
	wait := true
	if _, err := h.client.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "mem", Wait: &wait,
		Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsDense(vecs[0]), Payload: h.codec.Encode(&twin)}}}); err != nil {
		t.Fatal(err)
	}

	h.clock.set(t0.Add(2 * time.Hour))
	out := h.observe(t, dedup.Observation{Text: c, Source: "weak_inference", SessionID: "s2"})
	win, lose := first.MemoryID, "7"
	if out.MemoryID != win || !cmp.Equal(out.Merged, []string{lose}) {
		t.Fatalf("%+v, want %s matched and 7 merged into it", out, win)
	}
	w := h.get(t, "mem", win)
	l := h.get(t, "mem", lose)
	// n = n_a + n_b: the observation made a 1 (independent), the twin had 2.
	if w.Observations != 3 || w.Source != "direct" || w.Confidence < 0.8 {
		t.Errorf("winner n=%d s=%s c=%.3f, want n 3, the twin's direct source, c >= 0.8", w.Observations, w.Source, w.Confidence)
	}
	if !w.CreatedAt.Equal(t0.Add(-48*time.Hour)) || !cmp.Equal(w.SessionIDs, []string{"s1", "s2", "old1", "old2"}) {
		t.Errorf("winner created %v sessions %v", w.CreatedAt, w.SessionIDs)
	}
	// 5 reads and 3 uses: both feed the boost, so both move to _merged.
	if diff := cmp.Diff([]memory.AccessCount{{Replica: memory.MergedAccessKey, Count: 8}}, w.AccessCounts); diff != "" {
		t.Errorf("access counts (-want +got):\n%s", diff)
	}
	if l.SupersededBy != win || l.Retrievable {
		t.Errorf("loser superseded_by %q retrievable %v", l.SupersededBy, l.Retrievable)
	}
	// The trail is a chain: each record starts where the one before ended.
	type step struct {
		Reason     string
		Old, New   float64
		OldN, NewN int
	}
	var got []step
	for _, r := range h.audit(t, "mem", win) {
		got = append(got, step{r.Reason, round(r.Old), round(r.New), r.OldN, r.NewN})
	}
	want := []step{
		{"insert", 0, 0.4675, 0, 0},           // .45 x .5 + .25 x .65 + .10 x .80
		{"independent", 0.4675, 0.5494, 0, 1}, // + .20 r(1)
		{"merge", 0.5494, 0.8362, 1, 3},       // the twin's s .95, e .85, t .80, n 1 + 2
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("winner's audit (-want +got):\n%s", diff)
	}
}

// Seed 001: a new memory about a shared entity that makes a similar claim
// corroborates the stored one; without a shared entity it does not.
func TestCorroboration(t *testing.T) {
	tests := []struct {
		name     string
		entities []string
		want     int
	}{
		{name: "shared entity", entities: []string{"acme"}, want: 1},
		{name: "no shared entity", entities: []string{"globex"}, want: 0},
		{name: "no entities", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			a, c := "Dana works at Acme as an engineer", "Dana commutes to Acme by bike"
			h.emb.on("acme", 1, a)
			h.emb.on("acme", 0.88, c) // between the corroboration (.85) and judge (.80) thresholds and same (.92)
			first := h.observe(t, dedup.Observation{Text: a, Entities: []string{"Dana", "Acme"}, SessionID: "s1"})
			out := h.observe(t, dedup.Observation{Text: c, Entities: tc.entities, SessionID: "s2"})
			if out.Decision != dedup.DecisionInserted {
				t.Fatalf("%+v, want a new memory", out)
			}
			if got := h.get(t, "mem", first.MemoryID).Corroborations; got != tc.want {
				t.Errorf("corroborations %d, want %d", got, tc.want)
			}
		})
	}
}

func TestInputErrors(t *testing.T) {
	h := newHarness(t)
	nan := float32(0)
	nan /= nan
	lp := 0.5
	tests := []struct {
		name  string
		obs   dedup.Observation
		field string
	}{
		{name: "no collection", obs: dedup.Observation{Text: "x"}, field: "collection"},
		{name: "no text", obs: dedup.Observation{Collection: "mem"}, field: "text"},
		{name: "punctuation only", obs: dedup.Observation{Collection: "mem", Text: "?!"}, field: "text"},
		{name: "bad source", obs: dedup.Observation{Collection: "mem", Text: "x", Source: "rumour"}, field: "source"},
		{name: "bad type", obs: dedup.Observation{Collection: "mem", Text: "x", MemoryType: "feeling"}, field: "memory_type"},
		{name: "bad grounding", obs: dedup.Observation{Collection: "mem", Text: "x", Grounding: "maybe"}, field: "grounding"},
		{name: "positive logprob", obs: dedup.Observation{Collection: "mem", Text: "x", ExtractorLogprob: &lp}, field: "extractor_logprob"},
		{name: "NaN vector", obs: dedup.Observation{Collection: "mem", Text: "x", Vector: []float32{nan}}, field: "vector[0]"},
		{name: "bad corrects", obs: dedup.Observation{Collection: "mem", Text: "x", Corrects: "nope"}, field: "corrects"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.eng.Observe(context.Background(), tc.obs)
			var ie *dedup.InputError
			if !asInput(err, &ie) || ie.Field != tc.field {
				t.Errorf("err %v, want an InputError on %s", err, tc.field)
			}
		})
	}
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func asInput(err error, ie **dedup.InputError) bool {
	e, ok := err.(*dedup.InputError)
	if ok {
		*ie = e
	}
	return ok
}
