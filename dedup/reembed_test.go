package dedup_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// builtins gives memrank's built-in embedders by model name, as
// embed.Service does.
type builtins struct{}

func (builtins) For(model string) (embed.Embedder, bool) {
	e, err := embed.NewBuiltin(model)
	return e, err == nil
}

var _ dedup.Embedders = builtins{}

func builtinEngine(t *testing.T, client *qdrant.Client, emb embed.Embedder, clk *clock) *dedup.Engine {
	t.Helper()
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: emb, Embedders: builtins{}, Now: clk.Now, RequireSurfaceChange: true})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// reembedEnv is a store, a clock, the two local embedders and an engine
// that writes with lex.
type reembedEnv struct {
	ctx      context.Context
	client   *qdrant.Client
	clk      *clock
	lex, sem embed.Embedder
	eng      *dedup.Engine
}

func newReembedEnv(t *testing.T) reembedEnv {
	t.Helper()
	e := reembedEnv{ctx: context.Background(), client: newClient(t), clk: &clock{now: t0}}
	var err error
	if e.lex, err = embed.NewLocal(384); err != nil {
		t.Fatal(err)
	}
	if e.sem, err = embed.NewSemantic(384); err != nil {
		t.Fatal(err)
	}
	e.eng = builtinEngine(t, e.client, e.lex, e.clk)
	return e
}

func embedderRecord(t *testing.T, client *qdrant.Client, coll string) memory.EmbedderRecord {
	t.Helper()
	pts, err := client.Get(context.Background(), &qdrant.GetPoints{CollectionName: coll + dedup.AuditSuffix,
		Ids: []*qdrant.PointId{memory.EmbedderRecordID()}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("embedder record of %s: %v, %d points", coll, err, len(pts))
	}
	return memory.ParseEmbedderRecord(pts[0].GetPayload())
}

// TestRecordedEmbedderKept: a collection written with the lexical embedder
// keeps it after the default becomes the semantic one: writes embed with
// the recorded model (no mismatch), and its record is left as it was.
func TestRecordedEmbedderKept(t *testing.T) {
	env := newReembedEnv(t)
	ctx, client, clk, lex, sem, old := env.ctx, env.client, env.clk, env.lex, env.sem, env.eng
	first, err := old.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Lives in Porto", Source: "direct", SessionID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	upgraded := builtinEngine(t, client, sem, clk)
	clk.set(t0.Add(2 * time.Hour))
	again, err := upgraded.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Lives in Porto.", Source: "direct", SessionID: "b"})
	if err != nil {
		t.Fatalf("observe after the default changed: %v", err)
	}
	if again.MemoryID != first.MemoryID {
		t.Errorf("%+v, want the same memory as %s", again, first.MemoryID)
	}
	if got := embedderRecord(t, client, "mem"); got.Model != lex.Model() || got.SameThreshold != 0 {
		t.Errorf("record %+v, want the lexical model kept without bands", got)
	}
	// Without a resolver, the mismatch is refused as before.
	codec, _ := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	strict, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: sem, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Works in Porto"}); !errors.Is(err, dedup.ErrEmbedderMismatch) {
		t.Errorf("observe without Embedders: %v, want ErrEmbedderMismatch", err)
	}
}

// TestReembed moves a lexical collection to the semantic embedder: every
// vector is the new model's, payloads are untouched, the record names the
// new model and its bands, and then a paraphrase merges.
func TestReembed(t *testing.T) {
	env := newReembedEnv(t)
	ctx, client, clk, lex, sem, eng := env.ctx, env.client, env.clk, env.lex, env.sem, env.eng
	texts := []string{"Resides in Porto", "Drinks coffee every morning", "Her manager is Priya"}
	ids := map[string]string{}
	for i, text := range texts {
		out, err := eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: text, Source: "direct", SessionID: "s" + text})
		if err != nil {
			t.Fatal(err)
		}
		ids[text] = out.MemoryID
		clk.set(t0.Add(time.Duration(i+1) * time.Hour))
	}
	before := payloads(t, client, "mem")

	dry, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: sem, DryRun: true, Settle: -1})
	if err != nil || dry.Points != 3 || dry.Reembedded != 0 || dry.From != lex.Model() {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if got := embedderRecord(t, client, "mem"); got.Model != lex.Model() {
		t.Fatalf("a dry run changed the record: %+v", got)
	}
	var progress []int
	rep, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: sem, BatchSize: 2, Settle: -1,
		Progress: func(n int) { progress = append(progress, n) }})
	if err != nil {
		t.Fatal(err)
	}
	bands, _ := embed.CalibratedBands(sem.Model())
	want := dedup.ReembedReport{Collection: "mem", From: lex.Model(), To: sem.Model(), Bands: bands, Points: 3, Reembedded: 3}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if !cmp.Equal(progress, []int{2, 3}) {
		t.Errorf("progress %v, want [2 3]", progress)
	}
	if got := embedderRecord(t, client, "mem"); got.Model != sem.Model() || got.SameThreshold != bands.Same || got.JudgeThreshold != bands.Judge {
		t.Errorf("record %+v, want %s with bands %+v", got, sem.Model(), bands)
	}
	if diff := cmp.Diff(before, payloads(t, client, "mem")); diff != "" {
		t.Errorf("payloads changed (-before +after):\n%s", diff)
	}
	for _, text := range texts {
		v, _ := sem.Embed(ctx, []string{text})
		pts, err := client.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: []*qdrant.PointId{qdrant.NewID(ids[text])},
			WithVectors: qdrant.NewWithVectors(true)})
		if err != nil || len(pts) != 1 {
			t.Fatalf("get %s: %v", text, err)
		}
		// The store keeps cosine vectors normalised: compare directions.
		if c := cosine(pts[0].GetVectors().GetVector().GetData(), v[0]); c < 0.9999 {
			t.Errorf("%q: the stored vector is at cosine %.5f from the semantic embedding", text, c)
		}
	}
	again, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: sem, Settle: -1})
	if err != nil || !again.Already {
		t.Errorf("second run: %+v, %v, want nothing to do", again, err)
	}
	// The same engine now writes with the semantic model: a paraphrase merges.
	clk.set(t0.Add(10 * time.Hour))
	out, err := eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Has coffee each morning", Source: "direct", SessionID: "z"})
	if err != nil {
		t.Fatal(err)
	}
	if out.MemoryID != ids["Drinks coffee every morning"] {
		t.Errorf("%+v, want the paraphrase merged into %s", out, ids["Drinks coffee every morning"])
	}

	other, _ := embed.NewSemantic(512)
	if _, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: other, Settle: -1}); !errors.Is(err, dedup.ErrReembed) {
		t.Errorf("another dimension: %v, want ErrReembed", err)
	}
	if _, err := eng.Reembed(ctx, dedup.Reembed{Collection: "nope", To: sem, Settle: -1}); !errors.Is(err, dedup.ErrNotFound) {
		t.Errorf("no collection: %v, want ErrNotFound", err)
	}
}

