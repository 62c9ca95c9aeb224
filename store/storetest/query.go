package storetest

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// The universal query beyond a single nearest search: prefetch, fusion, rescoring, order_by and
// sampling. Expectations come from Qdrant v1.19's planner and executor:
// lib/shard/src/query/planned_query.rs (leaves, the root filter propagated into every prefetch,
// limit + offset at the root), lib/collection/src/shards/local_shard/query.rs (rescoring over the
// prefetched ids only, fusion with take_while(score >= threshold)),
// lib/collection/src/collection/query.rs (offset after fusion),
// lib/segment/src/common/reciprocal_rank_fusion.rs and score_fusion.rs (the formulas),
// lib/collection/src/shards/local_shard/scroll.rs and lib/segment/src/segment/read_view/order_by.rs
// (order_by and sampling), collection_query.rs (validation).

// axesVectors places six points so that the x and y axes rank them differently and no two scores
// tie on either axis: by x 1 > 2 > 3 > 6 > 4 > 5, by y 5 > 4 > 3 > 6 > 2 > 1.
func axesVectors() map[uint64][]float32 {
	return map[uint64][]float32{
		1: {1, 0}, 2: {0.9, 0.3}, 3: {0.7, 0.6}, 4: {0.2, 0.95}, 5: {0, 1}, 6: {0.5, 0.5},
	}
}

// axesPayload: odd ids are group "a".
func axesPayload(id uint64) map[string]any {
	g := "b"
	if id%2 == 1 {
		g = "a"
	}
	return map[string]any{"g": g, "n": int(id)}
}

func loadAxes(t *testing.T, c *qdrant.Client) string {
	t.Helper()
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	var pts []*qdrant.PointStruct
	for id, v := range axesVectors() {
		pts = append(pts, point(t, num(id), v, axesPayload(id)))
	}
	upsert(t, c, coll, pts...)
	return coll
}

func nearX(limit uint64) *qdrant.PrefetchQuery {
	return &qdrant.PrefetchQuery{Query: qdrant.NewQuery(1, 0), Limit: &limit}
}

func nearY(limit uint64) *qdrant.PrefetchQuery {
	return &qdrant.PrefetchQuery{Query: qdrant.NewQuery(0, 1), Limit: &limit}
}

func filterG(g string) *qdrant.Filter {
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("g", g)}}
}

// rrfScore is position_score in reciprocal_rank_fusion.rs: 1 / ((pos + 1) / weight + k - 1).
func rrfScore(pos int, k, weight float64) float64 {
	return 1 / (float64(pos+1)/weight + k - 1)
}

// wantFused checks fused results whose equal scores Qdrant may order either way: the scores per
// id must match and the list must be sorted by score, best first.
func wantFused(t *testing.T, got []*qdrant.ScoredPoint, want map[string]float64) {
	t.Helper()
	gotScores := map[string]float64{}
	for i, p := range got {
		gotScores[idString(p.GetId())] = float64(p.GetScore())
		if i > 0 && got[i-1].GetScore() < p.GetScore() {
			t.Errorf("fused results not sorted by score: %v", hits(got))
		}
	}
	if diff := cmp.Diff(want, gotScores, approxFloat64()); diff != "" {
		t.Errorf("fused scores by id (-want +got):\n%s", diff)
	}
}

func approxFloat64() cmp.Option {
	return cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-5 })
}

func testQuery(t *testing.T, target Target) {
	c := connect(t, target)
	coll := loadAxes(t, c)
	testQueryPrefetchRRF(t, c, coll)
	testQueryDBSF(t, c, coll)
	t.Run("order_by", func(t *testing.T) { testOrderBy(t, c) })
	t.Run("sample", func(t *testing.T) { testSample(t, c, coll) })
}

