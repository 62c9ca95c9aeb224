package rank_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/rank"
)

// TestSelectorsMatchTheStore: the payload memrank gives back after asking
// the upstream for the whole payload, re-ranking and then applying the
// caller's selector is the payload the store returns when it applies the
// selector in its own read (the store follows Qdrant's value filter). Both
// parse and select with internal/jsonpath; what this checks is the ranker's
// side of it: the widened upstream request, the selector kept for after
// re-ranking, and every path the store accepts also re-ranked.
func TestSelectorsMatchTheStore(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	p := memoryPayload("nested payload", 0.9, 1, map[string]any{"a": 2, "b": 3})
	p["profile"] = map[string]any{
		"name": "Dana",
		"pets": []any{map[string]any{"kind": "cat", "age": 3}, map[string]any{"kind": "dog"}},
		"tags": []any{"x", "y"},
		"deep": map[string]any{"er": map[string]any{"est": 1}},
	}
	p["key-with-dash"] = true
	p["sp ace"] = 1.5
	p["x²"] = "squared" // a number that is not a digit: bare in Qdrant's grammar
	e.upsert(t, "mem", pt{id: 1, vec: vecAt(0.9, 1), payload: p})
	selectors := []struct {
		name string
		sel  *qdrant.WithPayloadSelector
	}{
		{"all", qdrant.NewWithPayloadEnable(true)},
		{"none", qdrant.NewWithPayloadEnable(false)},
		{"top-level keys", qdrant.NewWithPayloadInclude("text", "confidence")},
		{"nested key", qdrant.NewWithPayloadInclude("profile.name")},
		{"deep key", qdrant.NewWithPayloadInclude("profile.deep.er.est")},
		{"array items' key", qdrant.NewWithPayloadInclude("profile.pets[].kind")},
		{"array by index", qdrant.NewWithPayloadInclude("profile.pets[0]")},
		{"whole array", qdrant.NewWithPayloadInclude("profile.tags")},
		{"object of counts", qdrant.NewWithPayloadInclude("access_counts.a")},
		{"dashed key", qdrant.NewWithPayloadInclude("key-with-dash")},
		{"quoted key", qdrant.NewWithPayloadInclude(`"sp ace"`)},
		{"bare key with a non-digit number", qdrant.NewWithPayloadInclude("x²")},
		{"missing key", qdrant.NewWithPayloadInclude("nope")},
		{"exclude top-level", qdrant.NewWithPayloadExclude("profile", "access_counts")},
		{"exclude nested", qdrant.NewWithPayloadExclude("profile.pets[].age", "profile.deep")},
		{"exclude array by index", qdrant.NewWithPayloadExclude("profile.pets[0]")},
	}
	r := newRanker(t, e.client, nil)
	for _, tc := range selectors {
		t.Run(tc.name, func(t *testing.T) {
			q := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: tc.sel}
			raw, err := e.client.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("store: %v", err)
			}
			res, err := r.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("ranker: %v", err)
			}
			if !res.Reranked || len(res.Points) != 1 || len(raw) != 1 {
				t.Fatalf("reranked %v (%q), %d points, store %d", res.Reranked, res.PassThrough, len(res.Points), len(raw))
			}
			// An empty payload and none are the same on the wire.
			if diff := cmp.Diff(raw[0].GetPayload(), res.Points[0].GetPayload(), protocmp.Transform(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("payload (-store +memrank):\n%s", diff)
			}
		})
	}
}

// FuzzPayloadSelector: any include or exclude path is either re-applied by
// the ranker without panicking, or the request is passed through for the
// upstream to judge.
func FuzzPayloadSelector(f *testing.F) {
	for _, s := range []string{"a", "a.b", "a[]", "a[0].b", `"x y".z`, "a..b", "[0]", `"`, "a[", "é.ü[]", "a[99999999999999999999]"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	payload := map[string]any{"text": "t", "a": map[string]any{"b": []any{map[string]any{"c": 1}, 2}}, "x y": map[string]any{"z": "q"}}
	pts := []*qdrant.ScoredPoint{scored(1, 0.9, payload, nil)}
	src := &fakeSource{info: cosineInfo(), points: pts}
	r, err := rank.New(src, rank.Config{Now: fixedNow, Mode: rank.ModeRerank}) // a plain payload, configured as memories
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string, exclude bool) {
		sel := qdrant.NewWithPayloadInclude(path)
		if exclude {
			sel = qdrant.NewWithPayloadExclude(path)
		}
		res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: sel})
		if err != nil {
			t.Fatal(err)
		}
		if res.PassThrough != "" && res.PassThrough != rank.PassThroughBadSelector {
			t.Fatalf("pass-through %q", res.PassThrough)
		}
		for _, p := range res.Points {
			for k := range p.GetPayload() {
				if _, ok := payload[k]; !ok {
					t.Fatalf("key %q not in the payload", k)
				}
			}
		}
	})
}

// TestNamedVectorSelectors: on a collection with named vectors (a fake
// source: the embedded store has only an unnamed one), the ranker fetches
// the query's vector for tier 2 whatever the caller asked for, and gives
// back exactly the vectors the caller selected.
func TestNamedVectorSelectors(t *testing.T) {
	info := &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			"text":  {Size: dim, Distance: qdrant.Distance_Cosine},
			"image": {Size: 4, Distance: qdrant.Distance_Dot},
		}),
	}}}
	dense := func(v []float32) *qdrant.VectorOutput {
		return &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: v}}}
	}
	image := []float32{1, 1, 0, 0}
	text := vecAt(0.9, 1)
	all := map[string]*qdrant.VectorOutput{"text": dense(text), "image": dense(image)}
	point := &qdrant.ScoredPoint{
		Id: qdrant.NewIDNum(1), Score: 0.9, Payload: qdrant.NewValueMap(memoryPayload("one", 0.9, 0, nil)),
		Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: all}}},
	}
	named := func(names ...string) *qdrant.VectorsOutput {
		m := map[string]*qdrant.VectorOutput{}
		for _, n := range names {
			m[n] = all[n]
		}
		return &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: m}}}
	}
	tests := []struct {
		name   string
		sel    *qdrant.WithVectorsSelector
		wantUp *qdrant.WithVectorsSelector
		want   *qdrant.VectorsOutput
	}{
		{"none", nil, qdrant.NewWithVectorsInclude("text"), nil},
		{"false", qdrant.NewWithVectorsEnable(false), qdrant.NewWithVectorsInclude("text"), nil},
		{"all", qdrant.NewWithVectorsEnable(true), qdrant.NewWithVectorsEnable(true), named("text", "image")},
		{"the query's", qdrant.NewWithVectorsInclude("text"), qdrant.NewWithVectorsInclude("text"), named("text")},
		{"another", qdrant.NewWithVectorsInclude("image"), qdrant.NewWithVectorsInclude("image", "text"), named("image")},
		{"a missing name", qdrant.NewWithVectorsInclude("nope"), qdrant.NewWithVectorsInclude("nope", "text"), named()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: info, points: []*qdrant.ScoredPoint{point}}
			r := newRanker(t, src, nil)
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Using: ptr("text"), WithVectors: tc.sel})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reranked || len(res.Points) != 1 {
				t.Fatalf("reranked %v (%q), %d points", res.Reranked, res.PassThrough, len(res.Points))
			}
			if diff := cmp.Diff(tc.want, res.Points[0].GetVectors(), protocmp.Transform()); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUp, src.reqs[0].GetWithVectors(), protocmp.Transform()); diff != "" {
				t.Errorf("upstream with_vectors (-want +got):\n%s", diff)
			}
		})
	}
}
