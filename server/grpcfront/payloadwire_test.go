package grpcfront

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
)

// TestPayloadWireReplies: with the candidate cache on a qdrantwire source,
// as serve runs it, the front copies the payloads' fetched bytes into its
// Query, Search and batch replies; what the client decodes must be what a front
// over an uncached ranker (payloads encoded from their maps) answers, cold
// and warm, whole payloads and a selection.
func TestPayloadWireReplies(t *testing.T) {
	_, addr := openStore(t)
	plain, codec := newRanker(t, addr, settings.Nop())
	cached, err := rank.New(qdrantwire.NewClient(sourceFor(t, addr)), rank.Config{
		Codec: codec, Now: func() time.Time { return fixtureNow }, Telemetry: settings.Nop(), Guard: rank.Guard{Off: true},
		CandidateCache: rank.CandidateCacheConfig{MaxBytes: 1 << 20, TTL: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	loadRankedFixture(t, client(t, addr, qdrant.Config{}), codec)
	want := client(t, startFront(t, addr, Config{Ranker: plain}), qdrant.Config{})
	got := client(t, startFront(t, addr, Config{Ranker: cached}), qdrant.Config{})
	ctx := testCtx(t)
	reversed := slices.Clone(fixtureQuery)
	slices.Reverse(reversed)
	for name, sel := range map[string]*qdrant.WithPayloadSelector{
		"whole":   qdrant.NewWithPayload(true),
		"include": qdrant.NewWithPayloadInclude("text"),
	} {
		for _, round := range []string{"cold", "warm"} {
			q := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery), Limit: qdrant.PtrOf(uint64(4)), WithPayload: sel}
			w, err := want.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(w) == 0 || len(w[0].GetPayload()) == 0 {
				t.Fatalf("%s: the fixture returns no payloads: %v", name, w)
			}
			if diff := cmp.Diff(w, g, protocmp.Transform()); diff != "" {
				t.Errorf("%s %s: Query (-uncached +cached):\n%s", name, round, diff)
			}
			s := &qdrant.SearchPoints{CollectionName: "mem", Vector: fixtureQuery, Limit: 4, WithPayload: sel}
			ws, err := want.GetPointsClient().Search(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := got.GetPointsClient().Search(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ws.GetResult(), gs.GetResult(), protocmp.Transform()); diff != "" {
				t.Errorf("%s %s: Search (-uncached +cached):\n%s", name, round, diff)
			}
			// Batches: sub-queries with other points each, so that bytes
			// given to the wrong sub-result would show.
			subs := []*qdrant.QueryPoints{q, {CollectionName: "mem", Query: qdrant.NewQueryDense(reversed), Limit: qdrant.PtrOf(uint64(3)), WithPayload: sel}}
			wb, err := want.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "mem", QueryPoints: subs})
			if err != nil {
				t.Fatal(err)
			}
			gb, err := got.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "mem", QueryPoints: subs})
			if err != nil {
				t.Fatal(err)
			}
			if len(wb) != 2 || cmp.Equal(wb[0].GetResult()[0].GetId(), wb[1].GetResult()[0].GetId(), protocmp.Transform()) {
				t.Fatalf("%s: the batch's sub-queries do not answer different points: %v", name, wb)
			}
			if diff := cmp.Diff(wb, gb, protocmp.Transform()); diff != "" {
				t.Errorf("%s %s: QueryBatch (-uncached +cached):\n%s", name, round, diff)
			}
			sb := &qdrant.SearchBatchPoints{CollectionName: "mem", SearchPoints: []*qdrant.SearchPoints{s,
				{CollectionName: "mem", Vector: reversed, Limit: 3, WithPayload: sel}}}
			wsb, err := want.GetPointsClient().SearchBatch(ctx, sb)
			if err != nil {
				t.Fatal(err)
			}
			gsb, err := got.GetPointsClient().SearchBatch(ctx, sb)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wsb.GetResult(), gsb.GetResult(), protocmp.Transform()); diff != "" {
				t.Errorf("%s %s: SearchBatch (-uncached +cached):\n%s", name, round, diff)
			}
		}
	}
}
