package grpcfront

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/telemetry/settings"
)

// rankedFixture is the read-path fixture: memories whose raw similarity
// order differs from memrank's, because the closest ones are stale or never
// used and farther ones fresh and used often.
type rankedMemory struct {
	id         uint64
	similarity float32 // cosine to the query
	age        time.Duration
	accesses   int64
}

var (
	fixtureNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	fixtureMem = []rankedMemory{
		{1, 0.80, 400 * 24 * time.Hour, 0},
		{2, 0.70, 300 * 24 * time.Hour, 1},
		{3, 0.60, 2 * 24 * time.Hour, 40},
		{4, 0.50, 1 * time.Hour, 120},
		{5, 0.40, 10 * 24 * time.Hour, 3},
	}
	fixtureQuery = []float32{1, 0, 0, 0, 0, 0, 0, 0}
)

// vectorAt is a unit vector at the given cosine to fixtureQuery, its rest
// on an axis of its own, so memories are far apart from one another (no
// tier-2 folding: pairwise cosines are products of similarities).
func vectorAt(sim float32, axis int) []float32 {
	v := make([]float32, len(fixtureQuery))
	v[0] = sim
	v[axis] = float32(math.Sqrt(float64(1 - sim*sim)))
	return v
}

func fixtureMemory(m rankedMemory) *memory.Memory {
	at := fixtureNow.Add(-m.age)
	return &memory.Memory{
		Text:           fmt.Sprintf("memory number %d about a different topic", m.id),
		MemoryType:     scoring.TypeFact,
		Source:         scoring.SourceDirect,
		ExtractorModel: "gpt-4o-mini",
		Grounding:      scoring.GroundingSupported,
		Confidence:     0.9,
		HasConfidence:  true,
		CreatedAt:      at,
		LastObservedAt: at,
		LastAccessedAt: at,
		AccessCounts:   []memory.AccessCount{{Replica: "other", Count: m.accesses}},
		Retrievable:    true,
	}
}

func loadRankedFixture(t testing.TB, c *qdrant.Client, codec *memory.Codec) {
	t.Helper()
	ctx := testCtx(t)
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mem",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(len(fixtureQuery)), Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	var pts []*qdrant.PointStruct
	for i, m := range fixtureMem {
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(m.id), Vectors: qdrant.NewVectorsDense(vectorAt(m.similarity, i+1)), Payload: codec.Encode(fixtureMemory(m))})
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
		t.Fatal(err)
	}
}

