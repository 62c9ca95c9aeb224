package rank_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// The benchmarks' shape: the reference read (limit 10, oversample
// 4) over 384-dimensional memories.
const (
	benchCandidates = 40
	benchDim        = 384
)

// benchPoints are candidates as the store returns them to the ranker:
// whole memory payloads written by the codec (varied types, sources, ages,
// observations, access counts of several replicas, sessions, entities; a
// few restatements and near-identical vectors), unit vectors, decreasing
// similarities.
func benchPoints(n, dims int) []*qdrant.ScoredPoint {
	r := rand.New(rand.NewPCG(40, 384))
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		panic(err)
	}
	words := strings.Fields("user prefers dark mode tea coffee meetings mornings python golang rust editor vim " +
		"travels berlin paris tokyo works remote office weekly standup allergic peanuts cat dog runs marathon")
	types := []string{scoring.TypeFact, scoring.TypePreference, scoring.TypeEvent, scoring.TypeEntity, scoring.TypeRelation}
	sources := []string{scoring.SourceDirect, scoring.SourceConfirmed, scoring.SourceStrongInference, scoring.SourceWeakInference, scoring.SourceSpeculation}
	cats := []string{"preference", "technical", "contact", "project_status", ""}
	unit := func(v []float32) []float32 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		k := float32(1 / math.Sqrt(s))
		for i := range v {
			v[i] *= k
		}
		return v
	}
	out := make([]*qdrant.ScoredPoint, n)
	var texts, entities []string
	var vecs [][]float32
	for i := range n {
		text := make([]string, 6+r.IntN(10))
		for j := range text {
			text[j] = words[r.IntN(len(words))]
		}
		t := strings.Join(text, " ")
		vec := make([]float32, dims)
		switch {
		case i > 0 && i%8 == 3: // a restatement: tier 1
			t = strings.ToUpper(texts[i-1][:1]) + texts[i-1][1:] + "."
			for j := range vec {
				vec[j] = float32(r.NormFloat64())
			}
		case i > 0 && i%8 == 6: // a near-identical vector: tier 2
			for j := range vec {
				vec[j] = vecs[i-1][j] + float32(0.01*r.NormFloat64())
			}
		default:
			for j := range vec {
				vec[j] = float32(r.NormFloat64())
			}
		}
		vec = unit(vec)
		entity := words[r.IntN(len(words))]
		if i > 0 && (i%8 == 3 || i%8 == 6) { // a duplicate is about the same subject
			entity = entities[i-1]
		}
		texts, vecs, entities = append(texts, t), append(vecs, vec), append(entities, entity)
		created := now.Add(-time.Duration(r.Float64() * 365 * 24 * float64(time.Hour)))
		m := &memory.Memory{
			Text:           t,
			MemoryType:     types[r.IntN(len(types))],
			Source:         sources[r.IntN(len(sources))],
			ExtractorModel: "gpt-4o-mini",
			Grounding:      scoring.Grounding(r.IntN(3)),
			Observations:   r.IntN(6),
			DecayCategory:  cats[r.IntN(len(cats))],
			CreatedAt:      created,
			LastObservedAt: created.Add(time.Duration(r.Float64() * float64(now.Sub(created)))),
			SessionIDs:     []string{fmt.Sprintf("s-%d", r.IntN(500))},
			Entities:       []string{entity},
			Retrievable:    r.IntN(20) != 0,
		}
		if r.IntN(2) == 0 {
			m.HasConfidence, m.Confidence = true, 0.3+0.69*r.Float64()
		}
		if r.IntN(3) == 0 {
			m.HasLogprob, m.ExtractorLogprob = true, -r.Float64()
		}
		for _, rep := range []string{"replica-a", "replica-b", "replica-c"}[:r.IntN(4)] {
			m.AccessCounts = append(m.AccessCounts, memory.AccessCount{Replica: rep, Count: int64(r.IntN(40))})
		}
		if len(m.AccessCounts) > 0 {
			m.LastAccessedAt = now.Add(-time.Duration(r.Float64() * 30 * 24 * float64(time.Hour)))
		}
		out[i] = &qdrant.ScoredPoint{
			Id: qdrant.NewIDNum(uint64(i + 1)), Score: float32(0.9 - 0.4*float64(i)/float64(n)),
			Payload: codec.Encode(m),
			Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
				Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: vec}},
			}}},
		}
	}
	return out
}

