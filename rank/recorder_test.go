package rank_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
)

// access is one Record call.
type access struct {
	coll   string
	id     uint64
	stored int64 // storedOwn
}

func recordAll(r *rank.Recorder, as ...access) {
	for _, a := range as {
		coll := a.coll
		if coll == "" {
			coll = "mem"
		}
		r.Record(coll, qdrant.NewIDNum(a.id), a.stored)
	}
}

func repeat(n int, a access) []access {
	out := make([]access, n)
	for i := range out {
		out[i] = a
	}
	return out
}

func concat(parts ...[]access) []access {
	var out []access
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestRecorderWrites: increments coalesce per (collection, id) into one
// write of the running total under the replica's key, and one write of
// last_accessed_at.
func TestRecorderWrites(t *testing.T) {
	dst := &fakePayloads{}
	rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow; c.ReplicaID = "replica_1-x" })
	recordAll(rec, concat(repeat(3, access{id: 1}), repeat(2, access{id: 2}), []access{{coll: "other", id: 1}})...)
	rec.Record("mem", qdrant.NewID("8F9A3A8E-5B63-4F0A-9C43-1D1D7C1C2B11"), 0)
	rec.Record("mem", qdrant.NewID("8f9a3a8e-5b63-4f0a-9c43-1d1d7c1c2b11"), 0) // the same point
	if got := rec.Pending(); got != 4 {
		t.Errorf("Pending %d, want 4", got)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.Pending(); got != 0 {
		t.Errorf("Pending %d after a flush, want 0", got)
	}
	want := map[string]map[string]int64{
		"mem/1": {"replica_1-x": 3}, "mem/2": {"replica_1-x": 2}, "other/1": {"replica_1-x": 1},
		"mem/8F9A3A8E-5B63-4F0A-9C43-1D1D7C1C2B11": {"replica_1-x": 2},
	}
	if diff := cmp.Diff(want, dst.totals()); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	// The exact requests of one point.
	wait := true
	key := "access_counts"
	wantReqs := []*qdrant.SetPayloadPoints{
		{
			CollectionName: "mem", Wait: &wait, Key: &key,
			Payload:        map[string]*qdrant.Value{"replica_1-x": qdrant.NewValueInt(2)},
			PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(2)),
		},
		{
			CollectionName: "mem", Wait: &wait,
			Payload:        map[string]*qdrant.Value{"last_accessed_at": qdrant.NewValueString(memory.FormatTime(now))},
			PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(2)),
		},
	}
	var got []*qdrant.SetPayloadPoints
	for _, c := range dst.calls {
		if c.GetCollectionName() == "mem" && c.GetPointsSelector().GetPoints().GetIds()[0].GetNum() == 2 {
			got = append(got, c)
		}
	}
	if diff := cmp.Diff(wantReqs, got, protocmp.Transform()); diff != "" {
		t.Errorf("requests of point 2 (-want +got):\n%s", diff)
	}
	if got := dst.attempts(); got != 8 {
		t.Errorf("%d SetPayload calls, want 8 (two per point)", got)
	}
	st := rec.Stats()
	if st.Recorded != 8 || st.Written != 4 || st.Failed != 0 {
		t.Errorf("stats %+v, want 8 recorded, 4 written", st)
	}
	// Nothing pending: a flush writes nothing.
	if err := rec.Flush(context.Background()); err != nil || dst.attempts() != 8 {
		t.Errorf("empty flush: %v, %d calls", err, dst.attempts())
	}
}