func payloads(t *testing.T, client *qdrant.Client, coll string) map[string]map[string]any {
	t.Helper()
	limit := uint32(100)
	pts, err := client.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: coll, Limit: &limit,
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, p := range pts {
		m := map[string]any{}
		for k, v := range p.GetPayload() {
			m[k] = v.String()
		}
		out[p.GetId().String()] = m
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// TestReembedRefuses: a collection with a point that has no text is not
// moved at all (its vector could not be made again); while a run is marked
// in the record, writes are refused (409) and another target is refused; a
// run to the same target finishes it.
func TestReembedRefuses(t *testing.T) {
	env := newReembedEnv(t)
	ctx, client, clk, lex, sem, eng := env.ctx, env.client, env.clk, env.lex, env.sem, env.eng
	if _, err := eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Drinks coffee every morning", SessionID: "a"}); err != nil {
		t.Fatal(err)
	}
	// A point written by another tool, with no text.
	v, _ := lex.Embed(ctx, []string{"x"})
	if _, err := client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true),
		Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsDense(v[0]),
			Payload: map[string]*qdrant.Value{"note": qdrant.NewValueString("no text")}}}}); err != nil {
		t.Fatal(err)
	}
	dry, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: sem, DryRun: true, Settle: -1})
	if err != nil || dry.NoText != 1 || dry.Points != 2 {
		t.Errorf("dry run: %+v, %v: want the text-less point counted", dry, err)
	}
	if _, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: sem, Settle: -1}); !errors.Is(err, dedup.ErrReembed) {
		t.Errorf("reembed with a text-less point: %v, want ErrReembed", err)
	}
	if got := embedderRecord(t, client, "mem"); got.Model != lex.Model() || got.MigratingTo != "" {
		t.Errorf("record %+v after a refused run, want it unchanged", got)
	}
	if _, err := client.Delete(ctx, &qdrant.DeletePoints{CollectionName: "mem", Wait: qdrant.PtrOf(true),
		Points: qdrant.NewPointsSelector(qdrant.NewIDNum(7))}); err != nil {
		t.Fatal(err)
	}

	// A run interrupted after marking: the mark refuses writes, from this
	// engine and from a fresh one (another replica).
	mark := memory.EmbedderRecord{Model: lex.Model(), Dimensions: 384, Collection: "mem", MigratingTo: sem.Model()}
	if _, err := client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem" + dedup.AuditSuffix, Wait: qdrant.PtrOf(true),
		Points: []*qdrant.PointStruct{mark.Point()}}); err != nil {
		t.Fatal(err)
	}
	replica := builtinEngine(t, client, sem, clk)
	var me *dedup.MigratingError
	if _, err := replica.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Plays chess"}); !errors.As(err, &me) || !errors.Is(err, dedup.ErrEmbedderMismatch) {
		t.Errorf("write during a move: %v, want a MigratingError (409)", err)
	}
	if _, err := replica.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Plays chess", Vector: v[0]}); !errors.As(err, &me) {
		t.Errorf("write of a vector during a move: %v, want a MigratingError", err)
	}
	other, _ := embed.NewBuiltin("memrank-local-hash-v1:384")
	if _, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: other, Settle: -1}); !errors.Is(err, dedup.ErrReembed) {
		t.Errorf("reembed to another model during a move: %v, want ErrReembed", err)
	}
	rep, err := eng.Reembed(ctx, dedup.Reembed{Collection: "mem", To: sem, Settle: -1})
	if err != nil || !rep.Resumed || rep.Reembedded != 1 {
		t.Fatalf("finishing the move: %+v, %v", rep, err)
	}
	if got := embedderRecord(t, client, "mem"); got.Model != sem.Model() || got.MigratingTo != "" {
		t.Errorf("record %+v, want %s and no mark", got, sem.Model())
	}
	if _, err := replica.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Plays chess"}); err != nil {
		t.Errorf("write after the move: %v", err)
	}
}
