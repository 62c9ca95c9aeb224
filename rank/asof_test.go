package rank_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
)

// fakeHistory is an audit trail of supersessions: when each memory was
// last superseded, by id. It records what it was asked.
type fakeHistory struct {
	at  map[string]time.Time
	err error

	mu    sync.Mutex
	colls []string
	asked [][]string
}

func (h *fakeHistory) SupersededAt(_ context.Context, collection string, ids []string) (map[string]time.Time, error) {
	h.mu.Lock()
	h.colls = append(h.colls, collection)
	h.asked = append(h.asked, slices.Clone(ids))
	h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	out := map[string]time.Time{}
	for _, id := range ids {
		if t, ok := h.at[id]; ok {
			out[id] = t
		}
	}
	return out, nil
}

func (h *fakeHistory) calls() ([]string, [][]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.colls), slices.Clone(h.asked)
}

// loadAsOfFixture creates collection "mem" for the AsOf cases; asOfAt is
// the time they ask about, ten days before now.
func loadAsOfFixture(t *testing.T, e *env) {
	t.Helper()
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	mem := func(id uint64, sim, age float64, user string, extra map[string]any) pt {
		p := memoryPayload(fmt.Sprintf("as-of memory %d", id), 0.9, age, nil)
		p["user"] = user
		for k, v := range extra {
			p[k] = v
		}
		return pt{id: id, vec: vecAt(sim, int(id)), payload: p}
	}
	superseded := map[string]any{"superseded_by": "1"}
	e.upsert(t, "mem",
		mem(1, 0.9, 30, "u1", nil),
		mem(2, 0.95, 5, "u1", nil),         // first observed after asOfAt
		mem(3, 0.85, 40, "u1", superseded), // superseded after asOfAt
		mem(4, 0.8, 40, "u1", superseded),  // superseded before asOfAt
		mem(5, 0.75, 40, "u1", superseded), // no record of when
		// The write path may store a superseded memory as not retrievable
		// too; superseded after asOfAt, it was retrievable then.
		mem(7, 0.78, 40, "u1", map[string]any{"superseded_by": "1", "retrievable": false}),
		mem(8, 0.6, 50, "u2", nil),
		// A point that is not a memory has no first observation: kept.
		pt{id: 6, vec: vecAt(0.7, 6), payload: map[string]any{"text": "wiki page", "user": "u1"}},
	)
}

var asOfAt = now.Add(-10 * 24 * time.Hour)

func asOfHistory() *fakeHistory {
	return &fakeHistory{at: map[string]time.Time{
		"3": now.Add(-2 * 24 * time.Hour),
		"4": now.Add(-20 * 24 * time.Hour),
		"7": now.Add(-24 * time.Hour),
	}}
}

