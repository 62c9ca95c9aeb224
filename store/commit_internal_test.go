package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
)

func testDB(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func testColl(t *testing.T, db *DB, name string) {
	t.Helper()
	ctx := context.Background()
	err := db.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: name,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: name, FieldName: "gen",
		FieldType: qdrant.FieldType_FieldTypeInteger.Enum()}); err != nil {
		t.Fatal(err)
	}
}

func testUpsert(t *testing.T, id uint64, gen int64) writeOp {
	t.Helper()
	tx, err := upsertTx([]*qdrant.PointStruct{{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(1, 0),
		Payload: qdrant.NewValueMap(map[string]any{"gen": gen})}}, nil, nil, qdrant.UpdateMode_Upsert)
	if err != nil {
		t.Fatal(err)
	}
	return structural(tx)
}

func testSetGen(t *testing.T, gen int64, ids ...uint64) writeOp {
	t.Helper()
	pids := make([]*qdrant.PointId, len(ids))
	for i, id := range ids {
		pids[i] = qdrant.NewIDNum(id)
	}
	op, err := setPayloadTx(qdrant.NewValueMap(map[string]any{"gen": gen}), qdrant.NewPointsSelector(pids...), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// gens reads every point's gen, by payload and by the index.
func gens(t *testing.T, db *DB, coll string) (byPayload map[uint64]int64, byIndex map[int64]uint64) {
	t.Helper()
	ctx := context.Background()
	pts, _, err := db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: coll, Limit: qdrant.PtrOf(uint32(100))})
	if err != nil {
		t.Fatal(err)
	}
	byPayload = map[uint64]int64{}
	byIndex = map[int64]uint64{}
	for _, p := range pts {
		g := p.GetPayload()["gen"].GetIntegerValue()
		byPayload[p.GetId().GetNum()] = g
		if _, ok := byIndex[g]; !ok {
			n, err := db.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("gen", g)}}})
			if err != nil {
				t.Fatal(err)
			}
			byIndex[g] = n
		}
	}
	return byPayload, byIndex
}

type outcome struct {
	Ops  []uint64
	Kind Kind
}

