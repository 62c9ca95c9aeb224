package storetest

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
)

// scrollPage is one Scroll call reduced to what the cases assert.
type scrollPage struct {
	IDs  []string
	Next string // "" when next_page_offset is absent
}

func scrollOnce(t testing.TB, c *qdrant.Client, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, scrollPage) {
	t.Helper()
	pts, next, err := c.ScrollAndOffset(opContext(t), req)
	if err != nil {
		t.Fatalf("scroll %q: %v", req.GetCollectionName(), err)
	}
	page := scrollPage{IDs: pointIDs(pts)}
	if next != nil {
		page.Next = idString(next)
	}
	return pts, page
}

func testScroll(t *testing.T, target Target) {
	c := connect(t, target)

	// Scroll order is ExtendedPointId's derived Ord: every number before every UUID, numbers
	// ascending, UUIDs by bytes, which is the order of their lower-case hyphenated strings
	// (lib/segment/src/types.rs; Collection::scroll_by sorts by id).
	mixed := newCollection(t, c, 2, qdrant.Distance_Dot)
	order := []string{
		"2", "10", "1152921504606846976",
		"00000000-0000-0000-0000-000000000001", "80000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-fffffffffffe",
	}
	upsert(t, c, mixed,
		point(t, qdrant.NewID("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFE"), []float32{1, 0}, map[string]any{"k": "u3"}),
		point(t, num(10), []float32{1, 0}, map[string]any{"k": "n2"}),
		point(t, qdrant.NewID("80000000-0000-0000-0000-000000000000"), []float32{1, 0}, map[string]any{"k": "u2"}),
		point(t, num(1<<60), []float32{1, 0}, map[string]any{"k": "n3"}),
		point(t, qdrant.NewID("00000000-0000-0000-0000-000000000001"), []float32{1, 0}, map[string]any{"k": "u1"}),
		point(t, num(2), []float32{1, 0}, map[string]any{"k": "n1"}),
	)
	testScrollPaging(t, c, mixed, order)
	testScrollOptions(t, c, mixed, order)
}

// testScrollPaging covers scroll order, next_page_offset paging, offsets and a full last page.
func testScrollPaging(t *testing.T, c *qdrant.Client, mixed string, order []string) {
	t.Run("numbers before UUIDs, each ascending", func(t *testing.T) {
		_, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Limit: qdrant.PtrOf(uint32(100))})
		if diff := cmp.Diff(scrollPage{IDs: order}, page); diff != "" {
			t.Errorf("scroll (-want +got):\n%s", diff)
		}
	})

	t.Run("pages follow next_page_offset until it is absent", func(t *testing.T) {
		// Qdrant fetches limit+1 and returns the extra id as next_page_offset.
		want := []scrollPage{
			{IDs: order[0:2], Next: order[2]},
			{IDs: order[2:4], Next: order[4]},
			{IDs: order[4:6]},
		}
		var got []scrollPage
		var offset *qdrant.PointId
		for range len(want) + 1 {
			pts, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Offset: offset, Limit: qdrant.PtrOf(uint32(2))})
			got = append(got, page)
			if page.Next == "" || len(pts) == 0 {
				break
			}
			if n, err := strconv.ParseUint(page.Next, 10, 64); err == nil {
				offset = qdrant.NewIDNum(n)
			} else {
				offset = qdrant.NewID(page.Next)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})

	t.Run("offset is inclusive and need not exist", func(t *testing.T) {
		cases := []struct {
			name   string
			offset *qdrant.PointId
			want   []string
		}{
			{"existing number", num(10), order[1:]},
			{"missing number", num(3), order[1:]},
			{"past all numbers", num(1 << 62), order[3:]},
			{"existing UUID", qdrant.NewID("80000000-0000-0000-0000-000000000000"), order[4:]},
			{"missing UUID", qdrant.NewID("00000000-0000-0000-0000-000000000002"), order[4:]},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Offset: tc.offset, Limit: qdrant.PtrOf(uint32(100))})
				if diff := cmp.Diff(scrollPage{IDs: tc.want}, page); diff != "" {
					t.Errorf("scroll (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("a full last page has no next offset", func(t *testing.T) {
		_, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Offset: num(1 << 60), Limit: qdrant.PtrOf(uint32(4))})
		if diff := cmp.Diff(scrollPage{IDs: order[2:]}, page); diff != "" {
			t.Errorf("scroll (-want +got):\n%s", diff)
		}
	})
}

// testScrollOptions covers filters, payload and vectors, an empty collection and the default limit.
func testScrollOptions(t *testing.T, c *qdrant.Client, mixed string, order []string) {
	t.Run("filter", func(t *testing.T) {
		f := &qdrant.Filter{Should: []*qdrant.Condition{
			qdrant.NewMatchKeywords("k", "n2", "u1", "u3"),
		}}
		_, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Filter: f, Limit: qdrant.PtrOf(uint32(2))})
		if diff := cmp.Diff(scrollPage{IDs: []string{order[1], order[3]}, Next: order[5]}, page); diff != "" {
			t.Errorf("scroll (-want +got):\n%s", diff)
		}
	})

	t.Run("payload by default, vectors on request", func(t *testing.T) {
		// ScrollRequestInternal defaults with_payload to true, with_vector to false.
		pts, _ := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Limit: qdrant.PtrOf(uint32(1))})
		if len(pts) != 1 {
			t.Fatalf("got %d points, want 1", len(pts))
		}
		wantPayload(t, pts[0].GetPayload(), map[string]any{"k": "n1"})
		if pts[0].GetVectors() != nil {
			t.Errorf("vectors returned by default: %v", pts[0].GetVectors())
		}
		pts, _ = scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: mixed, Limit: qdrant.PtrOf(uint32(1)),
			WithPayload: qdrant.NewWithPayload(false), WithVectors: qdrant.NewWithVectors(true)})
		if len(pts) != 1 {
			t.Fatalf("got %d points, want 1", len(pts))
		}
		if len(pts[0].GetPayload()) != 0 {
			t.Errorf("payload returned with with_payload=false: %v", pts[0].GetPayload())
		}
		if diff := cmp.Diff([]float32{1, 0}, dense(pts[0].GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
	})

	t.Run("an empty collection has one empty page", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		_, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: coll})
		if diff := cmp.Diff(scrollPage{IDs: []string{}}, page); diff != "" {
			t.Errorf("scroll (-want +got):\n%s", diff)
		}
		if got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(1, 0)}); len(got) != 0 {
			t.Errorf("query on an empty collection returned %d points", len(got))
		}
	})

	t.Run("default limit is 10", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		var pts []*qdrant.PointStruct
		for id := uint64(1); id <= 12; id++ {
			pts = append(pts, point(t, num(id), []float32{1, 0}, nil))
		}
		upsert(t, c, coll, pts...)
		_, page := scrollOnce(t, c, &qdrant.ScrollPoints{CollectionName: coll})
		if diff := cmp.Diff(scrollPage{IDs: numStrings(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), Next: "11"}, page); diff != "" {
			t.Errorf("scroll (-want +got):\n%s", diff)
		}
	})
}
