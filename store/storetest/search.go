package storetest

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// searchSet is a collection of five points whose scores against query are all distinct, so
// every expected order is unambiguous (Qdrant orders ties arbitrarily).
type searchSet struct {
	distance qdrant.Distance
	vectors  map[uint64][]float32
	query    []float32
	// want is the full ranking against query with Qdrant's returned scores: similarity for
	// Cosine and Dot (larger first), the distance itself for Euclid and Manhattan (smaller
	// first) (lib/segment/src/spaces/simple.rs postprocess; notes 3.1).
	want []hit
	// threshold lies strictly between two scores; wantAbove is what passes it (Qdrant keeps
	// score > t for Cosine/Dot and distance < t for Euclid/Manhattan,
	// lib/collection/src/shards/local_shard/search.rs check_threshold). No score equals it.
	threshold float32
	wantAbove []string
}

func searchSets() []searchSet {
	return []searchSet{
		{
			distance: qdrant.Distance_Cosine,
			vectors: map[uint64][]float32{
				1: {1, 0, 0, 0}, 2: {3, 4, 0, 0}, 3: {0, 1, 0, 0}, 4: {-1, 0.5, 0, 0}, 5: {1, 1, 1, 1},
			},
			query:     []float32{1, 0, 0, 0},
			want:      []hit{{"1", 1}, {"2", 0.6}, {"5", 0.5}, {"3", 0}, {"4", float32(-1 / math.Sqrt(1.25))}},
			threshold: 0.55,
			wantAbove: []string{"1", "2"},
		},
		{
			distance: qdrant.Distance_Dot,
			vectors: map[uint64][]float32{
				1: {1, 0, 0, 0}, 2: {0, 1.5, 0, 0}, 3: {2, 2, 0, 0}, 4: {-1, 0, 0, 0}, 5: {0, 0, 5, 0},
			},
			query:     []float32{1, 2, 0, 0},
			want:      []hit{{"3", 6}, {"2", 3}, {"1", 1}, {"5", 0}, {"4", -1}},
			threshold: 0.5,
			wantAbove: []string{"3", "2", "1"},
		},
		{
			distance: qdrant.Distance_Euclid,
			vectors: map[uint64][]float32{
				1: {1, 0, 0, 0}, 2: {0, 2, 0, 0}, 3: {0, 0, 3, 0}, 4: {0.5, 0.5, 0, 0}, 5: {0, 0, 0, -4},
			},
			query:     []float32{0, 0, 0, 0},
			want:      []hit{{"4", float32(math.Sqrt(0.5))}, {"1", 1}, {"2", 2}, {"3", 3}, {"5", 4}},
			threshold: 1.5,
			wantAbove: []string{"4", "1"},
		},
		{
			distance: qdrant.Distance_Manhattan,
			vectors: map[uint64][]float32{
				1: {1, 0, 0, 0}, 2: {1, 1, 0, 0}, 3: {1, 1, 1, 0}, 4: {0.25, 0.25, 0, 0}, 5: {-1, -1, -1, -1},
			},
			query:     []float32{0, 0, 0, 0},
			want:      []hit{{"4", 0.5}, {"1", 1}, {"2", 2}, {"3", 3}, {"5", 4}},
			threshold: 2.5,
			wantAbove: []string{"4", "1", "2"},
		},
	}
}

// searchPayload is the payload of point id in every search collection; odd ids are group "a".
func searchPayload(id uint64) map[string]any {
	g := "b"
	if id%2 == 1 {
		g = "a"
	}
	return map[string]any{"g": g, "n": int(id), "obj": map[string]any{"x": int(id), "y": "y"}}
}

func loadSearchSet(t *testing.T, c *qdrant.Client, s searchSet) string {
	t.Helper()
	coll := newCollection(t, c, 4, s.distance)
	var pts []*qdrant.PointStruct
	for id := uint64(1); id <= 5; id++ {
		pts = append(pts, point(t, num(id), s.vectors[id], searchPayload(id)))
	}
	upsert(t, c, coll, pts...)
	return coll
}

func query(t testing.TB, c *qdrant.Client, req *qdrant.QueryPoints) []*qdrant.ScoredPoint {
	t.Helper()
	got, err := c.Query(opContext(t), req)
	if err != nil {
		t.Fatalf("query %q: %v", req.GetCollectionName(), err)
	}
	return got
}

func testSearch(t *testing.T, target Target) {
	c := connect(t, target)
	colls := map[qdrant.Distance]string{}
	sets := searchSets()
	for _, s := range sets {
		colls[s.distance] = loadSearchSet(t, c, s)
	}
	dot := sets[1]
	dotColl := colls[qdrant.Distance_Dot]
	testSearchDistances(t, c, sets, colls, dotColl)
	testSearchLimits(t, c, dot, dotColl)
	testSearchWith(t, c, dot, dotColl)
	testSearchQueryForms(t, c, dot, dotColl)
	testSearchPointsClient(t, c, dot, dotColl)
}

