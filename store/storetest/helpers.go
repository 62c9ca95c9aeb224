package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
)

const (
	// opTimeout bounds every call a case makes, so a store that hangs fails the case instead of
	// the whole test binary.
	opTimeout = time.Minute
	// cleanupTimeout bounds the collection deletes that run after a case, when its own context
	// is already cancelled.
	cleanupTimeout = 30 * time.Second
)

// waitApplied is passed on every write: with wait=false Qdrant acknowledges after its WAL write
// and reports later failures only in its log, so neither read-your-writes nor errors would hold.
func waitApplied() *bool { return qdrant.PtrOf(true) }

// connect returns a client to the target and closes it when the test ends.
func connect(t testing.TB, target Target) *qdrant.Client {
	t.Helper()
	c := target.Connect(t)
	if c == nil {
		t.Fatal("Target.Connect returned a nil client")
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close client: %v", err)
		}
	})
	return c
}

// opContext is the context for a case's calls.
func opContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), opTimeout)
	t.Cleanup(cancel)
	return ctx
}

// collectionName returns a name no other case or run uses, readable enough to trace a leftover
// collection on a shared Qdrant back to its case.
func collectionName(t testing.TB) string {
	var b strings.Builder
	b.WriteString("storetest_")
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	fmt.Fprintf(&b, "_%016x", rand.Uint64())
	return b.String()
}

// createCollection creates a collection with one unnamed dense vector.
func createCollection(t testing.TB, c *qdrant.Client, name string, size uint64, d qdrant.Distance) {
	t.Helper()
	err := c.CreateCollection(opContext(t), &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: size, Distance: d}),
	})
	if err != nil {
		t.Fatalf("create collection %q: %v", name, err)
	}
}

// deleteCollectionAtEnd deletes the collection when the test ends, through whichever client
// client returns then (the persistence case replaces its client on restart). A collection the
// case already deleted is fine.
func deleteCollectionAtEnd(t testing.TB, client func() *qdrant.Client, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, err := client().GetCollectionsClient().Delete(ctx, &qdrant.DeleteCollection{CollectionName: name})
		if err != nil && status.Code(err) != codes.NotFound {
			t.Errorf("delete collection %q after the test: %v", name, err)
		}
	})
}

// newCollection creates a uniquely named collection that is deleted when the test ends.
func newCollection(t testing.TB, c *qdrant.Client, size uint64, d qdrant.Distance) string {
	t.Helper()
	name := collectionName(t)
	createCollection(t, c, name, size, d)
	deleteCollectionAtEnd(t, func() *qdrant.Client { return c }, name)
	return name
}

// payload converts a Go map to a gRPC payload; int and float64 values stay distinct.
func payload(t testing.TB, m map[string]any) map[string]*qdrant.Value {
	t.Helper()
	if m == nil {
		return nil
	}
	p, err := qdrant.TryValueMap(m)
	if err != nil {
		t.Fatalf("payload %v: %v", m, err)
	}
	return p
}

// point builds a point with a dense unnamed vector.
func point(t testing.TB, id *qdrant.PointId, vec []float32, pl map[string]any) *qdrant.PointStruct {
	t.Helper()
	return &qdrant.PointStruct{Id: id, Vectors: qdrant.NewVectorsDense(vec), Payload: payload(t, pl)}
}

func num(n uint64) *qdrant.PointId { return qdrant.NewIDNum(n) }

func ids(ns ...uint64) []*qdrant.PointId {
	out := make([]*qdrant.PointId, len(ns))
	for i, n := range ns {
		out[i] = num(n)
	}
	return out
}

// upsert writes points and waits until they are applied.
func upsert(t testing.TB, c *qdrant.Client, coll string, points ...*qdrant.PointStruct) {
	t.Helper()
	_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(), Points: points})
	if err != nil {
		t.Fatalf("upsert into %q: %v", coll, err)
	}
}

// idString renders a point id the way Qdrant's REST API does: a number, or a UUID string.
func idString(id *qdrant.PointId) string {
	switch v := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return fmt.Sprint(v.Num)
	case *qdrant.PointId_Uuid:
		return v.Uuid
	default:
		return fmt.Sprintf("<invalid id %v>", id)
	}
}

func numStrings(ns ...uint64) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprint(n)
	}
	return out
}

// pointIDs lists the ids of points in the order they came.
func pointIDs[P interface{ GetId() *qdrant.PointId }](points []P) []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = idString(p.GetId())
	}
	return out
}

// sortedIDs lists the ids of points in string order, for results whose order is unspecified.
func sortedIDs[P interface{ GetId() *qdrant.PointId }](points []P) []string {
	out := pointIDs(points)
	slices.Sort(out)
	return out
}

// hit is a search result reduced to what the cases assert.
type hit struct {
	ID    string
	Score float32
}

