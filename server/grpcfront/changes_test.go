package grpcfront

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCollectionsChanged: every call that may make a collection name
// stand for other points tells CollectionsChanged before its answer
// arrives; point reads and writes do not.
func TestCollectionsChanged(t *testing.T) {
	_, up := openStore(t)
	var n atomic.Int64
	addr := startFront(t, up, Config{CollectionsChanged: func() { n.Add(1) }})
	c := client(t, addr, qdrant.Config{})
	ctx := testCtx(t)
	wait := true
	tests := []struct {
		name    string
		call    func() error
		changes bool
	}{
		{name: "create", changes: true, call: func() error {
			return c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "a",
				VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})})
		}},
		{name: "upsert", call: func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "a", Wait: &wait,
				Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1, 0})}}})
			return err
		}},
		{name: "query", call: func() error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "a", Query: qdrant.NewQueryDense([]float32{1, 0})})
			return err
		}},
		{name: "update", changes: true, call: func() error {
			return c.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: "a",
				OptimizersConfig: &qdrant.OptimizersConfigDiff{IndexingThreshold: qdrant.PtrOf(uint64(1000))}})
		}},
		{name: "alias", changes: true, call: func() error {
			return c.CreateAlias(ctx, "live", "a")
		}},
		{name: "delete", changes: true, call: func() error { return c.DeleteCollection(ctx, "a") }},
		{name: "delete again (fails)", changes: true, call: func() error { _ = c.DeleteCollection(ctx, "a"); return nil }},
	}
	for _, tc := range tests {
		before := n.Load()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The answer has arrived: whatever the front calls, it has called.
		if got := n.Load() > before; got != tc.changes {
			t.Errorf("%s: CollectionsChanged called %v, want %v", tc.name, got, tc.changes)
		}
	}
}

// TestCollectionsUnsettled: a collection change sent upstream that ends
// without the upstream's answer, or with a status that does not say it was
// refused, tells CollectionsUnsettled instead of CollectionsChanged before
// the caller gets its status: the upstream may still apply it. One that
// never went upstream tells neither, whatever its status.
func TestCollectionsUnsettled(t *testing.T) {
	var answer atomic.Value // codes.Code; Canceled here: wait for the call to end
	up := &fakeUpstream{answer: func(ctx context.Context, _ string) error {
		switch c := answer.Load().(codes.Code); c {
		case codes.OK:
			return nil
		case codes.Canceled:
			select { // bounded: the test ends even if the call does not
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
			}
			return status.Error(codes.Unavailable, "the fake gave up")
		default:
			return status.Error(c, "upstream says "+c.String())
		}
	}}
	addr := startFake(t, up)
	var changed, unsettled atomic.Int64
	front := startFront(t, addr, Config{LongCallTimeout: 100 * time.Millisecond, CallTimeout: 100 * time.Millisecond,
		CollectionsChanged:   func() { changed.Add(1) },
		CollectionsUnsettled: func() { unsettled.Add(1) }})
	c := client(t, front, qdrant.Config{})
	ctx := testCtx(t)
	create := func(ctx context.Context) error {
		return c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "a",
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})})
	}
	tests := []struct {
		name     string
		upstream codes.Code
		// call, when set, replaces a create with the test's context.
		call      func() error
		unsettled bool
		untold    bool // neither hook is called
		// callerGone: the caller has its status before the front ends the
		// call, so the hook is waited for.
		callerGone bool
	}{
		{name: "applied", upstream: codes.OK},
		{name: "already exists", upstream: codes.AlreadyExists},
		{name: "bad request", upstream: codes.InvalidArgument},
		{name: "rate limited", upstream: codes.ResourceExhausted},
		{name: "the front's deadline", upstream: codes.Canceled, unsettled: true, call: func() error {
			return create(context.Background()) // no deadline of the caller's: the front's budget applies
		}},
		{name: "the caller cancelled", upstream: codes.Canceled, unsettled: true, callerGone: true, call: func() error {
			ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			return create(ctx)
		}},
		{name: "upstream timed out", upstream: codes.DeadlineExceeded, unsettled: true},
		{name: "upstream unavailable", upstream: codes.Unavailable, unsettled: true},
		{name: "upstream failed", upstream: codes.Internal, unsettled: true},
		{name: "no request message, never sent upstream", upstream: codes.OK, untold: true, call: func() error {
			s, err := dial(t, front).NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, "/qdrant.Collections/Delete")
			if err != nil {
				return err
			}
			if err := s.CloseSend(); err != nil {
				return err
			}
			return s.RecvMsg(new(qdrant.CollectionOperationResponse))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answer.Store(tc.upstream)
			changed.Store(0)
			unsettled.Store(0)
			call := tc.call
			if call == nil {
				call = func() error { return create(ctx) }
			}
			err := call()
			if tc.name != "applied" && err == nil {
				t.Fatal("the call succeeded")
			}
			if tc.callerGone {
				for deadline := time.Now().Add(5 * time.Second); unsettled.Load()+changed.Load() == 0 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
			}
			// Otherwise the status has arrived: whatever the front calls,
			// it has called.
			if got := unsettled.Load() > 0; got != tc.unsettled {
				t.Errorf("CollectionsUnsettled called %v, want %v (status %v)", got, tc.unsettled, status.Code(err))
			}
			if got, want := changed.Load() > 0, !tc.unsettled && !tc.untold; got != want {
				t.Errorf("CollectionsChanged called %v, want %v", got, want)
			}
		})
	}
}