// testSearchDistances covers ranking and score_threshold per distance, and stored vectors.
func testSearchDistances(t *testing.T, c *qdrant.Client, sets []searchSet, colls map[qdrant.Distance]string, dotColl string) {
	for _, s := range sets {
		t.Run(s.distance.String()+" ranks and scores", func(t *testing.T) {
			got := query(t, c, &qdrant.QueryPoints{CollectionName: colls[s.distance], Query: qdrant.NewQueryDense(s.query)})
			if diff := cmp.Diff(s.want, hits(got), approx()); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
		})
		t.Run(s.distance.String()+" score_threshold", func(t *testing.T) {
			got := query(t, c, &qdrant.QueryPoints{CollectionName: colls[s.distance],
				Query: qdrant.NewQueryDense(s.query), ScoreThreshold: qdrant.PtrOf(s.threshold)})
			if diff := cmp.Diff(s.wantAbove, pointIDs(got)); diff != "" {
				t.Errorf("ids past threshold %v (-want +got):\n%s", s.threshold, diff)
			}
		})
	}

	t.Run("Cosine normalises stored and query vectors", func(t *testing.T) {
		coll := colls[qdrant.Distance_Cosine]
		// cosine_preprocess normalises at insert; with_vectors returns the stored, normalised
		// vector (lib/segment/src/spaces/simple.rs).
		if diff := cmp.Diff([]float32{0.6, 0.8, 0, 0}, dense(getPoint(t, c, coll, num(2)).GetVectors()), approx()); diff != "" {
			t.Errorf("stored vector of [3 4 0 0] (-want +got):\n%s", diff)
		}
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(5, 0, 0, 0),
			WithVectors: qdrant.NewWithVectors(true)})
		// A longer query vector scores the same: it is normalised too.
		if diff := cmp.Diff(sets[0].want, hits(got), approx()); diff != "" {
			t.Errorf("hits for [5 0 0 0] (-want +got):\n%s", diff)
		}
		for _, p := range got {
			if s := p.GetScore(); s < -1.0001 || s > 1.0001 {
				t.Errorf("point %s: cosine score %v outside [-1, 1]", idString(p.GetId()), s)
			}
			var norm float64
			for _, x := range dense(p.GetVectors()) {
				norm += float64(x) * float64(x)
			}
			if math.Abs(norm-1) > 1e-4 {
				t.Errorf("point %s: returned vector %v has squared norm %v, want 1", idString(p.GetId()), dense(p.GetVectors()), norm)
			}
		}
	})

	t.Run("Dot keeps vectors as written", func(t *testing.T) {
		if diff := cmp.Diff([]float32{2, 2, 0, 0}, dense(getPoint(t, c, dotColl, num(3)).GetVectors()), approx()); diff != "" {
			t.Errorf("stored vector (-want +got):\n%s", diff)
		}
	})
}

// testSearchLimits covers limit, offset, the default limit, filters, params and limit 0.
func testSearchLimits(t *testing.T, c *qdrant.Client, dot searchSet, dotColl string) {
	t.Run("limit and offset", func(t *testing.T) {
		cases := []struct {
			name          string
			limit, offset *uint64
			want          []string
		}{
			{"limit 2", qdrant.PtrOf(uint64(2)), nil, []string{"3", "2"}},
			{"limit 2 offset 1", qdrant.PtrOf(uint64(2)), qdrant.PtrOf(uint64(1)), []string{"2", "1"}},
			{"offset 4", nil, qdrant.PtrOf(uint64(4)), []string{"4"}},
			{"offset past the end", nil, qdrant.PtrOf(uint64(10)), []string{}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
					Limit: tc.limit, Offset: tc.offset})
				if diff := cmp.Diff(tc.want, pointIDs(got)); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("default limit is 10", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		var pts []*qdrant.PointStruct
		for id := uint64(1); id <= 12; id++ {
			pts = append(pts, point(t, num(id), []float32{float32(id), 1}, nil))
		}
		upsert(t, c, coll, pts...)
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(1, 0)})
		if diff := cmp.Diff(numStrings(12, 11, 10, 9, 8, 7, 6, 5, 4, 3), pointIDs(got)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})

	t.Run("filter", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("g", "a")}}})
		if diff := cmp.Diff([]hit{{"3", 6}, {"1", 1}, {"5", 0}}, hits(got), approx()); diff != "" {
			t.Errorf("hits (-want +got):\n%s", diff)
		}
	})

	t.Run("search params are accepted", func(t *testing.T) {
		// Small collections are searched exactly anyway; exact and hnsw_ef must not change that.
		got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
			Params: &qdrant.SearchParams{Exact: qdrant.PtrOf(true), HnswEf: qdrant.PtrOf(uint64(16))}})
		if diff := cmp.Diff(dot.want, hits(got), approx()); diff != "" {
			t.Errorf("hits (-want +got):\n%s", diff)
		}
	})

	t.Run("limit 0 is InvalidArgument", func(t *testing.T) {
		// QueryPoints.limit, SearchPoints.limit and ScrollPoints.limit are validated with
		// range(min = 1) (lib/api/build.rs).
		_, err := c.Query(opContext(t), &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
			Limit: qdrant.PtrOf(uint64(0))})
		wantStatus(t, err, codes.InvalidArgument, "")
		_, err = c.GetPointsClient().Search(opContext(t), &qdrant.SearchPoints{CollectionName: dotColl, Vector: dot.query})
		wantStatus(t, err, codes.InvalidArgument, "")
		_, err = c.Scroll(opContext(t), &qdrant.ScrollPoints{CollectionName: dotColl, Limit: qdrant.PtrOf(uint32(0))})
		wantStatus(t, err, codes.InvalidArgument, "")
	})
}