// TestRecorderTotals: the running total across flushes, stale reads and
// restarts.
func TestRecorderTotals(t *testing.T) {
	tests := []struct {
		name string
		// rounds of accesses, each followed by a flush; restart before a
		// round starts a new Recorder on the same destination.
		rounds  [][]access
		restart []bool
		want    int64
	}{
		{name: "first accesses", rounds: [][]access{repeat(3, access{id: 1})}, want: 3},
		{name: "stored value is the base", rounds: [][]access{repeat(2, access{id: 1, stored: 10})}, want: 12},
		{name: "the highest stored value read wins", rounds: [][]access{{{id: 1, stored: 4}, {id: 1, stored: 10}, {id: 1, stored: 7}}}, want: 13},
		{name: "totals run on across flushes", rounds: [][]access{repeat(2, access{id: 1}), repeat(3, access{id: 1, stored: 2})}, want: 5},
		{
			name:   "a stale read never pulls the total back",
			rounds: [][]access{repeat(5, access{id: 1}), repeat(2, access{id: 1, stored: 0}), {{id: 1, stored: 3}}},
			want:   8,
		},
		{
			name:    "a restart continues from the stored total",
			rounds:  [][]access{repeat(5, access{id: 1}), repeat(2, access{id: 1, stored: 5})},
			restart: []bool{false, true},
			want:    7,
		},
		{
			name:    "a restart with a stale read loses nothing it can know",
			rounds:  [][]access{repeat(4, access{id: 1, stored: 6}), {{id: 1, stored: 10}, {id: 1, stored: 9}}},
			restart: []bool{false, true},
			want:    12,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, nil)
			for i, round := range tc.rounds {
				if i < len(tc.restart) && tc.restart[i] {
					if err := rec.Shutdown(context.Background()); err != nil {
						t.Fatal(err)
					}
					rec = newRecorder(t, dst, nil)
				}
				recordAll(rec, round...)
				if err := rec.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if got := dst.totals()["mem/1"]["a"]; got != tc.want {
				t.Errorf("total %d, want %d", got, tc.want)
			}
		})
	}
}

