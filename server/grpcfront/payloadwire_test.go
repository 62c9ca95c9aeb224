package grpcfront

import (
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
// Query and Search replies; what the client decodes must be what a front
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
		}
	}
}