// testSearchWith covers the with_payload selectors and with_vectors.
func testSearchWith(t *testing.T, c *qdrant.Client, dot searchSet, dotColl string) {
	t.Run("with_payload selectors", func(t *testing.T) {
		// WithPayloadSelector: enable / include / exclude; nested paths select inside objects
		// (PayloadSelector::process, JsonPath::check_include_pattern/check_exclude_pattern in
		// lib/segment/src/json_path/mod.rs).
		cases := []struct {
			name string
			sel  *qdrant.WithPayloadSelector
			want func(id uint64) map[string]any
		}{
			{"default none", nil, func(uint64) map[string]any { return nil }},
			{"disabled", qdrant.NewWithPayload(false), func(uint64) map[string]any { return nil }},
			{"enabled", qdrant.NewWithPayload(true), searchPayload},
			{"include", qdrant.NewWithPayloadInclude("g", "n"), func(id uint64) map[string]any {
				p := searchPayload(id)
				return map[string]any{"g": p["g"], "n": p["n"]}
			}},
			{"include nested", qdrant.NewWithPayloadInclude("obj.x"), func(id uint64) map[string]any {
				return map[string]any{"obj": map[string]any{"x": int(id)}}
			}},
			{"include a missing key", qdrant.NewWithPayloadInclude("missing"), func(uint64) map[string]any { return nil }},
			{"exclude", qdrant.NewWithPayloadExclude("g"), func(id uint64) map[string]any {
				p := searchPayload(id)
				delete(p, "g")
				return p
			}},
			{"exclude nested", qdrant.NewWithPayloadExclude("obj.x"), func(id uint64) map[string]any {
				p := searchPayload(id)
				p["obj"] = map[string]any{"y": "y"}
				return p
			}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
					Limit: qdrant.PtrOf(uint64(2)), WithPayload: tc.sel})
				if len(got) != 2 {
					t.Fatalf("got %d points, want 2", len(got))
				}
				for _, p := range got {
					wantPayload(t, p.GetPayload(), tc.want(p.GetId().GetNum()))
				}
			})
		}
	})

	t.Run("with_vectors", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
			WithVectors: qdrant.NewWithVectors(true)})
		for _, p := range got {
			if diff := cmp.Diff(dot.vectors[p.GetId().GetNum()], dense(p.GetVectors()), approx()); diff != "" {
				t.Errorf("point %s vector (-want +got):\n%s", idString(p.GetId()), diff)
			}
		}
		plain := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query)})
		for _, p := range plain {
			if p.GetVectors() != nil {
				t.Errorf("point %s: vectors returned without with_vectors", idString(p.GetId()))
			}
		}
	})
}

