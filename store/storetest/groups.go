package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// Grouping follows Qdrant v1.19's group-by run: lib/collection/src/grouping/group_by.rs,
// lib/shard/src/grouping/driver.rs (rounds of groups × group_size candidates that leave out
// full groups and points already seen, then rounds that fill the best groups),
// lib/shard/src/grouping/aggregator.rs (a point joins the group of each distinct value of the
// key, arrays flattened; groups ordered by their best hit, at most group_size hits each) and
// lib/segment/src/data_types/groups.rs (only strings and integers are group ids: a
// non-negative integer is an unsigned_value, a negative one an integer_value, and a point
// whose key holds anything else is left out). The fixture keeps every expectation reachable
// by that driver in its first rounds, so it also is the ideal answer.

// groupPayloads: the score of point id against [1 0] is groupScores[id].
func groupPayloads() map[uint64]map[string]any {
	return map[uint64]map[string]any{
		1:  {"doc": "a"},
		2:  {"doc": "b"},
		3:  {"doc": []any{"a", "c"}},
		4:  {"doc": 5},
		5:  {"doc": -2},
		6:  {"doc": "b"},
		7:  {"doc": "a"},
		8:  {"other": "a"},
		9:  {"doc": 1.5},
		10: {"doc": "a"},
	}
}

func groupScores() map[uint64]float32 {
	return map[uint64]float32{1: 0.9, 2: 0.8, 3: 0.7, 4: 0.6, 5: 0.5, 6: 0.4, 7: 0.3, 8: 0.2, 9: 0.1, 10: 0.05}
}

func loadGroupSet(t *testing.T, c *qdrant.Client, d qdrant.Distance) string {
	t.Helper()
	coll := newCollection(t, c, 2, d)
	var pts []*qdrant.PointStruct
	for id, pl := range groupPayloads() {
		pts = append(pts, point(t, num(id), []float32{groupScores()[id], 0}, pl))
	}
	upsert(t, c, coll, pts...)
	return coll
}

// groupHits is a group reduced to its id and hits.
type groupHits struct {
	ID   any
	Hits []hit
}

func groupID(id *qdrant.GroupId) any {
	switch k := id.GetKind().(type) {
	case *qdrant.GroupId_StringValue:
		return k.StringValue
	case *qdrant.GroupId_UnsignedValue:
		return k.UnsignedValue
	case *qdrant.GroupId_IntegerValue:
		return k.IntegerValue
	}
	return nil
}

func pointGroups(gs []*qdrant.PointGroup) []groupHits {
	out := make([]groupHits, len(gs))
	for i, g := range gs {
		out[i] = groupHits{groupID(g.GetId()), hits(g.GetHits())}
	}
	return out
}

func queryGroups(t testing.TB, c *qdrant.Client, req *qdrant.QueryPointGroups) []*qdrant.PointGroup {
	t.Helper()
	got, err := c.QueryGroups(opContext(t), req)
	if err != nil {
		t.Fatalf("query groups in %q: %v", req.GetCollectionName(), err)
	}
	return got
}

func testGroups(t *testing.T, target Target) {
	c := connect(t, target)
	dot := loadGroupSet(t, c, qdrant.Distance_Dot)
	euclid := loadGroupSet(t, c, qdrant.Distance_Euclid)
	q := qdrant.NewQuery(1, 0)
	testGroupsCases(t, c, dot, euclid, q)
	testGroupsOptions(t, c, dot, q)
}