// testQueryPrefetchRRF covers nearest rescoring of prefetched points and RRF fusion.
func testQueryPrefetchRRF(t *testing.T, c *qdrant.Client, coll string) {
	t.Run("nearest rescoring looks only at prefetched points", func(t *testing.T) {
		cases := []struct {
			name string
			req  *qdrant.QueryPoints
			want []hit
		}{
			{"one prefetch", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1), Prefetch: []*qdrant.PrefetchQuery{nearX(3)}},
				[]hit{{"3", 0.6}, {"2", 0.3}, {"1", 0}}},
			{"union of two prefetches", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1),
				Prefetch: []*qdrant.PrefetchQuery{nearX(1), {Query: qdrant.NewQuery(1, 1), Limit: qdrant.PtrOf(uint64(1))}}},
				[]hit{{"3", 0.6}, {"1", 0}}},
			{"outer threshold is strict", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1), Prefetch: []*qdrant.PrefetchQuery{nearX(4)},
				ScoreThreshold: qdrant.PtrOf(float32(0.5))}, []hit{{"3", 0.6}}},
			{"prefetch threshold", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1),
				Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQuery(1, 0), ScoreThreshold: qdrant.PtrOf(float32(0.8))}}},
				[]hit{{"2", 0.3}, {"1", 0}}},
			{"outer limit and offset", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1), Prefetch: []*qdrant.PrefetchQuery{nearX(4)},
				Limit: qdrant.PtrOf(uint64(2)), Offset: qdrant.PtrOf(uint64(1))}, []hit{{"6", 0.5}, {"2", 0.3}}},
			{"the root filter applies inside prefetches", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1), Filter: filterG("b"),
				Prefetch: []*qdrant.PrefetchQuery{nearX(2)}}, []hit{{"6", 0.5}, {"2", 0.3}}},
			{"a prefetch filter applies to its prefetch", &qdrant.QueryPoints{Query: qdrant.NewQuery(1, 0),
				Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQuery(0, 1), Filter: filterG("b"), Limit: qdrant.PtrOf(uint64(2))}}},
				[]hit{{"6", 0.5}, {"4", 0.2}}},
			{"nested prefetches", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1), Prefetch: []*qdrant.PrefetchQuery{{
				Query: qdrant.NewQuery(1, 0), Limit: qdrant.PtrOf(uint64(2)),
				// A prefetch without a query scrolls the points its filter lets through.
				Prefetch: []*qdrant.PrefetchQuery{{Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(ids(3, 4, 5, 6)...)}}}},
			}}}, []hit{{"3", 0.6}, {"6", 0.5}}},
			{"a point referenced by id is left out of every prefetch", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1),
				Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryID(num(1)), Limit: qdrant.PtrOf(uint64(2))}, nearX(1)}},
				[]hit{{"3", 0.6}, {"2", 0.3}}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.req.CollectionName = coll
				if diff := cmp.Diff(tc.want, hits(query(t, c, tc.req)), approx()); diff != "" {
					t.Errorf("hits (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("RRF", func(t *testing.T) {
		// x: [1 2 3 6], y: [5 4 3]; default k = 2 (DEFAULT_RRF_K).
		x4y3 := []*qdrant.PrefetchQuery{nearX(4), nearY(3)}
		cases := []struct {
			name string
			req  *qdrant.QueryPoints
			want map[string]float64
		}{
			{"fusion RRF", &qdrant.QueryPoints{Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Prefetch: x4y3}, map[string]float64{
				"1": rrfScore(0, 2, 1), "2": rrfScore(1, 2, 1), "3": rrfScore(2, 2, 1) + rrfScore(2, 2, 1),
				"6": rrfScore(3, 2, 1), "5": rrfScore(0, 2, 1), "4": rrfScore(1, 2, 1),
			}},
			{"rrf k", &qdrant.QueryPoints{Query: qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(uint32(10))}), Prefetch: x4y3}, map[string]float64{
				"1": rrfScore(0, 10, 1), "2": rrfScore(1, 10, 1), "3": rrfScore(2, 10, 1) * 2,
				"6": rrfScore(3, 10, 1), "5": rrfScore(0, 10, 1), "4": rrfScore(1, 10, 1),
			}},
			{"rrf weights", &qdrant.QueryPoints{Query: qdrant.NewQueryRRF(&qdrant.Rrf{Weights: []float32{3, 1}}), Prefetch: x4y3}, map[string]float64{
				"1": rrfScore(0, 2, 3), "2": rrfScore(1, 2, 3), "3": rrfScore(2, 2, 3) + rrfScore(2, 2, 1),
				"6": rrfScore(3, 2, 3), "5": rrfScore(0, 2, 1), "4": rrfScore(1, 2, 1),
			}},
			{"threshold keeps scores equal to it", &qdrant.QueryPoints{Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Prefetch: x4y3,
				// take_while(score >= threshold): 3 scores exactly 1/4 + 1/4.
				ScoreThreshold: qdrant.PtrOf(float32(0.5))}, map[string]float64{
				"1": 0.5, "3": 0.5, "5": 0.5,
			}},
			{"nested fusion", &qdrant.QueryPoints{Query: qdrant.NewQuery(0, 1), Prefetch: []*qdrant.PrefetchQuery{{
				Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Limit: qdrant.PtrOf(uint64(2)),
				Prefetch: []*qdrant.PrefetchQuery{nearX(1), {Query: qdrant.NewQuery(1, 1), Limit: qdrant.PtrOf(uint64(2))}},
			}}}, nil}, // checked below: a nearest outer query over the fused pair
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.req.CollectionName = coll
				got := query(t, c, tc.req)
				if tc.want == nil {
					// x: [1], x+y: [3 (1.3), 2 (1.2)]; fused: 1 and 3 at 1/2, 2 at 1/3; limit 2 keeps 1
					// and 3, which the outer y query orders 3 (0.6), 1 (0).
					if diff := cmp.Diff([]hit{{"3", 0.6}, {"1", 0}}, hits(got), approx()); diff != "" {
						t.Errorf("hits (-want +got):\n%s", diff)
					}
					return
				}
				wantFused(t, got, tc.want)
			})
		}
	})
}