// testSearchQueryForms covers queries by point id, without a query, and QueryBatch.
func testSearchQueryForms(t *testing.T, c *qdrant.Client, dot searchSet, dotColl string) {
	t.Run("query by point id uses its vector and excludes it", func(t *testing.T) {
		// Point 3 is [2 2 0 0]; exclude_referenced_ids drops it from the result
		// (lib/collection/src/operations/universal_query/collection_query.rs).
		got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryID(num(3))})
		if diff := cmp.Diff([]hit{{"2", 3}, {"1", 2}, {"5", 0}, {"4", -2}}, hits(got), approx()); diff != "" {
			t.Errorf("hits (-want +got):\n%s", diff)
		}
	})

	t.Run("query by a missing point id is NotFound", func(t *testing.T) {
		// The referenced vector cannot be resolved: CollectionError::PointNotFound
		// (lib/collection/src/collection/query.rs).
		_, err := c.Query(opContext(t), &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQueryID(num(999))})
		wantStatus(t, err, codes.NotFound, "No point with id 999 found")
	})

	t.Run("query without a query lists points in id order", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: dotColl, Limit: qdrant.PtrOf(uint64(3))})
		if diff := cmp.Diff(numStrings(1, 2, 3), pointIDs(got)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		got = query(t, c, &qdrant.QueryPoints{CollectionName: dotColl,
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("g", "b")}}})
		if diff := cmp.Diff(numStrings(2, 4), pointIDs(got)); diff != "" {
			t.Errorf("filtered ids (-want +got):\n%s", diff)
		}
	})

	t.Run("QueryBatch", func(t *testing.T) {
		res, err := c.QueryBatch(opContext(t), &qdrant.QueryBatchPoints{
			CollectionName: dotColl,
			QueryPoints: []*qdrant.QueryPoints{
				{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query), Limit: qdrant.PtrOf(uint64(2))},
				{CollectionName: dotColl, Query: qdrant.NewQueryDense(dot.query),
					Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("g", "b")}}},
				{CollectionName: dotColl, Query: qdrant.NewQueryID(num(3)), Limit: qdrant.PtrOf(uint64(1))},
			},
		})
		if err != nil {
			t.Fatalf("query batch: %v", err)
		}
		var got [][]hit
		for _, r := range res {
			got = append(got, hits(r.GetResult()))
		}
		want := [][]hit{{{"3", 6}, {"2", 3}}, {{"2", 3}, {"4", -1}}, {{"2", 3}}}
		if diff := cmp.Diff(want, got, approx()); diff != "" {
			t.Errorf("batch hits (-want +got):\n%s", diff)
		}
	})
}

// testSearchPointsClient covers Search and SearchBatch, and a query of the wrong dimension.
func testSearchPointsClient(t *testing.T, c *qdrant.Client, dot searchSet, dotColl string) {
	t.Run("Search through PointsClient", func(t *testing.T) {
		res, err := c.GetPointsClient().Search(opContext(t), &qdrant.SearchPoints{
			CollectionName: dotColl, Vector: dot.query, Limit: 3,
		})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		if diff := cmp.Diff(dot.want[:3], hits(res.GetResult()), approx()); diff != "" {
			t.Errorf("hits (-want +got):\n%s", diff)
		}
		for _, p := range res.GetResult() {
			if len(p.GetPayload()) != 0 {
				t.Errorf("point %s: payload returned without with_payload", idString(p.GetId()))
			}
		}
		res, err = c.GetPointsClient().Search(opContext(t), &qdrant.SearchPoints{
			CollectionName: dotColl, Vector: dot.query, Limit: 10, Offset: qdrant.PtrOf(uint64(1)),
			ScoreThreshold: qdrant.PtrOf(float32(-0.5)),
			Filter:         &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("g", "a")}},
			WithPayload:    qdrant.NewWithPayloadInclude("n"),
		})
		if err != nil {
			t.Fatalf("search with filter, offset and threshold: %v", err)
		}
		if diff := cmp.Diff([]hit{{"1", 1}, {"5", 0}}, hits(res.GetResult()), approx()); diff != "" {
			t.Errorf("hits (-want +got):\n%s", diff)
		}
		for _, p := range res.GetResult() {
			wantPayload(t, p.GetPayload(), map[string]any{"n": int(p.GetId().GetNum())})
		}
	})

	t.Run("SearchBatch through PointsClient", func(t *testing.T) {
		res, err := c.GetPointsClient().SearchBatch(opContext(t), &qdrant.SearchBatchPoints{
			CollectionName: dotColl,
			SearchPoints: []*qdrant.SearchPoints{
				{CollectionName: dotColl, Vector: dot.query, Limit: 1},
				{CollectionName: dotColl, Vector: []float32{-1, 0.1, 0, 0}, Limit: 2},
			},
		})
		if err != nil {
			t.Fatalf("search batch: %v", err)
		}
		var got [][]hit
		for _, r := range res.GetResult() {
			got = append(got, hits(r.GetResult()))
		}
		want := [][]hit{{{"3", 6}}, {{"4", 1}, {"2", 0.15}}}
		if diff := cmp.Diff(want, got, approx()); diff != "" {
			t.Errorf("batch hits (-want +got):\n%s", diff)
		}
	})

	t.Run("wrong query dimension is InvalidArgument", func(t *testing.T) {
		_, err := c.Query(opContext(t), &qdrant.QueryPoints{CollectionName: dotColl, Query: qdrant.NewQuery(1, 2, 3)})
		wantStatus(t, err, codes.InvalidArgument, "Vector dimension error: expected dim: 4, got 3")
		_, err = c.GetPointsClient().Search(opContext(t), &qdrant.SearchPoints{
			CollectionName: dotColl, Vector: []float32{1, 2, 3, 4, 5}, Limit: 1})
		wantStatus(t, err, codes.InvalidArgument, "Vector dimension error: expected dim: 4, got 5")
	})
}