// testGroupsCases covers the table of grouping cases.
func testGroupsCases(t *testing.T, c *qdrant.Client, dot, euclid string, q *qdrant.Query) {
	cases := []struct {
		name string
		req  *qdrant.QueryPointGroups
		want []groupHits
	}{
		// group_size defaults to 3 and limit to 10 (CollectionQueryRequest::DEFAULT_GROUP_SIZE and
		// DEFAULT_LIMIT); 3 is in "a" and "c"; 8 has no key, 9 a float key: neither is grouped.
		{"defaults", &qdrant.QueryPointGroups{CollectionName: dot, Query: q}, []groupHits{
			{"a", []hit{{"1", 0.9}, {"3", 0.7}, {"7", 0.3}}},
			{"b", []hit{{"2", 0.8}, {"6", 0.4}}},
			{"c", []hit{{"3", 0.7}}},
			{uint64(5), []hit{{"4", 0.6}}},
			{int64(-2), []hit{{"5", 0.5}}},
		}},
		{"limit and group_size", &qdrant.QueryPointGroups{CollectionName: dot, Query: q,
			Limit: qdrant.PtrOf(uint64(2)), GroupSize: qdrant.PtrOf(uint64(2))}, []groupHits{
			{"a", []hit{{"1", 0.9}, {"3", 0.7}}},
			{"b", []hit{{"2", 0.8}, {"6", 0.4}}},
		}},
		{"score_threshold", &qdrant.QueryPointGroups{CollectionName: dot, Query: q, ScoreThreshold: qdrant.PtrOf(float32(0.65)),
			Limit: qdrant.PtrOf(uint64(4)), GroupSize: qdrant.PtrOf(uint64(1))}, []groupHits{
			{"a", []hit{{"1", 0.9}}},
			{"b", []hit{{"2", 0.8}}},
			{"c", []hit{{"3", 0.7}}},
		}},
		{"filter", &qdrant.QueryPointGroups{CollectionName: dot, Query: q, Limit: qdrant.PtrOf(uint64(2)),
			Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasID(num(2))}}}, []groupHits{
			{"a", []hit{{"1", 0.9}, {"3", 0.7}, {"7", 0.3}}},
			{"c", []hit{{"3", 0.7}}},
		}},
		// Euclid is SmallBetter: groups and hits by ascending distance.
		{"distance order", &qdrant.QueryPointGroups{CollectionName: euclid, Query: q,
			Limit: qdrant.PtrOf(uint64(2)), GroupSize: qdrant.PtrOf(uint64(2))}, []groupHits{
			{"a", []hit{{"1", 0.1}, {"3", 0.3}}},
			{"b", []hit{{"2", 0.2}, {"6", 0.6}}},
		}},
		{"over a prefetch", &qdrant.QueryPointGroups{CollectionName: dot, Query: q,
			Prefetch: []*qdrant.PrefetchQuery{{Query: q, Limit: qdrant.PtrOf(uint64(1))}},
			Limit:    qdrant.PtrOf(uint64(2)), GroupSize: qdrant.PtrOf(uint64(2))}, []groupHits{
			{"a", []hit{{"1", 0.9}, {"3", 0.7}}},
			{"b", []hit{{"2", 0.8}, {"6", 0.4}}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.GroupBy = "doc"
			if diff := cmp.Diff(tc.want, pointGroups(queryGroups(t, c, tc.req)), approx()); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

// testGroupsOptions covers payload and vectors in groups, SearchGroups and invalid requests.
func testGroupsOptions(t *testing.T, c *qdrant.Client, dot string, q *qdrant.Query) {
	t.Run("payload and vectors only when asked", func(t *testing.T) {
		got := queryGroups(t, c, &qdrant.QueryPointGroups{CollectionName: dot, Query: q, GroupBy: "doc",
			Limit: qdrant.PtrOf(uint64(1)), GroupSize: qdrant.PtrOf(uint64(1))})
		if len(got) != 1 || len(got[0].GetHits()) != 1 {
			t.Fatalf("got %v, want one group of one hit", pointGroups(got))
		}
		if h := got[0].GetHits()[0]; len(h.GetPayload()) != 0 || h.GetVectors() != nil {
			t.Errorf("hit carries payload %v or vectors %v by default", h.GetPayload(), h.GetVectors())
		}
		got = queryGroups(t, c, &qdrant.QueryPointGroups{CollectionName: dot, Query: q, GroupBy: "doc",
			Limit: qdrant.PtrOf(uint64(1)), GroupSize: qdrant.PtrOf(uint64(1)),
			WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
		h := got[0].GetHits()[0]
		wantPayload(t, h.GetPayload(), map[string]any{"doc": "a"})
		if diff := cmp.Diff([]float32{0.9, 0}, dense(h.GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
	})

	t.Run("SearchGroups", func(t *testing.T) {
		res, err := c.GetPointsClient().SearchGroups(opContext(t), &qdrant.SearchPointGroups{
			CollectionName: dot, Vector: []float32{1, 0}, GroupBy: "doc", Limit: 2, GroupSize: 2,
			WithPayload: qdrant.NewWithPayloadInclude("doc"),
		})
		if err != nil {
			t.Fatalf("search groups: %v", err)
		}
		want := []groupHits{{"a", []hit{{"1", 0.9}, {"3", 0.7}}}, {"b", []hit{{"2", 0.8}, {"6", 0.4}}}}
		if diff := cmp.Diff(want, pointGroups(res.GetResult().GetGroups()), approx()); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
		for _, g := range res.GetResult().GetGroups() {
			for _, h := range g.GetHits() {
				if h.GetPayload()["doc"] == nil {
					t.Errorf("hit %s: payload %v lacks doc", idString(h.GetId()), h.GetPayload())
				}
			}
		}
	})

	t.Run("invalid requests are InvalidArgument", func(t *testing.T) {
		// lib/api/build.rs: QueryPointGroups.group_by length(min = 1), group_size and limit
		// range(min = 1); SearchPointGroups the same.
		cases := []struct {
			name string
			call func() error
		}{
			{"empty group_by", func() error {
				_, err := c.QueryGroups(opContext(t), &qdrant.QueryPointGroups{CollectionName: dot, Query: q})
				return err
			}},
			{"group_size 0", func() error {
				_, err := c.QueryGroups(opContext(t), &qdrant.QueryPointGroups{CollectionName: dot, Query: q, GroupBy: "doc",
					GroupSize: qdrant.PtrOf(uint64(0))})
				return err
			}},
			{"search groups limit 0", func() error {
				_, err := c.GetPointsClient().SearchGroups(opContext(t), &qdrant.SearchPointGroups{CollectionName: dot,
					Vector: []float32{1, 0}, GroupBy: "doc", GroupSize: 1})
				return err
			}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) { wantStatus(t, tc.call(), codes.InvalidArgument, "") })
		}
	})
}