// TestAsOf: a query asked as of a time answers as memrank would have then:
// memories first observed later are left out (by a filter ANDed with the
// caller's), supersessions the audit trail records later are taken back,
// those recorded earlier (or without a record, or when the trail cannot
// be read) stay, ages are measured at that time, and nothing read counts
// as an access.
func TestAsOf(t *testing.T) {
	e := newEnv(t)
	loadAsOfFixture(t, e)
	caller := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("user", "u1")}}
	history := func() rank.History { return asOfHistory() }
	tests := []struct {
		name        string
		asOf        bool
		history     func() rank.History // nil: none configured
		want        []uint64
		wantDropped map[uint64]string
		wantAsked   []string // the superseded candidates' ids, asked of the trail
		wantCounted []uint64
		wantWarning bool
	}{
		{
			name: "now", history: history,
			want: []uint64{2, 1, 6}, wantDropped: map[uint64]string{3: "superseded", 4: "superseded", 5: "superseded", 7: "superseded"},
			wantCounted: []uint64{1, 2},
		},
		{
			name: "as of ten days ago", asOf: true, history: history,
			want: []uint64{1, 3, 7, 6}, wantDropped: map[uint64]string{4: "superseded", 5: "superseded"},
			wantAsked: []string{"3", "4", "7", "5"},
		},
		{
			name: "as of ten days ago, the trail unreadable", asOf: true,
			history: func() rank.History { return &fakeHistory{err: errors.New("audit companion unavailable")} },
			want:    []uint64{1, 6}, wantDropped: map[uint64]string{3: "superseded", 4: "superseded", 5: "superseded", 7: "superseded"},
			wantAsked: []string{"3", "4", "7", "5"}, wantWarning: true,
		},
		{
			name: "as of ten days ago, no trail", asOf: true,
			want: []uint64{1, 6}, wantDropped: map[uint64]string{3: "superseded", 4: "superseded", 5: "superseded", 7: "superseded"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h rank.History
			if tc.history != nil {
				h = tc.history()
			}
			var logs bytes.Buffer
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, nil)
			src := &recSource{Source: e.client}
			r := newRanker(t, src, func(c *rank.Config) {
				c.Guard, c.Recorder, c.History = testGuard, rec, h
				c.Telemetry = settings.Settings{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			})
			ctx := context.Background()
			if tc.asOf {
				ctx = rank.AsOf(ctx, asOfAt)
			}
			res, err := r.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Filter: caller})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("returned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDropped, droppedReasons(res)); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			for _, ex := range res.Explanations {
				if ex.ID.GetNum() != 1 {
					continue
				}
				// Observed 30 days before now: 20 days before the answer's clock.
				wantAge := 30.0
				if tc.asOf {
					wantAge = 20
				}
				if math.Abs(ex.AgeDays-wantAge) > 1e-9 {
					t.Errorf("memory 1 is %v days old, want %v", ex.AgeDays, wantAge)
				}
			}
			// The upstream query: the caller's filter, ANDed under AsOf with
			// "first observed at or before the time, or never".
			wantFilter := caller
			if tc.asOf {
				wantFilter = &qdrant.Filter{Must: []*qdrant.Condition{
					qdrant.NewFilterAsCondition(&qdrant.Filter{Should: []*qdrant.Condition{
						qdrant.NewDatetimeRange("created_at", &qdrant.DatetimeRange{Lte: timestamppb.New(asOfAt)}),
						qdrant.NewIsEmpty("created_at"),
					}}),
					qdrant.NewFilterAsCondition(caller),
				}}
			}
			if len(src.reqs) != 1 {
				t.Fatalf("%d upstream queries, want 1", len(src.reqs))
			}
			if diff := cmp.Diff(wantFilter, src.reqs[0].GetFilter(), protocmp.Transform()); diff != "" {
				t.Errorf("upstream filter (-want +got):\n%s", diff)
			}
			if fh, ok := h.(*fakeHistory); ok {
				colls, asked := fh.calls()
				var got []string
				if len(asked) > 0 {
					got = asked[0]
				}
				if diff := cmp.Diff(tc.wantAsked, got, cmpopts.EquateEmpty()); diff != "" || len(asked) > 1 || len(colls) > 0 && colls[0] != "mem" {
					t.Errorf("the trail was asked %v about %v; want one call about \"mem\" (-want +got):\n%s", len(asked), colls, diff)
				}
			}
			if got := strings.Contains(logs.String(), "audit trail could not be read"); got != tc.wantWarning {
				t.Errorf("warning logged %v, want %v:\n%s", got, tc.wantWarning, logs.String())
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var counted []uint64
			for k := range dst.totals() {
				var id uint64
				fmt.Sscanf(k, "mem/%d", &id)
				counted = append(counted, id)
			}
			if diff := cmp.Diff(tc.wantCounted, counted, cmpopts.SortSlices(func(a, b uint64) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("counted as accessed (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("grouped", func(t *testing.T) {
		h := asOfHistory()
		dst := &fakePayloads{}
		rec := newRecorder(t, dst, nil)
		src := &recSource{Source: e.client}
		r := newRanker(t, src, func(c *rank.Config) { c.Guard, c.Recorder, c.History = testGuard, rec, h })
		res, err := r.QueryGroups(rank.AsOf(context.Background(), asOfAt), &qdrant.QueryPointGroups{
			CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", GroupSize: u64(3),
		})
		if err != nil {
			t.Fatal(err)
		}
		var got [][]uint64
		for _, g := range res.Groups {
			got = append(got, ids(g.GetHits()))
		}
		if diff := cmp.Diff([][]uint64{{1, 3, 7}, {8}}, got); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
		if len(src.groups) != 1 || len(src.groups[0].GetFilter().GetMust()) != 1 {
			t.Fatalf("upstream grouped requests %v: want one, with the time's filter alone", src.groups)
		}
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := dst.totals(); len(got) != 0 {
			t.Errorf("counted %v under AsOf", got)
		}
	})
}

// TestAsOfCachedAndPassedThrough: with the candidate cache, a query as of
// a time answers as an uncached one, and leaves the cached records as they
// were (a later query of now still leaves the superseded memories out);
// a query passed through the store's own order answers from the memories
// first observed by then too.
func TestAsOfCachedAndPassedThrough(t *testing.T) {
	e := newEnv(t)
	loadAsOfFixture(t, e)
	withHistory := func(c *rank.Config) { c.History = asOfHistory() }
	plain := newRanker(t, e.client, withHistory)
	cached, _ := cachedRanker(t, e.client, withHistory)
	req := func() *qdrant.QueryPoints {
		return &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(10), WithPayload: qdrant.NewWithPayload(true)}
	}
	asOf := rank.AsOf(context.Background(), asOfAt)
	answer := func(r *rank.Ranker, ctx context.Context) []uint64 {
		t.Helper()
		res, err := r.Query(ctx, req())
		if err != nil {
			t.Fatal(err)
		}
		return ids(res.Points)
	}
	nowWant := answer(plain, context.Background())
	thenWant := answer(plain, asOf)
	if slices.Equal(nowWant, thenWant) {
		t.Fatalf("the fixture answers alike now and then: %v", nowWant)
	}
	for round := range 3 { // cold, then warm twice
		if got := answer(cached, context.Background()); !slices.Equal(got, nowWant) {
			t.Errorf("round %d, now: %v, want %v (the cache's records changed?)", round, got, nowWant)
		}
		if got := answer(cached, asOf); !slices.Equal(got, thenWant) {
			t.Errorf("round %d, as of: %v, want %v", round, got, thenWant)
		}
	}

	res, err := plain.QueryAs(asOf, req(), rank.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reranked || slices.Contains(ids(res.Points), 2) || len(res.Points) == 0 {
		t.Errorf("passed through as of a time: %v (re-ranked %v), want the store's order without 2 (first observed later)", ids(res.Points), res.Reranked)
	}
}
