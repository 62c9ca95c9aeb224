package store_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/store"
)

func TestMain(m *testing.M) {
	// The crash test re-executes this binary as a store server.
	if dir := os.Getenv(crashServerEnv); dir != "" {
		os.Exit(runCrashServer(dir))
	}
	goleak.VerifyTestMain(m)
}

func openDB(t testing.TB, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

func newDB(t testing.TB) *store.DB {
	t.Helper()
	return openDB(t, t.TempDir())
}

func createColl(t testing.TB, db *store.DB, name string, dim uint64, d qdrant.Distance) {
	t.Helper()
	err := db.CreateCollection(context.Background(), &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: dim, Distance: d}),
	})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

type pt struct {
	id      *qdrant.PointId
	vec     []float32
	payload map[string]any
}

func num(n uint64) *qdrant.PointId { return qdrant.NewIDNum(n) }

func upsert(t testing.TB, db *store.DB, coll string, pts ...pt) *qdrant.UpdateResult {
	t.Helper()
	req := &qdrant.UpsertPoints{CollectionName: coll}
	for _, p := range pts {
		req.Points = append(req.Points, &qdrant.PointStruct{Id: p.id, Vectors: qdrant.NewVectorsDense(p.vec), Payload: valueMap(t, p.payload)})
	}
	res, err := db.Upsert(context.Background(), req)
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
	return res
}

// valueMap converts a Go map to payload values; float64 becomes a double,
// int an integer.
func valueMap(t testing.TB, m map[string]any) map[string]*qdrant.Value {
	t.Helper()
	if m == nil {
		return nil
	}
	out := make(map[string]*qdrant.Value, len(m))
	for k, v := range m {
		val, err := qdrant.NewValue(v)
		if err != nil {
			t.Fatalf("payload %s: %v", k, err)
		}
		out[k] = val
	}
	return out
}

func ids(pts []*qdrant.ScoredPoint) []string {
	out := make([]string, len(pts))
	for i, p := range pts {
		out[i] = idString(p.GetId())
	}
	return out
}

func retrievedIDs(pts []*qdrant.RetrievedPoint) []string {
	out := make([]string, len(pts))
	for i, p := range pts {
		out[i] = idString(p.GetId())
	}
	return out
}

func idString(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	pid, _ := store.PointIDFromProto(id)
	return pid.String()
}

// grpcStatus returns the status an error carries, looking through wrappers
// (go-client wraps statuses in QdrantError, and status.FromError would then
// replace the message with the wrapper's text).
func grpcStatus(err error) *status.Status {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus()
	}
	return status.New(codes.Unknown, err.Error())
}

// wantStatus checks an error's gRPC code and exact message.
func wantStatus(t testing.TB, err error, code codes.Code, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v %q", code, msg)
	}
	st := grpcStatus(err)
	if st.Code() != code || (msg != "" && st.Message() != msg) {
		t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), code, msg)
	}
}

func query(t testing.TB, db *store.DB, req *qdrant.QueryPoints) []*qdrant.ScoredPoint {
	t.Helper()
	res, err := db.Query(context.Background(), req)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return res
}