func hits(points []*qdrant.ScoredPoint) []hit {
	out := make([]hit, len(points))
	for i, p := range points {
		out[i] = hit{ID: idString(p.GetId()), Score: p.GetScore()}
	}
	return out
}

// approx compares float32 scores and vector components computed in float32 arithmetic.
func approx() cmp.Option { return cmpopts.EquateApprox(0, 1e-4) }

// dense returns the unnamed dense vector of a point, nil when it has none.
func dense(v *qdrant.VectorsOutput) []float32 {
	return v.GetVector().GetDenseVector().GetData()
}

// getPoint retrieves one point with payload and vector; it fails the test if the point is absent.
func getPoint(t testing.TB, c *qdrant.Client, coll string, id *qdrant.PointId) *qdrant.RetrievedPoint {
	t.Helper()
	got, err := c.Get(opContext(t), &qdrant.GetPoints{
		CollectionName: coll,
		Ids:            []*qdrant.PointId{id},
		WithPayload:    qdrant.NewWithPayload(true),
		WithVectors:    qdrant.NewWithVectors(true),
	})
	if err != nil {
		t.Fatalf("get point %s from %q: %v", idString(id), coll, err)
	}
	if len(got) != 1 {
		t.Fatalf("get point %s from %q: got %d points, want 1", idString(id), coll, len(got))
	}
	return got[0]
}

// wantPayload compares a point's payload with the expected Go map, keeping ints and floats apart.
func wantPayload(t testing.TB, got map[string]*qdrant.Value, want map[string]any) {
	t.Helper()
	w := payload(t, want)
	if w == nil {
		w = map[string]*qdrant.Value{}
	}
	if got == nil {
		got = map[string]*qdrant.Value{}
	}
	if diff := cmp.Diff(w, got, protocmp.Transform()); diff != "" {
		t.Errorf("payload mismatch (-want +got):\n%s", diff)
	}
}

// wantStatus checks that err is a gRPC status error with the given code whose message contains
// text. go-client wraps server errors in *qdrant.QdrantError; status.Code sees through it.
func wantStatus(t testing.TB, err error, code codes.Code, text string) {
	t.Helper()
	if err == nil {
		t.Errorf("got no error, want %v containing %q", code, text)
		return
	}
	if got := status.Code(err); got != code {
		t.Errorf("got code %v, want %v (error: %v)", got, code, err)
	}
	if !strings.Contains(err.Error(), text) {
		t.Errorf("error %q does not contain %q", err.Error(), text)
	}
}

// skipIfUnimplemented skips a case that exercises a method outside the suite's required set
// (the methods memrank uses) when the target does not implement it, naming the method so the
// gap stays visible in verbose output. Real Qdrant implements every method.
func skipIfUnimplemented(t testing.TB, err error, method string) {
	t.Helper()
	if status.Code(err) == codes.Unimplemented {
		t.Skipf("target does not implement %s (real Qdrant does): %v", method, err)
	}
}

// wantQdrantError checks that a go-client high-level call wrapped its error.
func wantQdrantError(t testing.TB, err error) {
	t.Helper()
	var qe *qdrant.QdrantError
	if !errors.As(err, &qe) {
		t.Errorf("error %v (%T) is not a *qdrant.QdrantError", err, err)
	}
}

// count returns the exact number of points matching filter (nil: all points).
func count(t testing.TB, c *qdrant.Client, coll string, filter *qdrant.Filter) uint64 {
	t.Helper()
	n, err := c.Count(opContext(t), &qdrant.CountPoints{CollectionName: coll, Filter: filter, Exact: qdrant.PtrOf(true)})
	if err != nil {
		t.Fatalf("count in %q: %v", coll, err)
	}
	return n
}

// scrollAll returns every point matching filter, following next_page_offset, with payloads.
// The loop is bounded by the number of pages a collection of maxPoints could need.
func scrollAll(t testing.TB, c *qdrant.Client, coll string, filter *qdrant.Filter) []*qdrant.RetrievedPoint {
	t.Helper()
	const pageSize, maxPoints = 64, 100_000
	var all []*qdrant.RetrievedPoint
	var offset *qdrant.PointId
	for range maxPoints/pageSize + 1 {
		page, next, err := c.ScrollAndOffset(opContext(t), &qdrant.ScrollPoints{
			CollectionName: coll,
			Filter:         filter,
			Offset:         offset,
			Limit:          qdrant.PtrOf(uint32(pageSize)),
			WithPayload:    qdrant.NewWithPayload(true),
		})
		if err != nil {
			t.Fatalf("scroll %q: %v", coll, err)
		}
		all = append(all, page...)
		if next == nil {
			return all
		}
		offset = next
	}
	t.Fatalf("scroll %q: still a next page after %d points", coll, maxPoints)
	return nil
}
