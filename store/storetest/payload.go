package storetest

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"
)

// Payload writes follow lib/shard/src/update/payload.rs and JsonPath::value_set /
// value_remove in lib/segment/src/json_path/mod.rs (merge_map in
// lib/segment/src/common/utils.rs); tests/openapi/test_payload_operations.py covers the same
// ground over REST.

// payloadPoint creates a collection holding one point (id 1) with the given payload.
func payloadPoint(t *testing.T, c *qdrant.Client, pl map[string]any) string {
	t.Helper()
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	upsert(t, c, coll, point(t, num(1), []float32{1, 0}, pl))
	return coll
}

func setPayload(t testing.TB, c *qdrant.Client, req *qdrant.SetPayloadPoints) {
	t.Helper()
	req.Wait = waitApplied()
	if _, err := c.SetPayload(opContext(t), req); err != nil {
		t.Fatalf("set payload: %v", err)
	}
}

func testPayload(t *testing.T, target Target) {
	c := connect(t, target)
	testPayloadSet(t, c)
	testPayloadOverwriteDelete(t, c)
	testPayloadClearMissing(t, c)
	testPayloadRoundTrip(t, c)
}

// testPayloadSet covers SetPayload by id, with a key, and by filter.
func testPayloadSet(t *testing.T, c *qdrant.Client) {
	t.Run("SetPayload", func(t *testing.T) {
		cases := []struct {
			name   string
			before map[string]any
			key    *string
			set    map[string]any
			after  map[string]any
		}{
			{
				name:   "merges top-level keys, replacing whole values",
				before: map[string]any{"a": 1, "b": map[string]any{"x": 1}, "keep": "k"},
				set:    map[string]any{"b": map[string]any{"y": 2}, "c": 3},
				after:  map[string]any{"a": 1, "b": map[string]any{"y": 2}, "c": 3, "keep": "k"},
			},
			{
				// merge_map removes a key whose new value is null (same in v1.17 and v1.19).
				name:   "null removes the key",
				before: map[string]any{"a": 1, "b": 2},
				set:    map[string]any{"a": nil},
				after:  map[string]any{"b": 2},
			},
			{
				// memrank's replicas each own one key of access_counts and rely on this.
				name:   "key merges into the object and keeps its siblings",
				before: map[string]any{"access_counts": map[string]any{"replica-a": 3, "replica-b": 5}, "text": "t"},
				key:    qdrant.PtrOf("access_counts"),
				set:    map[string]any{"replica-a": 4},
				after:  map[string]any{"access_counts": map[string]any{"replica-a": 4, "replica-b": 5}, "text": "t"},
			},
			{
				name:   "key creates a missing object",
				before: map[string]any{"text": "t"},
				key:    qdrant.PtrOf("access_counts"),
				set:    map[string]any{"replica-a": 1},
				after:  map[string]any{"text": "t", "access_counts": map[string]any{"replica-a": 1}},
			},
			{
				name:   "nested key creates intermediate objects",
				before: map[string]any{"a": map[string]any{"c": 1}},
				key:    qdrant.PtrOf("a.b.d"),
				set:    map[string]any{"x": 1},
				after:  map[string]any{"a": map[string]any{"c": 1, "b": map[string]any{"d": map[string]any{"x": 1}}}},
			},
			{
				name:   "key replaces a non-object value with an object",
				before: map[string]any{"a": 5, "z": true},
				key:    qdrant.PtrOf("a"),
				set:    map[string]any{"x": 1},
				after:  map[string]any{"a": map[string]any{"x": 1}, "z": true},
			},
			{
				name:   "key into an array element",
				before: map[string]any{"arr": []any{map[string]any{"a": 1}, map[string]any{"a": 2}}},
				key:    qdrant.PtrOf("arr[1]"),
				set:    map[string]any{"b": 3},
				after:  map[string]any{"arr": []any{map[string]any{"a": 1}, map[string]any{"a": 2, "b": 3}}},
			},
			{
				name:   "key into every array element",
				before: map[string]any{"arr": []any{map[string]any{"a": 1}, map[string]any{"a": 2}}},
				key:    qdrant.PtrOf("arr[].x"),
				set:    map[string]any{"b": 3},
				after: map[string]any{"arr": []any{
					map[string]any{"a": 1, "x": map[string]any{"b": 3}},
					map[string]any{"a": 2, "x": map[string]any{"b": 3}},
				}},
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				coll := payloadPoint(t, c, tc.before)
				setPayload(t, c, &qdrant.SetPayloadPoints{CollectionName: coll, Key: tc.key,
					Payload: payload(t, tc.set), PointsSelector: qdrant.NewPointsSelector(num(1))})
				wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), tc.after)
			})
		}
	})

	t.Run("SetPayload by filter", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll,
			point(t, num(1), []float32{1, 0}, map[string]any{"g": "a"}),
			point(t, num(2), []float32{1, 0}, map[string]any{"g": "b"}),
			point(t, num(3), []float32{1, 0}, map[string]any{"g": "a", "access_counts": map[string]any{"r1": 1}}),
		)
		byA := qdrant.NewPointsSelectorFilter(must(qdrant.NewMatchKeyword("g", "a")))
		setPayload(t, c, &qdrant.SetPayloadPoints{CollectionName: coll, PointsSelector: byA,
			Payload: payload(t, map[string]any{"flagged": true})})
		setPayload(t, c, &qdrant.SetPayloadPoints{CollectionName: coll, PointsSelector: byA, Key: qdrant.PtrOf("access_counts"),
			Payload: payload(t, map[string]any{"r2": 7})})
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(),
			map[string]any{"g": "a", "flagged": true, "access_counts": map[string]any{"r2": 7}})
		wantPayload(t, getPoint(t, c, coll, num(2)).GetPayload(), map[string]any{"g": "b"})
		wantPayload(t, getPoint(t, c, coll, num(3)).GetPayload(),
			map[string]any{"g": "a", "flagged": true, "access_counts": map[string]any{"r1": 1, "r2": 7}})
	})
}

