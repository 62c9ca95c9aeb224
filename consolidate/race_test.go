package consolidate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// hookedStore is the job's store with a hook around its tier writes: what
// another writer does in the window of the race under test.
type hookedStore struct {
	*qdrant.Client
	mu     sync.Mutex
	before func(req *qdrant.UpdateBatchPoints) // before the write
	after  func(req *qdrant.UpdateBatchPoints) // between the write and the read-back
}

var _ consolidate.Store = (*hookedStore)(nil)

func (s *hookedStore) UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error) {
	s.mu.Lock()
	before, after := s.before, s.after
	s.mu.Unlock()
	if before != nil {
		before(req)
	}
	res, err := s.Client.UpdateBatch(ctx, req)
	if err == nil && after != nil {
		after(req)
	}
	return res, err
}

// touched are the ids of a batch's compare-and-set writes.
func touched(req *qdrant.UpdateBatchPoints) []*qdrant.PointId {
	var ids []*qdrant.PointId
	for _, op := range req.GetOperations() {
		for _, c := range op.GetSetPayload().GetPointsSelector().GetFilter().GetMust() {
			ids = append(ids, c.GetHasId().GetHasId()...)
		}
	}
	return ids
}

// flush is an access recorder's flush of last_accessed_at on ids. The time
// is older than every observation, so it changes the stored value without
// changing any memory's tier.
func (h *harness) flush(t testing.TB, ids []*qdrant.PointId, at time.Time) {
	t.Helper()
	if len(ids) == 0 {
		return
	}
	wait := true
	_, err := h.client.SetPayload(context.Background(), &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
		Payload:        map[string]*qdrant.Value{h.codec.Key(memory.FieldLastAccessedAt): qdrant.NewValueString(memory.FormatTime(at))},
		PointsSelector: qdrant.NewPointsSelector(ids...)})
	if err != nil {
		t.Error(err)
	}
}

