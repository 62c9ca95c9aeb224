package storetest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"
)

// snapshot reads every point of a collection with payload and vectors, in id order.
func snapshot(t testing.TB, c *qdrant.Client, coll string) []*qdrant.RetrievedPoint {
	t.Helper()
	const limit = 1000
	pts, next, err := c.ScrollAndOffset(opContext(t), &qdrant.ScrollPoints{CollectionName: coll,
		Limit: qdrant.PtrOf(uint32(limit)), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil {
		t.Fatalf("scroll %q: %v", coll, err)
	}
	if next != nil {
		t.Fatalf("scroll %q: more than %d points", coll, limit)
	}
	return pts
}

// persisted is what a collection must look like after a restart.
type persisted struct {
	name     string
	size     uint64
	distance qdrant.Distance
	points   []*qdrant.RetrievedPoint
	hits     []hit // ranking for the collection's probe query
	probe    []float32
	indexed  map[string]qdrant.PayloadSchemaType
}

// persistenceRun holds the persistence case's state: the client in use, which a restart
// replaces, every client opened so far, and the collections written before the restarts.
type persistenceRun struct {
	t       *testing.T
	target  Target
	clients []*qdrant.Client
	cur     *qdrant.Client

	cosine, euclid, dropped string
	want                    []persisted
}

func testPersistence(t *testing.T, target Target) {
	if target.Restart == nil {
		t.Skip("Target.Restart is nil: this target cannot be restarted, so persistence is not checked")
	}
	p := &persistenceRun{t: t, target: target}
	// The clients are closed after the collections are deleted: this cleanup is registered
	// before theirs and cleanups run last-in first-out.
	t.Cleanup(func() {
		for _, c := range p.clients {
			if err := c.Close(); err != nil {
				t.Errorf("close client: %v", err)
			}
		}
	})
	p.cur = p.open()
	p.write()
	p.recordWritten()

	target.Restart(t)
	p.cur = p.open()
	t.Run("everything is back after a restart", p.check)

	// Writes made after a restart survive the next one.
	cur, cosine, euclid, want := p.cur, p.cosine, p.euclid, p.want
	upsert(t, cur, euclid, point(t, num(30), []float32{0, 0, 0}, map[string]any{"after": "restart"}))
	setPayload(t, cur, &qdrant.SetPayloadPoints{CollectionName: cosine, PointsSelector: qdrant.NewPointsSelector(num(1)),
		Key: qdrant.PtrOf("access_counts"), Payload: payload(t, map[string]any{"replica-a": 5})})
	want[0] = p.record(cosine, 4, qdrant.Distance_Cosine, want[0].probe, want[0].indexed)
	want[1] = p.record(euclid, 3, qdrant.Distance_Euclid, want[1].probe, nil)
	target.Restart(t)
	p.cur = p.open()
	t.Run("writes after a restart survive the next one", func(t *testing.T) {
		p.check(t)
		wantPayload(t, getPoint(t, p.cur, cosine, num(1)).GetPayload(),
			map[string]any{"g": "a", "access_counts": map[string]any{"replica-a": 5, "replica-b": 2}})
		wantPayload(t, getPoint(t, p.cur, euclid, num(30)).GetPayload(), map[string]any{"after": "restart"})
	})
}

// open connects a new client to the target and keeps it for closing at the end.
func (p *persistenceRun) open() *qdrant.Client {
	t := p.t
	c := p.target.Connect(t)
	if c == nil {
		t.Fatal("Target.Connect returned a nil client")
	}
	p.clients = append(p.clients, c)
	return c
}

// newColl creates a collection that is deleted at the end through the client then in use.
func (p *persistenceRun) newColl(size uint64, d qdrant.Distance) string {
	t := p.t
	current := func() *qdrant.Client { return p.cur }
	name := collectionName(t)
	createCollection(t, p.cur, name, size, d)
	deleteCollectionAtEnd(t, current, name)
	return name
}

// write writes the state that must survive restarts: points, payload updates, a deletion
// and a field index, and a collection that is deleted again.
func (p *persistenceRun) write() {
	t, cur := p.t, p.cur
	cosine := p.newColl(4, qdrant.Distance_Cosine)
	upsert(t, cur, cosine,
		point(t, num(1), []float32{3, 4, 0, 0}, map[string]any{"g": "a", "access_counts": map[string]any{"replica-a": 1}}),
		point(t, num(2), []float32{1, 0, 0, 0}, map[string]any{"g": "gone"}),
		point(t, num(1<<53+1), []float32{0, 0, 1, 0}, map[string]any{"g": "b", "int": 3, "float": 3.0,
			"nested": map[string]any{"list": []any{1, "x", nil, map[string]any{"k": true}}}}),
		point(t, qdrant.NewID("6F9619FF-8B86-D011-B42D-00C04FC964FF"), []float32{1, 1, 1, 1}, map[string]any{"g": "a"}),
	)
	setPayload(t, cur, &qdrant.SetPayloadPoints{CollectionName: cosine, PointsSelector: qdrant.NewPointsSelector(num(1)),
		Key: qdrant.PtrOf("access_counts"), Payload: payload(t, map[string]any{"replica-b": 2})})
	if _, err := cur.Delete(opContext(t), &qdrant.DeletePoints{CollectionName: cosine, Wait: waitApplied(),
		Points: qdrant.NewPointsSelector(num(2))}); err != nil {
		t.Fatalf("delete point: %v", err)
	}
	if _, err := cur.CreateFieldIndex(opContext(t), &qdrant.CreateFieldIndexCollection{CollectionName: cosine, Wait: waitApplied(),
		FieldName: "g", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()}); err != nil {
		t.Fatalf("create field index: %v", err)
	}

	euclid := p.newColl(3, qdrant.Distance_Euclid)
	upsert(t, cur, euclid,
		point(t, num(10), []float32{1, 2, 3}, nil),
		point(t, num(20), []float32{-1, 0.5, 0}, map[string]any{"x": -1.5}),
	)

	dropped := p.newColl(2, qdrant.Distance_Dot)
	upsert(t, cur, dropped, point(t, num(1), []float32{1, 0}, nil))
	if err := cur.DeleteCollection(opContext(t), dropped); err != nil {
		t.Fatalf("delete collection: %v", err)
	}
	p.cosine, p.euclid, p.dropped = cosine, euclid, dropped
}

// record reads what a collection looks like now through the client in use.
func (p *persistenceRun) record(name string, size uint64, d qdrant.Distance, probe []float32, indexed map[string]qdrant.PayloadSchemaType) persisted {
	t, cur := p.t, p.cur
	return persisted{name: name, size: size, distance: d, probe: probe, indexed: indexed,
		points: snapshot(t, cur, name),
		hits:   hits(query(t, cur, &qdrant.QueryPoints{CollectionName: name, Query: qdrant.NewQueryDense(probe)})),
	}
}

// recordWritten records the written collections and checks the written state itself.
func (p *persistenceRun) recordWritten() {
	t, cosine, euclid := p.t, p.cosine, p.euclid
	want := []persisted{
		p.record(cosine, 4, qdrant.Distance_Cosine, []float32{1, 0.5, 0.25, 0}, map[string]qdrant.PayloadSchemaType{"g": qdrant.PayloadSchemaType_Keyword}),
		p.record(euclid, 3, qdrant.Distance_Euclid, []float32{0, 0, 1}, nil),
	}
	// The written state itself, checked before the restart so that a failure after it points at
	// persistence rather than at the write.
	if diff := cmp.Diff([]string{"1", "9007199254740993", "6f9619ff-8b86-d011-b42d-00c04fc964ff"}, pointIDs(want[0].points)); diff != "" {
		t.Fatalf("before restart, ids (-want +got):\n%s", diff)
	}
	wantPayload(t, want[0].points[0].GetPayload(),
		map[string]any{"g": "a", "access_counts": map[string]any{"replica-a": 1, "replica-b": 2}})
	p.want = want
}

// check compares the store, through the client in use, with what was recorded.
func (p *persistenceRun) check(t *testing.T) {
	cur, cosine, dropped, want := p.cur, p.cosine, p.dropped, p.want
	names, err := cur.ListCollections(opContext(t))
	if err != nil {
		t.Fatalf("list collections: %v", err)
	}
	if slices.Contains(names, dropped) {
		t.Errorf("deleted collection %q is back", dropped)
	}
	for _, w := range want {
		if !slices.Contains(names, w.name) {
			t.Errorf("collection %q is missing from %v", w.name, names)
			continue
		}
		info, err := cur.GetCollectionInfo(opContext(t), w.name)
		if err != nil {
			t.Fatalf("get collection %q: %v", w.name, err)
		}
		params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
		if params.GetSize() != w.size || params.GetDistance() != w.distance {
			t.Errorf("%q: size %d distance %v, want %d %v", w.name, params.GetSize(), params.GetDistance(), w.size, w.distance)
		}
		for field, typ := range w.indexed {
			if got := info.GetPayloadSchema()[field].GetDataType(); got != typ {
				t.Errorf("%q: payload_schema[%q] = %v, want %v", w.name, field, got, typ)
			}
		}
		if diff := cmp.Diff(w.points, snapshot(t, cur, w.name), protocmp.Transform()); diff != "" {
			t.Errorf("%q: points (-before +after):\n%s", w.name, diff)
		}
		got := hits(query(t, cur, &qdrant.QueryPoints{CollectionName: w.name, Query: qdrant.NewQueryDense(w.probe)}))
		if diff := cmp.Diff(w.hits, got, approx()); diff != "" {
			t.Errorf("%q: search (-before +after):\n%s", w.name, diff)
		}
	}
	// The index still filters.
	checkFilter(t, cur, cosine, []float32{0, 0, 1, 0}, must(qdrant.NewMatchKeyword("g", "b")), []uint64{1<<53 + 1})
}