// testPayloadOverwriteDelete covers OverwritePayload, DeletePayload and dotted versus quoted keys.
func testPayloadOverwriteDelete(t *testing.T, c *qdrant.Client) {
	t.Run("OverwritePayload replaces the payload", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll,
			point(t, num(1), []float32{1, 0}, map[string]any{"a": 1, "b": 2}),
			point(t, num(2), []float32{1, 0}, map[string]any{"a": 2, "b": 2}),
			point(t, num(3), []float32{1, 0}, map[string]any{"a": 3}),
		)
		_, err := c.OverwritePayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
			PointsSelector: qdrant.NewPointsSelector(num(1)), Payload: payload(t, map[string]any{"c": 3})})
		if err != nil {
			t.Fatalf("overwrite by id: %v", err)
		}
		_, err = c.OverwritePayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
			PointsSelector: qdrant.NewPointsSelectorFilter(must(qdrant.NewMatchInt("b", 2))),
			Payload:        payload(t, map[string]any{"d": 4})})
		if err != nil {
			t.Fatalf("overwrite by filter: %v", err)
		}
		// Point 1 lost b with the first overwrite, so the filter only reaches point 2.
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), map[string]any{"c": 3})
		wantPayload(t, getPoint(t, c, coll, num(2)).GetPayload(), map[string]any{"d": 4})
		wantPayload(t, getPoint(t, c, coll, num(3)).GetPayload(), map[string]any{"a": 3})
	})

	t.Run("DeletePayload removes keys and dotted paths", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		before := map[string]any{
			"a": map[string]any{"b": 1, "c": 2}, "d": 3,
			"access_counts": map[string]any{"replica-a": 1, "replica-b": 2},
			"arr":           []any{map[string]any{"x": 1, "y": 1}, map[string]any{"x": 2, "y": 2}},
		}
		upsert(t, c, coll,
			point(t, num(1), []float32{1, 0}, before),
			point(t, num(2), []float32{1, 0}, map[string]any{"d": 3, "e": 4}),
			point(t, num(3), []float32{1, 0}, map[string]any{"d": 5, "e": 4}),
		)
		_, err := c.DeletePayload(opContext(t), &qdrant.DeletePayloadPoints{CollectionName: coll, Wait: waitApplied(),
			// Deleting a bare array index is not supported and leaves the array alone.
			Keys:           []string{"a.b", "access_counts.replica-a", "arr[].y", "arr[0]", "missing", "d.not_an_object"},
			PointsSelector: qdrant.NewPointsSelector(num(1))})
		if err != nil {
			t.Fatalf("delete payload by id: %v", err)
		}
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), map[string]any{
			"a": map[string]any{"c": 2}, "d": 3,
			"access_counts": map[string]any{"replica-b": 2},
			"arr":           []any{map[string]any{"x": 1}, map[string]any{"x": 2}},
		})
		_, err = c.DeletePayload(opContext(t), &qdrant.DeletePayloadPoints{CollectionName: coll, Wait: waitApplied(),
			Keys:           []string{"e"},
			PointsSelector: qdrant.NewPointsSelectorFilter(must(qdrant.NewMatchInt("d", 3)))})
		if err != nil {
			t.Fatalf("delete payload by filter: %v", err)
		}
		wantPayload(t, getPoint(t, c, coll, num(2)).GetPayload(), map[string]any{"d": 3})
		wantPayload(t, getPoint(t, c, coll, num(3)).GetPayload(), map[string]any{"d": 5, "e": 4})
	})

	t.Run("dotted keys are paths, quoted keys are literal", func(t *testing.T) {
		// JsonPath parsing (lib/segment/src/json_path/parse.rs): a.b descends into a, while
		// "a.b" in double quotes names the top-level key that contains a dot.
		pl := map[string]any{"a.b": 1, "a": map[string]any{"b": 2, "c": 3}}
		coll := payloadPoint(t, c, pl)
		checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt("a.b", 2)), []uint64{1})
		checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt("a.b", 1)), nil)
		checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt(`"a.b"`, 1)), []uint64{1})
		_, err := c.DeletePayload(opContext(t), &qdrant.DeletePayloadPoints{CollectionName: coll, Wait: waitApplied(),
			Keys: []string{"a.b"}, PointsSelector: qdrant.NewPointsSelector(num(1))})
		if err != nil {
			t.Fatalf("delete a.b: %v", err)
		}
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), map[string]any{"a.b": 1, "a": map[string]any{"c": 3}})
		_, err = c.DeletePayload(opContext(t), &qdrant.DeletePayloadPoints{CollectionName: coll, Wait: waitApplied(),
			Keys: []string{`"a.b"`}, PointsSelector: qdrant.NewPointsSelector(num(1))})
		if err != nil {
			t.Fatalf(`delete "a.b": %v`, err)
		}
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), map[string]any{"a": map[string]any{"c": 3}})
	})
}

