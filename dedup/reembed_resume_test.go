package dedup_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
)

// TestReembedResumesFromCheckpoint: a run stopped after its first page,
// run again, re-embeds only the pages left (its checkpoint says where it
// stopped), reports the whole run, and leaves no companion behind.
func TestReembedResumesFromCheckpoint(t *testing.T) {
	env := newReembedEnv(t)
	for i := range 5 {
		if _, err := env.eng.Observe(env.ctx, dedup.Observation{Collection: "mem", Text: fmt.Sprintf("Fact number %d about Porto", i),
			Source: "direct"}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(env.ctx)
	_, err := env.eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: env.sem, BatchSize: 2, Settle: -1,
		Progress: func(int) { cancel() }})
	if err == nil {
		t.Fatal("the interrupted run did not fail")
	}
	var pages []int
	rep, err := env.eng.Reembed(env.ctx, dedup.Reembed{Collection: "mem", To: env.sem, BatchSize: 2, Settle: -1,
		Progress: func(n int) { pages = append(pages, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed || rep.Points != 5 || rep.Reembedded != 5 || len(pages) != 2 || pages[1] != 5 {
		t.Errorf("resumed run %+v, progress %v: want the two pages left and the whole run's counts", rep, pages)
	}
	if ok, _ := env.client.CollectionExists(env.ctx, "mem_memrank_reembed"); ok {
		t.Error("the finished run left its checkpoint companion")
	}
	if got := embedderRecord(t, env.client, "mem"); got.Model != env.sem.Model() || got.MigratingTo != "" {
		t.Errorf("record %+v", got)
	}
	limit := uint32(10)
	pts, err := env.client.Scroll(env.ctx, &qdrant.ScrollPoints{CollectionName: "mem", Limit: &limit,
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		v, _ := env.sem.Embed(env.ctx, []string{p.GetPayload()["text"].GetStringValue()})
		if c := cosine(p.GetVectors().GetVector().GetData(), v[0]); c < 0.9999 {
			t.Errorf("%s: vector at cosine %.5f from the new model's", p.GetId(), c)
		}
	}
}