// newRanker builds the real ranker over a go-client source on upstream,
// with a fixed clock.
func newRanker(t testing.TB, upstream string, tel settings.Settings, sourceOpts ...grpc.DialOption) (*rank.Ranker, *memory.Codec) {
	t.Helper()
	// Age weighed on every query (focus 1), so the fixture's order is
	// memrank's, not the store's (the focus is rank's to test): the front
	// must carry whatever order the ranker gives.
	params := scoring.DefaultParams()
	params.FocusFloor = 1
	codec, err := memory.NewCodec(memory.DefaultKeys(), params)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rank.New(sourceFor(t, upstream, sourceOpts...), rank.Config{
		Codec: codec, Now: func() time.Time { return fixtureNow },
		Telemetry: tel, Guard: rank.Guard{Off: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, codec
}

// expectedRanking is what docs/read-path.md says memrank answers for the
// fixture, computed here from the scoring package: weight = base x
// freshness x boost with base the cosine, best first.
func expectedRanking(t testing.TB, codec *memory.Codec, limit int) ([]uint64, []float64) {
	t.Helper()
	type scored struct {
		id uint64
		w  float64
	}
	var all []scored
	for i, m := range fixtureMem {
		dec := codec.DecodeQdrant(codec.Encode(fixtureMemory(m)))
		in := codec.Inputs(&dec)
		in.Seq = i
		s := codec.Params().Evaluate(&in, float64(m.similarity), fixtureNow)
		all = append(all, scored{m.id, s.Weight})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.w, a.w) })
	var ids []uint64
	var ws []float64
	for _, s := range all[:limit] {
		ids, ws = append(ids, s.id), append(ws, s.w)
	}
	return ids, ws
}

// End to end: the official go-client through the front, the real ranker
// and the embedded store over loopback TCP gets memrank's order and scores
// where the store alone gives the raw similarity order.
func TestEndToEndReranking(t *testing.T) {
	_, addr := openStore(t)
	ranker, codec := newRanker(t, addr, settings.Nop())
	direct := client(t, addr, qdrant.Config{})
	proxied := client(t, startFront(t, addr, Config{Ranker: ranker}), qdrant.Config{})
	loadRankedFixture(t, direct, codec)
	ctx := testCtx(t)
	const limit = 3

	raw, err := direct.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery), Limit: qdrant.PtrOf(uint64(limit))})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs, wantWeights := expectedRanking(t, codec, limit)
	if slices.Equal(ids(raw), wantIDs) {
		t.Fatalf("the fixture is broken: raw order %v equals memrank's", ids(raw))
	}
	if !slices.Equal(ids(raw), []uint64{1, 2, 3}) {
		t.Fatalf("raw order %v, want similarity order [1 2 3]", ids(raw))
	}

	check := func(name string, got []*qdrant.ScoredPoint) {
		t.Helper()
		if !slices.Equal(ids(got), wantIDs) {
			t.Fatalf("%s: order %v, want memrank's %v (raw %v)", name, ids(got), wantIDs, ids(raw))
		}
		for i, p := range got {
			if math.Abs(float64(p.GetScore())-wantWeights[i]) > 1e-5 {
				t.Errorf("%s: point %d score %v, want weight %v", name, p.GetId().GetNum(), p.GetScore(), wantWeights[i])
			}
			if p.GetVersion() == 0 {
				t.Errorf("%s: point %d lost its version", name, p.GetId().GetNum())
			}
			if p.GetPayload() != nil || p.GetVectors() != nil {
				t.Errorf("%s: point %d carries payload or vectors the caller did not ask for", name, p.GetId().GetNum())
			}
		}
	}
	got, err := proxied.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery), Limit: qdrant.PtrOf(uint64(limit))})
	if err != nil {
		t.Fatal(err)
	}
	check("Query", got)

	sr, err := proxied.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "mem", Vector: fixtureQuery, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	check("Search", sr.GetResult())

	qb, err := proxied.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "mem", QueryPoints: []*qdrant.QueryPoints{
		{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery), Limit: qdrant.PtrOf(uint64(limit))},
		{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery), Limit: qdrant.PtrOf(uint64(limit))},
	}})
	if err != nil || len(qb) != 2 {
		t.Fatalf("QueryBatch: %v, %v", qb, err)
	}
	check("QueryBatch[0]", qb[0].GetResult())
	check("QueryBatch[1]", qb[1].GetResult())

	sb, err := proxied.GetPointsClient().SearchBatch(ctx, &qdrant.SearchBatchPoints{CollectionName: "mem", SearchPoints: []*qdrant.SearchPoints{
		{CollectionName: "mem", Vector: fixtureQuery, Limit: limit},
	}})
	if err != nil || len(sb.GetResult()) != 1 {
		t.Fatalf("SearchBatch: %v, %v", sb, err)
	}
	check("SearchBatch[0]", sb.GetResult()[0].GetResult())

	// A caller who asks for payload gets it, for memrank's order.
	withPayload, err := proxied.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery),
		Limit: qdrant.PtrOf(uint64(limit)), WithPayload: qdrant.NewWithPayloadInclude("text")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range withPayload {
		if len(p.GetPayload()) != 1 || p.GetPayload()["text"] == nil {
			t.Fatalf("with_payload include [text]: point %d payload %v", p.GetId().GetNum(), p.GetPayload())
		}
	}
}