// testPayloadClearMissing covers ClearPayload and writes to a missing point.
func testPayloadClearMissing(t *testing.T, c *qdrant.Client) {
	t.Run("ClearPayload by ids and by filter", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll,
			point(t, num(1), []float32{1, 0}, map[string]any{"g": "a"}),
			point(t, num(2), []float32{1, 0}, map[string]any{"g": "b"}),
			point(t, num(3), []float32{1, 0}, map[string]any{"g": "c"}),
		)
		_, err := c.ClearPayload(opContext(t), &qdrant.ClearPayloadPoints{CollectionName: coll, Wait: waitApplied(),
			Points: qdrant.NewPointsSelector(num(1))})
		if err != nil {
			t.Fatalf("clear by id: %v", err)
		}
		_, err = c.ClearPayload(opContext(t), &qdrant.ClearPayloadPoints{CollectionName: coll, Wait: waitApplied(),
			Points: qdrant.NewPointsSelectorFilter(must(qdrant.NewMatchKeyword("g", "b")))})
		if err != nil {
			t.Fatalf("clear by filter: %v", err)
		}
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), nil)
		wantPayload(t, getPoint(t, c, coll, num(2)).GetPayload(), nil)
		wantPayload(t, getPoint(t, c, coll, num(3)).GetPayload(), map[string]any{"g": "c"})
		// The points themselves stay.
		if got := count(t, c, coll, nil); got != 3 {
			t.Errorf("count = %d, want 3", got)
		}
	})

	t.Run("writes to a missing point are NotFound", func(t *testing.T) {
		coll := payloadPoint(t, c, map[string]any{"a": 1})
		// CollectionError::PointNotFound "No point with id 999 found" as StorageError::NotFound
		// (lib/collection/src/operations/types.rs, check_unprocessed_points).
		const text = "No point with id 999 found"
		missing := qdrant.NewPointsSelector(num(999))
		ops := []struct {
			name string
			call func() error
		}{
			{"SetPayload", func() error {
				_, err := c.SetPayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
					PointsSelector: missing, Payload: payload(t, map[string]any{"b": 2})})
				return err
			}},
			{"SetPayload with key", func() error {
				_, err := c.SetPayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
					PointsSelector: missing, Key: qdrant.PtrOf("access_counts"), Payload: payload(t, map[string]any{"r": 2})})
				return err
			}},
			{"OverwritePayload", func() error {
				_, err := c.OverwritePayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
					PointsSelector: missing, Payload: payload(t, map[string]any{"b": 2})})
				return err
			}},
			{"DeletePayload", func() error {
				_, err := c.DeletePayload(opContext(t), &qdrant.DeletePayloadPoints{CollectionName: coll, Wait: waitApplied(),
					PointsSelector: missing, Keys: []string{"a"}})
				return err
			}},
			{"ClearPayload", func() error {
				_, err := c.ClearPayload(opContext(t), &qdrant.ClearPayloadPoints{CollectionName: coll, Wait: waitApplied(),
					Points: missing})
				return err
			}},
		}
		for _, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				wantStatus(t, op.call(), codes.NotFound, text)
			})
		}
		// The failed writes created nothing.
		if got := count(t, c, coll, nil); got != 1 {
			t.Errorf("count = %d, want 1", got)
		}
		wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), map[string]any{"a": 1})
	})
}