// A recorder flush landing between the job's write and its read-back does
// not undo the transition: it is audited once, and the next run neither
// redoes nor audits it again.
func TestFlushAfterTheWriteIsStillAudited(t *testing.T) {
	h := newHarness(t)
	ids := h.seed(t, 40)
	now := t0.Add(24 * time.Hour)
	h.clock.set(now)
	st := &hookedStore{Client: h.client}
	long := t0.Add(-20 * 365 * 24 * time.Hour)
	n := 0
	st.after = func(req *qdrant.UpdateBatchPoints) {
		n++
		h.flush(t, touched(req), long.Add(time.Duration(n)*time.Minute))
	}
	cfg := consolidate.DefaultConfig()
	cfg.Rate, cfg.BatchSize = 0, 8
	j, err := consolidate.New(st, consolidate.Options{Config: cfg, Codec: h.codec, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := j.Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conflicts != 0 || rep.Audited == 0 || rep.Audited != rep.Written {
		t.Errorf("report %+v: want every write audited, no conflicts", rep)
	}
	st.after = nil
	again, err := h.job(t, consolidate.Config{}, "r2").Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil || again.Written != 0 || again.Audited != 0 {
		t.Errorf("second run: %+v, %v; want nothing left", again, err)
	}
	recs := h.tierRecords(t, "tier")
	for _, id := range ids {
		m, _ := h.get(t, id)
		want := 0
		if m.Tier != scoring.TierActive {
			want = 1
		}
		if recs[id] != want {
			t.Errorf("%s (%s): %d audit records, want %d", id, m.Tier, recs[id], want)
		}
	}

	// A reviewer's archive with a flush in the same window says archived,
	// and has its record.
	target := ""
	for _, id := range ids {
		if m, _ := h.get(t, id); m.Tier == scoring.TierStale {
			target = id
			break
		}
	}
	if target == "" {
		t.Fatal("the seed left no stale memory")
	}
	st.after = func(req *qdrant.UpdateBatchPoints) { h.flush(t, touched(req), long) }
	out, err := j.Archive(context.Background(), consolidate.ArchiveRequest{Collection: "mem", ID: target})
	if err != nil || !out.Archived {
		t.Errorf("archive: %+v, %v; want archived", out, err)
	}
	if n := h.tierRecords(t, "archive")[target]; n != 1 {
		t.Errorf("%d archive records, want 1", n)
	}
}

// Two replicas decide the same transition from different values (a flush
// landed between their reads): only the one whose write applied audits it,
// so the transition has one record, not one per replica.
func TestRacingReplicasAuditOnce(t *testing.T) {
	h := newHarness(t)
	ids := h.seed(t, 24)
	now := t0.Add(24 * time.Hour)
	h.clock.set(now)
	cfg := consolidate.DefaultConfig()
	cfg.Rate = 0
	other := h.job(t, cfg, "r2")
	st := &hookedStore{Client: h.client}
	long := t0.Add(-20 * 365 * 24 * time.Hour)
	// Before r1 writes what it read, a flush changes the memories and r2
	// consolidates them from the new values: r1's compare-and-set finds
	// them changed, and its read-back finds r2's transitions.
	st.before = func(req *qdrant.UpdateBatchPoints) {
		st.mu.Lock()
		st.before = nil
		st.mu.Unlock()
		h.flush(t, touched(req), long)
		if _, err := other.Run(context.Background(), consolidate.Request{Collection: "mem"}); err != nil {
			t.Error(err)
		}
	}
	j, err := consolidate.New(st, consolidate.Options{Config: cfg, Codec: h.codec, Replica: "r1", Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := j.Run(context.Background(), consolidate.Request{Collection: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Audited != 0 || rep.Conflicts == 0 {
		t.Errorf("r1's report %+v: want its writes lost to r2's, none audited", rep)
	}
	recs := h.tierRecords(t, "tier")
	for _, id := range ids {
		m, _ := h.get(t, id)
		want := 0
		if m.Tier != scoring.TierActive {
			want = 1
		}
		if recs[id] != want {
			t.Errorf("%s (%s): %d audit records, want %d", id, m.Tier, recs[id], want)
		}
	}
}

// failingStore refuses every tier write with err.
type failingStore struct {
	*qdrant.Client
	err error
}

func (s *failingStore) UpdateBatch(context.Context, *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error) {
	return nil, s.err
}

// Qdrant's strict mode refuses the compare-and-set's filters on unindexed
// fields; the job's error says so and what to do, other errors stay as
// they are.
func TestStrictModeRefusalIsNamed(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		strict bool
	}{
		{"index required", status.Error(codes.InvalidArgument, `Bad request: Index required but not found for "observations" `+
			`of one of the following types: [integer]. Help: Create an index for this key or use a different filter.`), true},
		{"other refusal", status.Error(codes.InvalidArgument, "Bad request: something else"), false},
	}
	h := newHarness(t)
	h.seed(t, 6)
	h.clock.set(t0.Add(24 * time.Hour))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, err := consolidate.New(&failingStore{Client: h.client, err: tc.err}, consolidate.Options{Config: consolidate.DefaultConfig(),
				Codec: h.codec, Now: h.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			_, err = j.Run(context.Background(), consolidate.Request{Collection: "mem"})
			if err == nil {
				t.Fatal("the run succeeded on a store that refuses writes")
			}
			if got := errors.Is(err, consolidate.ErrIndexRequired); got != tc.strict {
				t.Errorf("errors.Is(%v, ErrIndexRequired) = %v, want %v", err, got, tc.strict)
			}
			if tc.strict && (!strings.Contains(err.Error(), "create payload indexes") || !strings.Contains(err.Error(), "strict mode")) {
				t.Errorf("%v: want the fix named", err)
			}
			// The store's own error stays in the chain, for the logs.
			var se interface{ GRPCStatus() *status.Status }
			if !errors.As(err, &se) || se.GRPCStatus().Code() != codes.InvalidArgument {
				t.Errorf("%v: the store's error is not in the chain", err)
			}
		})
	}
}