// TestRecorderMaxPending: past MaxPending distinct points, new points'
// increments are dropped and counted; points already pending still count.
func TestRecorderMaxPending(t *testing.T) {
	dst := &fakePayloads{}
	rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.MaxPending = 2 })
	recordAll(rec, access{id: 1}, access{id: 2}, access{id: 3}, access{id: 1}, access{id: 4}, access{id: 2}, access{id: 3})
	if st := rec.Stats(); st.DroppedCap != 3 || st.Recorded != 4 {
		t.Errorf("stats %+v, want 3 dropped at the cap, 4 recorded", st)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The flush emptied the map: room again.
	recordAll(rec, access{id: 3})
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{"mem/1": {"a": 2}, "mem/2": {"a": 2}, "mem/3": {"a": 1}}
	if diff := cmp.Diff(want, dst.totals()); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

// TestRecorderRetries: a failed write is counted and retried at the next
// flush with the same total (plus what was recorded since); a deleted
// point is given up.
func TestRecorderRetries(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "upstream down")
	tests := []struct {
		name       string
		fail       func(req *qdrant.SetPayloadPoints) error
		between    []access // recorded after the failed flush
		wantFailed int64
		wantGone   int64
		wantTries  []int64 // access_counts totals attempted for point 1, in order
		want       map[string]map[string]int64
	}{
		{
			name:       "both writes fail",
			fail:       func(*qdrant.SetPayloadPoints) error { return unavailable },
			wantFailed: 1, wantTries: []int64{3, 3},
			want: map[string]map[string]int64{"mem/1": {"a": 3}},
		},
		{
			name: "the total is written, last_accessed_at fails",
			fail: func(req *qdrant.SetPayloadPoints) error {
				if req.Key == nil {
					return unavailable
				}
				return nil
			},
			wantFailed: 1, wantTries: []int64{3, 3},
			want: map[string]map[string]int64{"mem/1": {"a": 3}},
		},
		{
			name:       "accessed again before the retry",
			fail:       func(*qdrant.SetPayloadPoints) error { return unavailable },
			between:    []access{{id: 1}, {id: 1, stored: 1}},
			wantFailed: 1, wantTries: []int64{3, 5},
			want: map[string]map[string]int64{"mem/1": {"a": 5}},
		},
		{
			name:       "deadline exceeded is retried too",
			fail:       func(*qdrant.SetPayloadPoints) error { return context.DeadlineExceeded },
			wantFailed: 1, wantTries: []int64{3, 3},
			want: map[string]map[string]int64{"mem/1": {"a": 3}},
		},
		{
			name:     "a deleted point is given up",
			fail:     func(*qdrant.SetPayloadPoints) error { return status.Error(codes.NotFound, "no point") },
			wantGone: 1, wantTries: []int64{3},
			want: map[string]map[string]int64{},
		},
	}
	t.Run("a point created again after a deletion starts afresh", func(t *testing.T) {
		dst := &fakePayloads{fail: func(*qdrant.SetPayloadPoints) error { return status.Error(codes.NotFound, "no point") }}
		rec := newRecorder(t, dst, nil)
		recordAll(rec, repeat(3, access{id: 1})...)
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		dst.setFail(nil)
		recordAll(rec, access{id: 1})
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := dst.totals()["mem/1"]["a"]; got != 1 {
			t.Errorf("total %d, want 1", got)
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := &fakePayloads{fail: tc.fail}
			rec := newRecorder(t, dst, nil)
			recordAll(rec, repeat(3, access{id: 1})...)
			err := rec.Flush(context.Background())
			if tc.wantFailed > 0 && err == nil {
				t.Errorf("flush with failures returned no error")
			}
			if tc.wantFailed == 0 && err != nil {
				t.Errorf("flush: %v", err)
			}
			st := rec.Stats()
			if st.Failed != tc.wantFailed || st.Gone != tc.wantGone || st.Written != 0 {
				t.Errorf("stats %+v, want failed %d gone %d written 0", st, tc.wantFailed, tc.wantGone)
			}
			dst.setFail(nil)
			recordAll(rec, tc.between...)
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var tries []int64
			for _, c := range dst.calls {
				if c.Key != nil {
					tries = append(tries, c.GetPayload()["a"].GetIntegerValue())
				}
			}
			if diff := cmp.Diff(tc.wantTries, tries); diff != "" {
				t.Errorf("totals attempted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, dst.totals(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecorderFlushesOnInterval: the loop flushes by itself.
func TestRecorderFlushesOnInterval(t *testing.T) {
	dst := &fakePayloads{}
	rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.FlushInterval = 5 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = rec.Start(ctx)
	_ = rec.Start(ctx) // a second Start does nothing
	recordAll(rec, repeat(2, access{id: 7})...)
	if !waitFor(func() bool { return dst.totals()["mem/7"]["a"] == 2 }) {
		t.Fatalf("no flush of the interval; totals %v", dst.totals())
	}
	recordAll(rec, access{id: 7})
	if !waitFor(func() bool { return dst.totals()["mem/7"]["a"] == 3 }) {
		t.Fatalf("no second flush; totals %v", dst.totals())
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond, boundedly (about 20 s at most): the test fails by
// its assertion, not by a timer racing the code under test.
func waitFor(cond func() bool) bool {
	for range 4000 {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

// TestRecorderClose: Close flushes what is pending, is safe twice,
// refuses later accesses (counted) and stops the loop.
func TestRecorderClose(t *testing.T) {
	tests := []struct {
		name  string
		start bool
		fail  bool
	}{
		{name: "started", start: true},
		{name: "never started"},
		{name: "final flush fails", start: true, fail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := &fakePayloads{}
			if tc.fail {
				dst.fail = func(*qdrant.SetPayloadPoints) error { return status.Error(codes.Unavailable, "down") }
			}
			rec := newRecorder(t, dst, nil) // interval of an hour: only Close flushes
			if tc.start {
				_ = rec.Start(context.Background())
			}
			recordAll(rec, repeat(4, access{id: 1})...)
			err1 := rec.Shutdown(context.Background())
			err2 := rec.Shutdown(context.Background())
			if tc.fail != (err1 != nil) {
				t.Errorf("Close: %v, want error %v", err1, tc.fail)
			}
			if !errors.Is(err2, err1) && err1 != err2 {
				t.Errorf("second Close %v, want the first's %v", err2, err1)
			}
			want := map[string]map[string]int64{"mem/1": {"a": 4}}
			if tc.fail {
				want = map[string]map[string]int64{}
			}
			if diff := cmp.Diff(want, dst.totals(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
			recordAll(rec, access{id: 1})
			_ = rec.Start(context.Background()) // after Close: no loop (goleak would see it)
			if st := rec.Stats(); st.DroppedClosed != 1 || st.Recorded != 4 {
				t.Errorf("stats %+v, want 1 dropped after close", st)
			}
		})
	}
}

// TestRecorderRecordNeverBlocks: while a flush is stuck upstream, Record
// goes on, and what it records is written by the next flush on top of the
// stuck one's total.
func TestRecorderRecordNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	dst := &fakePayloads{block: release, entered: make(chan struct{}, 1)}
	rec := newRecorder(t, dst, nil)
	recordAll(rec, repeat(3, access{id: 1})...)
	flushed := make(chan error, 1)
	go func() { flushed <- rec.Flush(context.Background()) }()
	<-dst.entered // the flush is now stuck in SetPayload

	done := make(chan struct{})
	go func() {
		defer close(done)
		// Stale reads too: the stored value is still 0 while the write is
		// in flight.
		recordAll(rec, repeat(500, access{id: 1})...)
		recordAll(rec, access{id: 2})
		_ = rec.Pending()
		_ = rec.Stats()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a watchdog, not a measurement
		t.Fatal("Record blocked behind a stuck flush")
	}
	dst.mu.Lock()
	dst.block = nil
	dst.mu.Unlock()
	close(release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{"mem/1": {"a": 503}, "mem/2": {"a": 1}}
	if diff := cmp.Diff(want, dst.totals()); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

// TestRecorderConcurrent: accesses from many goroutines while flushes run,
// some failing; after Close every access is in the totals, exactly.
func TestRecorderConcurrent(t *testing.T) {
	var mu sync.Mutex
	n := 0
	dst := &fakePayloads{fail: func(*qdrant.SetPayloadPoints) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n%7 == 0 {
			return status.Error(codes.Unavailable, "flaky")
		}
		return nil
	}}
	rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.FlushInterval = time.Millisecond })
	_ = rec.Start(context.Background())
	var wg sync.WaitGroup
	const workers, per, points = 4, 300, 10
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				rec.Record("mem", qdrant.NewIDNum(uint64((w+i)%points)), 0)
				if i%50 == 49 {
					_ = rec.Flush(context.Background()) // failures are retried later
				}
			}
		})
	}
	wg.Wait()
	dst.setFail(nil)
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := rec.Stats(); st.Failed == 0 || st.Recorded != workers*per {
		t.Errorf("stats %+v: want some failed writes and %d recorded", st, workers*per)
	}
	var sum int64
	for _, reps := range dst.totals() {
		sum += reps["a"]
	}
	if sum != workers*per {
		t.Errorf("sum of totals %d, want %d", sum, workers*per)
	}
}

func TestRecorderConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     rank.RecorderConfig
		wantErr bool
	}{
		{name: "minimal", cfg: rank.RecorderConfig{ReplicaID: "host-1_a"}},
		{name: "no replica id", cfg: rank.RecorderConfig{}, wantErr: true},
		{name: "dot in replica id", cfg: rank.RecorderConfig{ReplicaID: "a.b"}, wantErr: true},
		{name: "space in replica id", cfg: rank.RecorderConfig{ReplicaID: "a b"}, wantErr: true},
		{name: "negative interval", cfg: rank.RecorderConfig{ReplicaID: "a", FlushInterval: -time.Second}, wantErr: true},
		{name: "negative max pending", cfg: rank.RecorderConfig{ReplicaID: "a", MaxPending: -1}, wantErr: true},
		{name: "shared keys", cfg: rank.RecorderConfig{ReplicaID: "a", Keys: memory.Keys{AccessCounts: "x", LastAccessedAt: "x"}}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rank.NewRecorder(&fakePayloads{}, tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Errorf("NewRecorder: %v, want error %v", err, tc.wantErr)
			}
		})
	}
	if _, err := rank.NewRecorder(nil, rank.RecorderConfig{ReplicaID: "a"}); err == nil {
		t.Error("NewRecorder(nil) succeeded")
	}
}

// TestRecorderSectionValidate checks the access section as a user writes
// it: the defaults pass, values a user cannot mean fail with the key named.
func TestRecorderSectionValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*rank.RecorderConfig)
		want string // "" = valid
	}{
		{name: "defaults", edit: func(*rank.RecorderConfig) {}},
		{name: "zero interval", edit: func(c *rank.RecorderConfig) { c.FlushInterval = 0 }, want: "flush_interval"},
		{name: "negative interval", edit: func(c *rank.RecorderConfig) { c.FlushInterval = -time.Second }, want: "flush_interval"},
		{name: "zero max pending", edit: func(c *rank.RecorderConfig) { c.MaxPending = 0 }, want: "max_pending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := rank.DefaultRecorderConfig()
			tc.edit(&cfg)
			err := cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestSanitizeReplicaID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"host-1", "host-1"},
		{"pod.ns.svc.cluster.local", "pod-ns-svc-cluster-local"},
		{"Ünïcode_host", "-n-code_host"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := rank.SanitizeReplicaID(tc.in); got != tc.want {
				t.Errorf("SanitizeReplicaID(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestRecorderEndToEnd: two replicas' recorders write their own keys of
// access_counts in the embedded store, leaving the rest of the payload
// alone, and the ranker reads its own stored total back as the base.
func TestRecorderEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem",
		pt{id: 1, vec: vecAt(0.9, 1), payload: memoryPayload("one", 0.9, 1, map[string]any{"legacy": 7})},
		pt{id: 2, vec: vecAt(0.8, 2), payload: memoryPayload("two", 0.9, 1, nil)},
	)
	recA := newRecorder(t, e.client, func(c *rank.RecorderConfig) { c.ReplicaID = "a"; c.Now = fixedNow })
	recB := newRecorder(t, e.client, func(c *rank.RecorderConfig) { c.ReplicaID = "b"; c.Now = fixedNow })
	ra := newRanker(t, e.client, func(c *rank.Config) { c.Recorder = recA })
	rb := newRanker(t, e.client, func(c *rank.Config) { c.Recorder = recB })
	q := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(1)}
	for i, step := range []struct {
		r     *rank.Ranker
		rec   *rank.Recorder
		times int
	}{{ra, recA, 3}, {rb, recB, 2}, {ra, recA, 1}} {
		for range step.times {
			if _, err := step.r.Query(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		if err := step.rec.Flush(context.Background()); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	// A restarted replica a continues from what it stored.
	if err := recA.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	recA2 := newRecorder(t, e.client, func(c *rank.RecorderConfig) { c.ReplicaID = "a"; c.Now = fixedNow })
	ra2 := newRanker(t, e.client, func(c *rank.Config) { c.Recorder = recA2 })
	if _, err := ra2.Query(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if err := recA2.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Deleted points and collections are given up, not retried.
	recA3 := newRecorder(t, e.client, func(c *rank.RecorderConfig) { c.ReplicaID = "a" })
	recA3.Record("mem", qdrant.NewIDNum(999), 0)
	recA3.Record("gone", qdrant.NewIDNum(1), 0)
	if err := recA3.Flush(context.Background()); err != nil {
		t.Errorf("flush to deleted points: %v", err)
	}
	if st := recA3.Stats(); st.Gone != 2 || st.Failed != 0 || recA3.Pending() != 0 {
		t.Errorf("stats %+v, pending %d: want 2 gone, none failed or pending", st, recA3.Pending())
	}
	got := readCounts(t, e, "mem", 1, 2)
	want := map[uint64]storedAccess{
		1: {Counts: map[string]int64{"legacy": 7, "a": 5, "b": 2}, LastAccessed: memory.FormatTime(now), Text: "one"},
		2: {Text: "two"},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

type storedAccess struct {
	Counts       map[string]int64
	LastAccessed string
	Text         string
}

// readCounts reads the access fields of points back from the store.
func readCounts(t testing.TB, e *env, coll string, ids ...uint64) map[uint64]storedAccess {
	t.Helper()
	var pids []*qdrant.PointId
	for _, id := range ids {
		pids = append(pids, qdrant.NewIDNum(id))
	}
	pts, err := e.client.Get(context.Background(), &qdrant.GetPoints{CollectionName: coll, Ids: pids, WithPayload: qdrant.NewWithPayloadEnable(true)})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	out := map[uint64]storedAccess{}
	for _, p := range pts {
		s := storedAccess{Text: p.GetPayload()["text"].GetStringValue(), LastAccessed: p.GetPayload()["last_accessed_at"].GetStringValue()}
		for rep, v := range p.GetPayload()["access_counts"].GetStructValue().GetFields() {
			if s.Counts == nil {
				s.Counts = map[string]int64{}
			}
			if _, ok := v.GetKind().(*qdrant.Value_IntegerValue); !ok {
				t.Errorf("point %d: access_counts.%s = %v, not an integer", p.GetId().GetNum(), rep, v)
			}
			s.Counts[rep] = v.GetIntegerValue()
		}
		out[p.GetId().GetNum()] = s
	}
	if len(out) != len(ids) {
		t.Fatalf("read %d of %d points", len(out), len(ids))
	}
	return out
}

// batchPayloads is fakePayloads with UpdateBatch: each batch is atomic (all
// its operations are recorded as SetPayload calls, or none is).
type batchPayloads struct {
	fakePayloads
	batches   []*qdrant.UpdateBatchPoints
	batchFail func(req *qdrant.UpdateBatchPoints) error
}

func (f *batchPayloads) UpdateBatch(_ context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, proto.Clone(req).(*qdrant.UpdateBatchPoints))
	if f.batchFail != nil {
		if err := f.batchFail(req); err != nil {
			return nil, err
		}
	}
	out := make([]*qdrant.UpdateResult, len(req.GetOperations()))
	for i, op := range req.GetOperations() {
		sp := op.GetSetPayload()
		f.ok = append(f.ok, &qdrant.SetPayloadPoints{CollectionName: req.GetCollectionName(), Wait: req.Wait,
			Payload: sp.GetPayload(), PointsSelector: sp.GetPointsSelector(), Key: sp.Key})
		out[i] = &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}
	}
	return out, nil
}

func (f *batchPayloads) batchCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.batches)
}

var _ rank.BatchPayloads = (*batchPayloads)(nil)

// TestRecorderBatchedFlush: with a writer that has UpdateBatch, a flush
// sends each collection's points in batches of at most FlushBatch (two
// operations a point, one commit upstream), falls back to point-by-point
// writes when a batch is refused (a deleted point must not cost the
// others their counts), and keeps everything pending when the upstream is
// unreachable.
func TestRecorderBatchedFlush(t *testing.T) {
	hasID := func(req *qdrant.UpdateBatchPoints, id uint64) bool {
		for _, op := range req.GetOperations() {
			if op.GetSetPayload().GetPointsSelector().GetPoints().GetIds()[0].GetNum() == id {
				return true
			}
		}
		return false
	}
	t.Run("batches", func(t *testing.T) {
		dst := &batchPayloads{}
		rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow; c.ReplicaID = "r" })
		want := map[string]map[string]int64{}
		for id := 1; id <= rank.FlushBatch+44; id++ {
			rec.Record("mem", qdrant.NewIDNum(uint64(id)), 0)
			want["mem/"+strconv.Itoa(id)] = map[string]int64{"r": 1}
		}
		rec.Record("other", qdrant.NewIDNum(1), 4)
		rec.Record("other", qdrant.NewIDNum(2), 0)
		want["other/1"] = map[string]int64{"r": 5}
		want["other/2"] = map[string]int64{"r": 1}
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, dst.totals()); diff != "" {
			t.Errorf("totals (-want +got):\n%s", diff)
		}
		if got := dst.batchCount(); got != 3 {
			t.Errorf("%d UpdateBatch calls, want 3 (256 + 44 points of mem, 2 of other)", got)
		}
		if got := dst.attempts(); got != 0 {
			t.Errorf("%d single SetPayload calls, want none", got)
		}
		for _, b := range dst.batches {
			if n := len(b.GetOperations()); n > 2*rank.FlushBatch || n%2 != 0 {
				t.Errorf("a batch of %d operations", n)
			}
			if !b.GetWait() {
				t.Error("a batch without wait")
			}
		}
		if got := dst.lastAccessed()["mem/300"]; got != memory.FormatTime(now) {
			t.Errorf("last_accessed_at of mem/300 = %q", got)
		}
	})
	t.Run("a deleted point", func(t *testing.T) {
		dst := &batchPayloads{}
		dst.batchFail = func(req *qdrant.UpdateBatchPoints) error {
			if hasID(req, 7) {
				return status.Error(codes.NotFound, "No point with id 7 found")
			}
			return nil
		}
		dst.fail = func(req *qdrant.SetPayloadPoints) error {
			if req.GetPointsSelector().GetPoints().GetIds()[0].GetNum() == 7 {
				return status.Error(codes.NotFound, "No point with id 7 found")
			}
			return nil
		}
		rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow; c.ReplicaID = "r" })
		for id := uint64(1); id <= 10; id++ {
			rec.Record("mem", qdrant.NewIDNum(id), 0)
		}
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatalf("a deleted point failed the flush: %v", err)
		}
		got := dst.totals()
		if len(got) != 9 || got["mem/7"] != nil || got["mem/8"]["r"] != 1 {
			t.Errorf("totals %v, want the 9 live points at 1", got)
		}
		if st := rec.Stats(); st.Written != 9 || st.Gone != 1 || st.Failed != 0 {
			t.Errorf("stats %+v, want 9 written, 1 gone", st)
		}
	})
	t.Run("upstream down", func(t *testing.T) {
		dst := &batchPayloads{}
		down := true
		dst.batchFail = func(*qdrant.UpdateBatchPoints) error {
			if down {
				return status.Error(codes.Unavailable, "connection refused")
			}
			return nil
		}
		rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow; c.ReplicaID = "r" })
		for id := uint64(1); id <= 10; id++ {
			rec.Record("mem", qdrant.NewIDNum(id), 2)
		}
		if err := rec.Flush(context.Background()); err == nil {
			t.Fatal("a flush to an unreachable upstream reported no error")
		}
		if dst.attempts() != 0 || len(dst.totals()) != 0 {
			t.Errorf("point-by-point writes to an unreachable upstream: %d", dst.attempts())
		}
		if got := rec.Pending(); got != 10 {
			t.Errorf("Pending %d after a failed flush, want 10", got)
		}
		dst.mu.Lock()
		down = false
		dst.mu.Unlock()
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := dst.totals()["mem/10"]["r"]; got != 3 {
			t.Errorf("retried total %d, want 3 (stored 2 + 1)", got)
		}
	})
}