// A group runs its requests in order, each with its own operation ids;
// one that fails or whose caller gave up leaves the others applied, and
// what committed survives a reopen.
func TestGroupCommitKeepsOthersWhenOneFails(t *testing.T) {
	dir := t.TempDir()
	db := testDB(t, dir)
	testColl(t, db, "a")
	testColl(t, db, "b")
	ctx := context.Background()
	if _, err := db.write(ctx, "b", testUpsert(t, 7, 0)); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	reqs := []struct {
		name string
		ctx  context.Context
		coll string
		ops  []writeOp
		want outcome
	}{
		{name: "upsert new point", ctx: ctx, coll: "a", ops: []writeOp{testUpsert(t, 1, 1)}, want: outcome{Ops: []uint64{2}}},
		{name: "payload of a missing point", ctx: ctx, coll: "a", ops: []writeOp{testSetGen(t, 5, 99)}, want: outcome{Kind: KindNotFound}},
		// Payload writes run before the group's other writes (payloadFirst),
		// so the point the first request creates does not exist yet for it.
		{name: "payload of a point a concurrent upsert creates", ctx: ctx, coll: "a", ops: []writeOp{testSetGen(t, 2, 1)}, want: outcome{Kind: KindNotFound}},
		{name: "payload batch on another collection", ctx: ctx, coll: "b", ops: []writeOp{testSetGen(t, 3, 7), testSetGen(t, 4, 7)}, want: outcome{Ops: []uint64{3, 4}}},
		{name: "caller gave up", ctx: gone, coll: "a", ops: []writeOp{testUpsert(t, 2, 9)}, want: outcome{Kind: KindCanceled}},
		{name: "missing collection", ctx: ctx, coll: "nope", ops: []writeOp{testUpsert(t, 3, 9)}, want: outcome{Kind: KindNotFound}},
		{name: "upsert after the failures", ctx: ctx, coll: "a", ops: []writeOp{testUpsert(t, 4, 4)}, want: outcome{Ops: []uint64{3}}},
	}
	batch := make([]*writeReq, len(reqs))
	for i, r := range reqs {
		batch[i] = &writeReq{ctx: r.ctx, name: r.coll, ops: r.ops, done: make(chan struct{})}
		batch[i].state.Store(reqQueued)
	}
	db.commitGroup(batch)
	for i, r := range reqs {
		t.Run(r.name, func(t *testing.T) {
			<-batch[i].done
			var got outcome
			for _, res := range batch[i].res {
				got.Ops = append(got.Ops, res.GetOperationId())
			}
			var e *Error
			if errors.As(batch[i].err, &e) {
				got.Kind = e.Kind
			} else if batch[i].err != nil {
				t.Fatalf("error %v is not an *Error", batch[i].err)
			}
			if diff := cmp.Diff(r.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	check := func(db *DB) {
		t.Helper()
		for _, tc := range []struct {
			coll    string
			payload map[uint64]int64
			byIndex map[int64]uint64
		}{
			{coll: "a", payload: map[uint64]int64{1: 1, 4: 4}, byIndex: map[int64]uint64{1: 1, 4: 1}},
			{coll: "b", payload: map[uint64]int64{7: 4}, byIndex: map[int64]uint64{4: 1}},
		} {
			p, ix := gens(t, db, tc.coll)
			if diff := cmp.Diff(tc.payload, p); diff != "" {
				t.Errorf("%s payloads (-want +got):\n%s", tc.coll, diff)
			}
			if diff := cmp.Diff(tc.byIndex, ix); diff != "" {
				t.Errorf("%s index (-want +got):\n%s", tc.coll, diff)
			}
		}
	}
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check(testDB(t, dir))
}

// TestFailedPayloadWriteReloadsNothing: the access flush's set_payload on
// a point deleted meanwhile fails; grouped with an upsert to another
// collection, it must not make that collection reload from disk (a scan of
// all its points, under its lock), as it would if it ran after the upsert.
func TestFailedPayloadWriteReloadsNothing(t *testing.T) {
	db := testDB(t, t.TempDir())
	testColl(t, db, "big")
	testColl(t, db, "a")
	ctx := context.Background()
	big, err := db.collection("big")
	if err != nil {
		t.Fatal(err)
	}
	before := reflect.ValueOf(big.slots).Pointer()
	batch := []*writeReq{
		{ctx: ctx, name: "big", ops: []writeOp{testUpsert(t, 1, 1)}, done: make(chan struct{})},
		{ctx: ctx, name: "a", ops: []writeOp{testSetGen(t, 5, 99)}, done: make(chan struct{})},
	}
	db.commitGroup(batch)
	if batch[0].err != nil || batch[1].err == nil {
		t.Fatalf("outcomes %v, %v: want the upsert done and the payload write refused", batch[0].err, batch[1].err)
	}
	if after := reflect.ValueOf(big.slots).Pointer(); after != before {
		t.Error("the upsert's collection was reloaded from disk after the other request failed")
	}
}

// Between the commit of a payload-only write and its apply, readers do
// not wait for the writer and see the write not at all: payloads, index
// answers and versions are all the old ones.
func TestPayloadWriteInvisibleUntilApplied(t *testing.T) {
	db := testDB(t, t.TempDir())
	testColl(t, db, "a")
	ctx := context.Background()
	if _, err := db.write(ctx, "a", testUpsert(t, 1, 1)); err != nil {
		t.Fatal(err)
	}
	version := func() uint64 {
		pts, err := db.Query(ctx, &qdrant.QueryPoints{CollectionName: "a", Query: qdrant.NewQueryDense([]float32{1, 0})})
		if err != nil || len(pts) != 1 {
			t.Fatalf("query: %v, %d points", err, len(pts))
		}
		return pts[0].GetVersion()
	}
	before := version()
	var during struct {
		payload map[uint64]int64
		index   map[int64]uint64
		version uint64
	}
	db.commits.afterCommit = func() {
		during.payload, during.index = gens(t, db, "a")
		during.version = version()
	}
	if _, err := db.write(ctx, "a", testSetGen(t, 2, 1)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[uint64]int64{1: 1}, during.payload); diff != "" {
		t.Errorf("payload between commit and apply (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int64]uint64{1: 1}, during.index); diff != "" {
		t.Errorf("index between commit and apply (-want +got):\n%s", diff)
	}
	if during.version != before {
		t.Errorf("version between commit and apply = %d, want %d", during.version, before)
	}
	db.commits.afterCommit = nil
	p, ix := gens(t, db, "a")
	if diff := cmp.Diff(map[uint64]int64{1: 2}, p); diff != "" {
		t.Errorf("payload after (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int64]uint64{2: 1}, ix); diff != "" {
		t.Errorf("index after (-want +got):\n%s", diff)
	}
	if v := version(); v == before {
		t.Errorf("version after = %d, still the old one", v)
	}
}

// A write that must lock a collection does not join a group that has
// payload writes pending on it without the lock: it goes to the next
// commit, so those payload writes keep readers running through theirs.
func TestGroupSplitsBeforeLockingAfterPayloadWrites(t *testing.T) {
	db := testDB(t, t.TempDir())
	testColl(t, db, "a")
	testColl(t, db, "b")
	ctx := context.Background()
	if _, err := db.write(ctx, "a", testUpsert(t, 1, 0)); err != nil {
		t.Fatal(err)
	}
	commits := 0
	db.commits.afterCommit = func() { commits++ }
	reqs := []struct {
		coll string
		op   writeOp
	}{
		{coll: "a", op: testSetGen(t, 1, 1)},
		{coll: "b", op: testUpsert(t, 5, 5)}, // another collection: same group
		{coll: "a", op: testSetGen(t, 2, 1)}, // by id: same group
		{coll: "a", op: testUpsert(t, 2, 3)}, // needs the lock: next group
		{coll: "a", op: testSetGen(t, 4, 1)}, // payload writes run first: same group as the others
	}
	batch := make([]*writeReq, len(reqs))
	for i, r := range reqs {
		batch[i] = &writeReq{ctx: ctx, name: r.coll, ops: []writeOp{r.op}, done: make(chan struct{})}
	}
	db.commitGroup(batch)
	var got []uint64
	for _, r := range batch {
		<-r.done
		if r.err != nil {
			t.Fatal(r.err)
		}
		got = append(got, r.res[0].GetOperationId())
	}
	if diff := cmp.Diff([]uint64{3, 2, 4, 6, 5}, got); diff != "" {
		t.Errorf("operation ids (-want +got):\n%s", diff)
	}
	if commits != 2 {
		t.Errorf("%d commits, want 2", commits)
	}
	p, ix := gens(t, db, "a")
	if diff := cmp.Diff(map[uint64]int64{1: 4, 2: 3}, p); diff != "" {
		t.Errorf("payloads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int64]uint64{4: 1, 3: 1}, ix); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}
}

// Many failures in one group: each gets its error, every other request
// commits, in order.
func TestGroupWithManyFailures(t *testing.T) {
	db := testDB(t, t.TempDir())
	testColl(t, db, "a")
	ctx := context.Background()
	if _, err := db.write(ctx, "a", testUpsert(t, 1, 0)); err != nil {
		t.Fatal(err)
	}
	const n = 60
	batch := make([]*writeReq, n)
	for i := range batch {
		op := testSetGen(t, int64(i), 1)
		if i%2 == 1 {
			op = testSetGen(t, int64(i), 1000+uint64(i)) // no such point
		}
		batch[i] = &writeReq{ctx: ctx, name: "a", ops: []writeOp{op}, done: make(chan struct{})}
	}
	db.commitGroup(batch)
	next := uint64(3) // after the index (1) and the upsert (2)
	for i, r := range batch {
		<-r.done
		var e *Error
		switch {
		case i%2 == 1:
			if !errors.As(r.err, &e) || e.Kind != KindNotFound {
				t.Fatalf("request %d: %v, want NotFound", i, r.err)
			}
		case r.err != nil:
			t.Fatalf("request %d: %v", i, r.err)
		default:
			if got := r.res[0].GetOperationId(); got != next {
				t.Fatalf("request %d: operation %d, want %d", i, got, next)
			}
			next++
		}
	}
	p, _ := gens(t, db, "a")
	if diff := cmp.Diff(map[uint64]int64{1: n - 2}, p); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
}

// TestPanickingWriteFailsAlone: a write that panics on the committer fails
// with an internal error, the process and the other writes of its group
// carry on, and the collection it had changed is back to what disk holds.
func TestPanickingWriteFailsAlone(t *testing.T) {
	db := testDB(t, t.TempDir())
	testColl(t, db, "a")
	ctx := context.Background()
	boom := structural(func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		panic("a bug")
	})
	batch := []*writeReq{
		{ctx: ctx, name: "a", ops: []writeOp{testUpsert(t, 1, 1), boom}, done: make(chan struct{})},
		{ctx: ctx, name: "a", ops: []writeOp{testUpsert(t, 2, 2)}, done: make(chan struct{})},
	}
	db.commitGroup(batch)
	var e *Error
	if !errors.As(batch[0].err, &e) || e.Kind != KindInternal || strings.Contains(e.Msg, "a bug") {
		t.Fatalf("panicking write: %v, want an internal error without the panic's text", batch[0].err)
	}
	if batch[1].err != nil {
		t.Fatalf("the other write: %v", batch[1].err)
	}
	p, _ := gens(t, db, "a")
	if diff := cmp.Diff(map[uint64]int64{2: 2}, p); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
	if _, err := db.write(ctx, "a", testUpsert(t, 3, 3)); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
}