// testPayloadRoundTrip covers payload values keeping their types across a round trip.
func testPayloadRoundTrip(t *testing.T, c *qdrant.Client) {
	t.Run("values keep their types across a round trip", func(t *testing.T) {
		values := map[string]any{
			"int":        3,
			"float":      3.0,
			"frac":       0.1,
			"neg":        -2.5,
			"huge":       1e300,
			"big":        int64(1<<53 + 1),
			"max":        int64(math.MaxInt64),
			"min":        int64(math.MinInt64),
			"zero":       0,
			"str":        "héllo \u2603",
			"empty_str":  "",
			"bool":       false,
			"null":       nil,
			"list":       []any{1, 1.0, "1", true, nil, []any{2, 2.5}, map[string]any{"k": "v"}},
			"empty_list": []any{},
			"obj":        map[string]any{"nested": map[string]any{"deep": []any{map[string]any{"x": 1, "y": 1.5}}}},
			"empty_obj":  map[string]any{},
		}
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll, point(t, num(1), []float32{1, 0}, values), point(t, num(2), []float32{0, 1}, nil))
		setPayload(t, c, &qdrant.SetPayloadPoints{CollectionName: coll, PointsSelector: qdrant.NewPointsSelector(num(2)),
			Payload: payload(t, map[string]any{"x": values["obj"], "int": 3, "float": 3.0})})

		t.Run("Get", func(t *testing.T) {
			wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), values)
			wantPayload(t, getPoint(t, c, coll, num(2)).GetPayload(), map[string]any{"x": values["obj"], "int": 3, "float": 3.0})
		})
		t.Run("Scroll", func(t *testing.T) {
			pts := scrollAll(t, c, coll, must(qdrant.NewHasID(num(1))))
			if len(pts) != 1 {
				t.Fatalf("got %d points, want 1", len(pts))
			}
			wantPayload(t, pts[0].GetPayload(), values)
		})
		t.Run("Query", func(t *testing.T) {
			got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(1, 0),
				Limit: qdrant.PtrOf(uint64(1)), WithPayload: qdrant.NewWithPayload(true)})
			if len(got) != 1 {
				t.Fatalf("got %d points, want 1", len(got))
			}
			if diff := cmp.Diff(payload(t, values), got[0].GetPayload(), protocmp.Transform()); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
		})
		t.Run("the integer and the float are told apart by filters", func(t *testing.T) {
			checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt("int", 3)), []uint64{1, 2})
			checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt("float", 3)), nil)
			checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt("big", 1<<53+1)), []uint64{1})
			checkFilter(t, c, coll, []float32{0, 1}, must(qdrant.NewMatchInt("big", 1<<53)), nil)
		})
	})
}