// BenchmarkStages measures the read path's CPU stages per candidate on the
// reference read (40 candidates, 384 dims), each on its own. Goal of the
// issue: score + gate + sort at most 250 ns per candidate.
//
//	go test -run '^$' -bench BenchmarkStages -benchmem ./rank
func BenchmarkStages(b *testing.B) {
	r := newRanker(b, &fakeSource{info: cosineInfo()}, nil)
	sb := r.NewStageBench(benchPoints(benchCandidates, benchDim), qdrant.Distance_Cosine, now)
	n := float64(sb.Candidates())
	stages := []struct {
		name string
		run  func()
	}{
		{"decode", sb.Decode},
		{"score+gate+sort", func() { sb.ScoreGateSort() }},
		{"tier2", func() { sb.Tier2() }},
	}
	for _, st := range stages {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st.run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/candidate")
		})
	}
}

// BenchmarkQuery is a whole re-ranked read over a source that answers at
// once: the ranker's full cost per query (stages, explanations, selectors,
// noop telemetry), without the network or the store.
//
//	go test -run '^$' -bench BenchmarkQuery -benchmem ./rank
func BenchmarkQuery(b *testing.B) {
	info := &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: benchDim, Distance: qdrant.Distance_Cosine}),
	}}}
	r := newRanker(b, &fakeSource{info: info, points: benchPoints(benchCandidates, benchDim)}, nil)
	req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(make([]float32, benchDim)), Limit: u64(10), WithPayload: qdrant.NewWithPayloadEnable(true)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Query(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchCandidates, "ns/candidate")
}

// TestStageBenchMatchesQuery: the stages MeasureStages times are the
// pipeline's: what they keep and fold is what a Query returns.
func TestStageBenchMatchesQuery(t *testing.T) {
	pts := benchPoints(benchCandidates, benchDim)
	info := &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: benchDim, Distance: qdrant.Distance_Cosine}),
	}}}
	r := newRanker(t, &fakeSource{info: info, points: pts}, nil)
	res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(make([]float32, benchDim)), Limit: u64(benchCandidates)})
	if err != nil {
		t.Fatal(err)
	}
	sb := r.NewStageBench(pts, qdrant.Distance_Cosine, now)
	folded := 0
	for _, ex := range res.Explanations {
		folded += len(ex.FoldedIDs)
	}
	if got, want := sb.Tier2(), len(res.Points); got != want {
		t.Errorf("StageBench folds into %d groups, Query returned %d", got, want)
	}
	if got, want := sb.Kept(), len(res.Points)+folded; got != want {
		t.Errorf("StageBench keeps %d, Query kept %d (%d returned + %d folded)", got, want, len(res.Points), folded)
	}
	if got := sb.ScoreGateSort(); got != sb.Kept() {
		t.Errorf("ScoreGateSort kept %d, then %d", sb.Kept(), got)
	}
	// The fixture must exercise every stage: exclusions or the gate, and
	// folding.
	if sb.Kept() == benchCandidates || folded == 0 {
		t.Errorf("benchmark fixture: %d of %d kept, %d folded: want some dropped and some folded", sb.Kept(), benchCandidates, folded)
	}
}

// TestMeasureStages: MeasureStages reports a cost for every stage (no
// speed is asserted here: the goal lives in BenchmarkStages).
func TestMeasureStages(t *testing.T) {
	r := newRanker(t, &fakeSource{info: cosineInfo()}, nil)
	c := r.MeasureStages(context.Background(), benchPoints(benchCandidates, benchDim), qdrant.Distance_Cosine, now, time.Millisecond)
	if c.Candidates != benchCandidates || !(c.Decode > 0 && c.ScoreGateSort > 0 && c.Tier2 > 0) {
		t.Errorf("costs %+v: want %d candidates and a positive cost per stage", c, benchCandidates)
	}
}