// testQueryDBSF covers DBSF, fusion with offset, limit and payload, and invalid combinations.
func testQueryDBSF(t *testing.T, c *qdrant.Client, coll string) {
	t.Run("DBSF", func(t *testing.T) {
		// distr_norm: (s - (mean - 3σ)) / 6σ with the sample standard deviation; summed per point.
		norm := func(xs ...float64) []float64 {
			var mean float64
			for _, x := range xs {
				mean += x
			}
			mean /= float64(len(xs))
			var ss float64
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			sd := math.Sqrt(ss / float64(len(xs)-1))
			out := make([]float64, len(xs))
			for i, x := range xs {
				out[i] = (x - (mean - 3*sd)) / (6 * sd)
			}
			return out
		}
		nx := norm(1, 0.9, 0.7)  // 1 2 3
		ny := norm(1, 0.95, 0.6) // 5 4 3
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryFusion(qdrant.Fusion_DBSF),
			Prefetch: []*qdrant.PrefetchQuery{nearX(3), nearY(3)}})
		wantFused(t, got, map[string]float64{"1": nx[0], "2": nx[1], "3": nx[2] + ny[2], "5": ny[0], "4": ny[1]})
		// A list of one point normalises to 0.5.
		got = query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryFusion(qdrant.Fusion_DBSF),
			Prefetch: []*qdrant.PrefetchQuery{nearX(1)}})
		if diff := cmp.Diff([]hit{{"1", 0.5}}, hits(got), approx()); diff != "" {
			t.Errorf("single point (-want +got):\n%s", diff)
		}
	})

	t.Run("fusion with offset, limit and payload", func(t *testing.T) {
		// Weighted 1.5 : 1 so no two scores tie: 1 (x0) 0.6, 3 (x2 + y2) 1/3 + 1/4, 5 (y0) 0.5,
		// 2 (x1) 3/7, 4 (y1) 1/3, 6 (x3) 3/11.
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryRRF(&qdrant.Rrf{Weights: []float32{1.5, 1}}),
			Prefetch: []*qdrant.PrefetchQuery{nearX(4), nearY(3)}, Limit: qdrant.PtrOf(uint64(3)), Offset: qdrant.PtrOf(uint64(1)),
			WithPayload: qdrant.NewWithPayloadInclude("n")})
		if diff := cmp.Diff(numStrings(3, 5, 2), pointIDs(got)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		for _, p := range got {
			wantPayload(t, p.GetPayload(), map[string]any{"n": int(p.GetId().GetNum())})
		}
	})

	t.Run("invalid combinations are InvalidArgument", func(t *testing.T) {
		cases := []struct {
			name string
			req  *qdrant.QueryPoints
			text string
		}{
			// CollectionQueryRequest::validation (collection_query.rs).
			{"prefetch without a query", &qdrant.QueryPoints{Prefetch: []*qdrant.PrefetchQuery{nearX(2)}},
				"A query is needed to merge the prefetches"},
			{"score_threshold without a query", &qdrant.QueryPoints{ScoreThreshold: qdrant.PtrOf(float32(0.1))},
				"A query is needed to use the score_threshold"},
			{"score_threshold with order_by", &qdrant.QueryPoints{Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "n"}),
				ScoreThreshold: qdrant.PtrOf(float32(0.1))}, "Can't use score_threshold with an order_by query"},
			// planned_query.rs leaf_source_from_scoring_query; validation.rs validate_fusion.
			{"fusion without prefetches", &qdrant.QueryPoints{Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)},
				"cannot apply Fusion without prefetches"},
			{"weights for the wrong number of prefetches", &qdrant.QueryPoints{Query: qdrant.NewQueryRRF(&qdrant.Rrf{Weights: []float32{1}}),
				Prefetch: []*qdrant.PrefetchQuery{nearX(2), nearY(2)}}, "RRF weights length (1) does not match number of prefetches (2)"},
			// lib/api/build.rs: PrefetchQuery.limit range(min = 1).
			{"prefetch limit 0", &qdrant.QueryPoints{Query: qdrant.NewQuery(1, 0), Prefetch: []*qdrant.PrefetchQuery{nearX(0)}},
				"must be 1 or larger"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.req.CollectionName = coll
				_, err := c.Query(opContext(t), tc.req)
				wantStatus(t, err, codes.InvalidArgument, tc.text)
			})
		}
	})
}

