package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/memrank/memrank/client"
)

// TestGoClient drives a running `memrank serve` with tenants from API keys
// through the Go SDK, as an agent would: remember, recall with every
// factor, confirm, correct, read a memory's history, stats, forget; and
// the errors a caller meets come back as their kinds.
func TestGoClient(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__API_KEYS=key-alice=alice,key-bob=bob",
	}, "--data", t.TempDir())
	base, err := client.New("http://"+httpAddr, client.WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	alice := base.With(client.WithAPIKey("key-alice"))
	bob := base.With(client.WithAPIKey("key-bob"))
	ctx := context.Background()
	const coll = "notes"

	// The first sightings are two days old, so that a later session's
	// rewording counts as independent (docs/write-path.md).
	twoDaysAgo := time.Now().Add(-48 * time.Hour)
	observe := func(text, session string, at time.Time) *client.Outcome {
		t.Helper()
		out, err := alice.Observe(ctx, client.Observation{Collection: coll, Text: text, Source: "direct",
			MemoryType: "fact", SessionID: session, ObservedAt: at})
		if err != nil {
			t.Fatalf("observe %q: %v", text, err)
		}
		return out
	}
	lisbon := observe("Dana lives in Lisbon, in the Alfama neighbourhood", "s1", twoDaysAgo)
	if lisbon.Decision != "inserted" || lisbon.Observations != 0 || !lisbon.CreatedCollection {
		t.Fatalf("first observation: %+v", lisbon)
	}
	editor := observe("Dana's editor is Neovim", "s1", twoDaysAgo)
	again := observe("Dana lives in Alfama, a neighbourhood of Lisbon", "s2", time.Time{})
	if again.Decision != "independent" || again.MemoryID != lisbon.MemoryID || again.Observations != 1 || again.Confidence <= lisbon.Confidence {
		t.Fatalf("a second session's sighting: %+v, first %+v", again, lisbon)
	}

	res, err := alice.Retrieve(ctx, client.RetrieveRequest{Collection: coll, Text: "where does Dana live", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reranked || len(res.Results) == 0 || string(res.Results[0].ID) != lisbon.MemoryID {
		t.Fatalf("recall: %+v", res)
	}
	top := res.Results[0]
	if top.Explanation == nil || top.Confidence == nil || *top.Confidence != float64(again.Confidence) || top.Freshness == nil ||
		top.Text() != "Dana lives in Lisbon, in the Alfama neighbourhood" {
		t.Fatalf("recall's first result is not explained: %+v", top)
	}

	conf, err := alice.Confirm(ctx, client.Confirmation{Collection: coll, MemoryID: lisbon.MemoryID, SessionID: "s3"})
	if err != nil {
		t.Fatal(err)
	}
	if conf.MemoryID != lisbon.MemoryID || conf.Observations != 2 || conf.Confidence < again.Confidence {
		t.Fatalf("confirm: %+v", conf)
	}
	fix, err := alice.Correct(ctx, editor.MemoryID, client.Observation{Collection: coll, Text: "Dana's editor is Helix",
		Source: "direct", MemoryType: "fact", SessionID: "s3"})
	if err != nil {
		t.Fatal(err)
	}
	if fix.Superseded != editor.MemoryID || fix.MemoryID == editor.MemoryID {
		t.Fatalf("correct: %+v", fix)
	}

	hist, err := alice.History(ctx, coll, lisbon.MemoryID)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, a := range hist.Audit {
		reasons = append(reasons, a.Reason)
		if a.At.IsZero() || a.MemoryID != lisbon.MemoryID {
			t.Errorf("audit record %+v", a)
		}
	}
	if !slices.Contains(reasons, "insert") || !slices.Contains(reasons, "confirm") || len(reasons) < 3 {
		t.Errorf("history reasons %q, want insert, a re-observation and confirm", reasons)
	}
	st, err := alice.Stats(ctx, coll)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 2 || st.Superseded != 1 || st.AverageConfidence == nil {
		t.Errorf("stats: %+v", st)
	}

	// Tenancy fails closed: bob does not see alice's memory; an unknown key
	// and no key are refused.
	if _, err := bob.History(ctx, coll, lisbon.MemoryID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("bob reads alice's memory: %v", err)
	}
	if _, err := base.With(client.WithAPIKey("nope")).Stats(ctx, coll); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("an unknown key: %v", err)
	}
	if _, err := base.Observe(ctx, client.Observation{Collection: coll, Text: "x"}); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("no key: %v", err)
	}
	if _, err := alice.Observe(ctx, client.Observation{Collection: coll, Text: "  "}); !errors.Is(err, client.ErrBadRequest) {
		t.Errorf("a blank text: %v", err)
	}
	if _, err := alice.Retrieve(ctx, client.RetrieveRequest{Collection: "nope", Text: "x"}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a text question about no collection: %v", err)
	}

	// Forgetting session s2 takes its sighting out of the Lisbon memory;
	// deleting the correction removes it.
	rep, err := alice.ForgetSession(ctx, coll, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if rep.MemoriesUpdated != 1 || rep.MemoriesDeleted != 0 {
		t.Errorf("forget s2: %+v", rep)
	}
	if hist, err = alice.History(ctx, coll, lisbon.MemoryID); err != nil {
		t.Fatal(err)
	}
	if len(hist.Audit) == 0 || hist.Audit[len(hist.Audit)-1].NewN != 1 {
		t.Errorf("after forgetting s2 the history ends with %+v, want n 1", hist.Audit[len(hist.Audit)-1])
	}
	if rep, err = alice.ForgetMemory(ctx, coll, fix.MemoryID); err != nil || rep.MemoriesDeleted != 1 {
		t.Fatalf("forget the correction: %+v, %v", rep, err)
	}
	if _, err := alice.History(ctx, coll, fix.MemoryID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a deleted memory's history: %v", err)
	}
}

// TestGoClientNoCollection: a text question about a collection that does
// not exist is a 404, as a vector one is; it used to be a 503 saying the
// collection's embedder record could not be read, which sent callers to
// retry a request that could never succeed.
func TestGoClientNoCollection(t *testing.T) {
	httpAddr, _, _ := startServe(t, "--data", t.TempDir())
	c, err := client.New("http://" + httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []client.RetrieveRequest{
		{Collection: "nope", Text: "where does Dana live"},
		{Collection: "nope", Vector: make([]float32, 384)},
	} {
		_, err := c.Retrieve(context.Background(), req)
		var e *client.Error
		if !errors.As(err, &e) || e.Status != 404 || e.Message != "Not found: Collection `nope` doesn't exist!" {
			t.Errorf("text %q: %v, want Qdrant's 404", req.Text, err)
		}
	}
}