// TestRecorderSpool: totals the upstream would not take by the end of
// Shutdown's grace are spooled to a file and written after the next
// Start, by the same replica id only; an upstream that recovers within the
// grace period gets them at once.
func TestRecorderSpool(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "access.spool")
	hung := &fakePayloads{block: make(chan struct{})} // never answers
	rec := newRecorder(t, hung, func(c *rank.RecorderConfig) { c.SpoolFile = spool; c.Timeout = time.Second })
	_ = rec.Start(context.Background())
	recordAll(rec, concat(repeat(3, access{id: 1}), repeat(2, access{id: 7, stored: 40}))...)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := rec.Shutdown(ctx); err == nil {
		t.Error("Shutdown with a hung upstream returned nil")
	}
	if _, err := os.Stat(spool); err != nil {
		t.Fatalf("nothing spooled: %v", err)
	}

	// Another replica id leaves the file's totals alone (they would count
	// twice under its key).
	other := &fakePayloads{}
	rec2 := newRecorder(t, other, func(c *rank.RecorderConfig) { c.SpoolFile = spool + ".other"; c.ReplicaID = "b" })
	if err := os.Link(spool, spool+".other"); err != nil {
		t.Fatal(err)
	}
	if err := rec2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rec2.Flush(context.Background()); err != nil || len(other.totals()) != 0 {
		t.Errorf("replica b wrote replica a's totals: %v %v", other.totals(), err)
	}

	up := &fakePayloads{}
	rec3 := newRecorder(t, up, func(c *rank.RecorderConfig) { c.SpoolFile = spool })
	if err := rec3.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spool); err != nil {
		t.Errorf("the spool file is gone before its totals were written: %v", err)
	}
	recordAll(rec3, access{id: 1})
	if err := rec3.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{"mem/1": {"a": 4}, "mem/7": {"a": 42}}
	if diff := cmp.Diff(want, up.totals()); diff != "" {
		t.Errorf("totals after the restart (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(spool); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the spool file stays after its totals were written: %v", err)
	}
	// Replica b left replica a's lines in its file, for a.
	if b, err := os.ReadFile(spool + ".other"); err != nil || !strings.Contains(string(b), `"replica":"a"`) {
		t.Errorf("replica b's file: %q, %v", b, err)
	}

	// An upstream back within the grace period: written, nothing spooled.
	flaky := &fakePayloads{}
	var calls atomic.Int32
	flaky.fail = func(*qdrant.SetPayloadPoints) error {
		if calls.Add(1) <= 2 {
			return status.Error(codes.Unavailable, "down")
		}
		return nil
	}
	rec4 := newRecorder(t, flaky, func(c *rank.RecorderConfig) { c.SpoolFile = spool })
	recordAll(rec4, access{id: 9})
	ctx4, cancel4 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel4()
	if err := rec4.Shutdown(ctx4); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if diff := cmp.Diff(map[string]map[string]int64{"mem/9": {"a": 1}}, flaky.totals()); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(spool); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("spooled although written: %v", err)
	}
}