// orderHit is a result reduced to its id and order value.
type orderHit struct {
	ID    string
	Value any
}

func orderHits(points []*qdrant.ScoredPoint) []orderHit {
	out := make([]orderHit, len(points))
	for i, p := range points {
		var v any
		switch o := p.GetOrderValue().GetVariant().(type) {
		case *qdrant.OrderValue_Int:
			v = o.Int
		case *qdrant.OrderValue_Float:
			v = o.Float
		}
		out[i] = orderHit{idString(p.GetId()), v}
	}
	return out
}

func testOrderBy(t *testing.T, c *qdrant.Client) {
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	upsert(t, c, coll,
		point(t, num(1), []float32{1, 0}, map[string]any{"i": 30, "f": 2.5, "t": "2024-01-03T00:00:00Z", "g": "a"}),
		point(t, num(2), []float32{1, 0}, map[string]any{"i": 10, "f": -1, "t": "2024-01-01T00:00:00Z", "g": "b"}),
		point(t, num(3), []float32{1, 0}, map[string]any{"i": []any{20, 40}, "f": 7.25, "t": "2024-01-02T12:00:00Z", "g": "a"}),
		point(t, num(4), []float32{1, 0}, map[string]any{"g": "b"}),
	)
	for _, f := range []struct {
		key string
		ft  qdrant.FieldType
	}{{"i", qdrant.FieldType_FieldTypeInteger}, {"f", qdrant.FieldType_FieldTypeFloat}, {"t", qdrant.FieldType_FieldTypeDatetime}} {
		_, err := c.CreateFieldIndex(opContext(t), &qdrant.CreateFieldIndexCollection{CollectionName: coll, Wait: waitApplied(),
			FieldName: f.key, FieldType: f.ft.Enum()})
		if err != nil {
			t.Fatalf("create index on %q: %v", f.key, err)
		}
	}
	micros := func(s string) int64 {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		return ts.UnixMicro()
	}
	desc := qdrant.Direction_Desc.Enum()
	cases := []struct {
		name   string
		ob     *qdrant.OrderBy
		limit  uint64
		filter *qdrant.Filter
		want   []orderHit
	}{
		// A point comes once per value it has ("Repeat a point for as many values as it has").
		{"integer ascending", &qdrant.OrderBy{Key: "i"}, 10, nil,
			[]orderHit{{"2", int64(10)}, {"3", int64(20)}, {"1", int64(30)}, {"3", int64(40)}}},
		{"integer descending with a limit", &qdrant.OrderBy{Key: "i", Direction: desc}, 2, nil,
			[]orderHit{{"3", int64(40)}, {"1", int64(30)}}},
		// start_from: gte for asc, lte for desc (Direction::as_range_from).
		{"start_from ascending", &qdrant.OrderBy{Key: "i", StartFrom: qdrant.NewStartFromInt(20)}, 10, nil,
			[]orderHit{{"3", int64(20)}, {"1", int64(30)}, {"3", int64(40)}}},
		{"start_from descending", &qdrant.OrderBy{Key: "i", Direction: desc, StartFrom: qdrant.NewStartFromInt(30)}, 10, nil,
			[]orderHit{{"1", int64(30)}, {"3", int64(20)}, {"2", int64(10)}}},
		// A float index holds integers as floats (OrderValue::Float).
		{"float index", &qdrant.OrderBy{Key: "f"}, 10, nil,
			[]orderHit{{"2", float64(-1)}, {"1", 2.5}, {"3", 7.25}}},
		// A datetime index orders by microseconds since the epoch (DateTimeWrapper::timestamp).
		{"datetime index", &qdrant.OrderBy{Key: "t", Direction: desc}, 10, nil, []orderHit{
			{"1", micros("2024-01-03T00:00:00Z")}, {"3", micros("2024-01-02T12:00:00Z")}, {"2", micros("2024-01-01T00:00:00Z")}}},
		{"with a filter", &qdrant.OrderBy{Key: "i"}, 10, filterG("a"),
			[]orderHit{{"3", int64(20)}, {"1", int64(30)}, {"3", int64(40)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryOrderBy(tc.ob), Limit: &tc.limit, Filter: tc.filter})
			if diff := cmp.Diff(tc.want, orderHits(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, p := range got {
				// query_scroll reports every point with score 1.
				if p.GetScore() != 1 {
					t.Errorf("point %s: score %v, want 1", idString(p.GetId()), p.GetScore())
				}
			}
		})
	}
	t.Run("as the outer query over a prefetch", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "i", Direction: desc}),
			Prefetch: []*qdrant.PrefetchQuery{{Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(ids(1, 2)...)}}}}})
		if diff := cmp.Diff([]orderHit{{"1", int64(30)}, {"2", int64(10)}}, orderHits(got)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("scroll", func(t *testing.T) {
		// Collection::scroll_by with order_by: records in index order, each with its order value,
		// and no next page offset.
		got, next, err := c.ScrollAndOffset(opContext(t), &qdrant.ScrollPoints{CollectionName: coll,
			OrderBy: &qdrant.OrderBy{Key: "i", Direction: desc}, Limit: qdrant.PtrOf(uint32(3))})
		if err != nil {
			t.Fatalf("scroll: %v", err)
		}
		var hs []orderHit
		for _, p := range got {
			hs = append(hs, orderHit{idString(p.GetId()), p.GetOrderValue().GetInt()})
		}
		if diff := cmp.Diff([]orderHit{{"3", int64(40)}, {"1", int64(30)}, {"3", int64(20)}}, hs); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if next != nil {
			t.Errorf("next page offset %v, want none", next)
		}
		// LocalShard::scroll_by refuses an offset with order_by, as bad input.
		_, err = c.Scroll(opContext(t), &qdrant.ScrollPoints{CollectionName: coll, OrderBy: &qdrant.OrderBy{Key: "i"}, Offset: num(1)})
		wantStatus(t, err, codes.InvalidArgument, "Cannot use an `offset` when using `order_by`")
	})
	t.Run("a key without a range index is InvalidArgument", func(t *testing.T) {
		// OperationError::MissingRangeIndexForOrderBy, a bad input.
		_, err := c.Query(opContext(t), &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "g"})})
		wantStatus(t, err, codes.InvalidArgument, "No range index for `order_by` key: `g`")
	})
}

func testSample(t *testing.T, c *qdrant.Client, coll string) {
	all := numStrings(1, 2, 3, 4, 5, 6)
	t.Run("distinct points, as many as asked", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuerySample(qdrant.Sample_Random), Limit: qdrant.PtrOf(uint64(4))})
		ids := sortedIDs(got)
		if len(ids) != 4 || len(slices.Compact(slices.Clone(ids))) != 4 {
			t.Fatalf("sample of 4 = %v, want 4 distinct points", ids)
		}
		for _, id := range ids {
			if !slices.Contains(all, id) {
				t.Errorf("sampled unknown point %s", id)
			}
		}
	})
	t.Run("filtered, fewer points than the limit", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuerySample(qdrant.Sample_Random), Filter: filterG("a")})
		if diff := cmp.Diff(numStrings(1, 3, 5), sortedIDs(got)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})
	t.Run("over a prefetch", func(t *testing.T) {
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuerySample(qdrant.Sample_Random),
			Prefetch: []*qdrant.PrefetchQuery{nearX(2)}, Limit: qdrant.PtrOf(uint64(5))})
		if diff := cmp.Diff(numStrings(1, 2), sortedIDs(got)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})
}
