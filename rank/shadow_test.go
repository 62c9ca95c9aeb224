package rank_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
)

// TestShadowMode: the caller gets the store's own answer; memrank's order is
// computed beside it and its difference exported as metrics and a sampled
// log line; nothing is counted as accessed.
func TestShadowMode(t *testing.T) {
	pts := guardPoints(
		guardMem{id: 1, score: 0.9, conf: 0.2}, // below both gates: the gate does not yield to it
		guardMem{id: 2, score: 0.85, reads: 30},
		guardMem{id: 3, score: 0.8, age: 200},
		guardMem{id: 4, score: 0.7},
	)
	src := &fakeSource{info: cosineInfo(), points: pts}
	dst := &fakePayloads{}
	rec := newRecorder(t, dst, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	var logs bytes.Buffer
	r := newRanker(t, src, func(c *rank.Config) {
		c.Collections = map[string]rank.CollectionConfig{"mem": {Mode: rank.ModeShadow}}
		c.Guard, c.Recorder = testGuard, rec
		c.Telemetry = settings.Settings{MeterProvider: mp, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		c.Shadow.LogInterval = time.Hour
	})
	req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(3)}
	for range 3 {
		res, err := r.Query(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pts[:3], res.Points, protocmp.Transform()); diff != "" {
			t.Fatalf("the caller did not get the store's answer (-store +got):\n%s", diff)
		}
		if res.Reranked || res.PassThrough != rank.PassThroughShadow || res.Detection.Mode != rank.ModeShadow {
			t.Errorf("reranked %v pass %q mode %v", res.Reranked, res.PassThrough, res.Detection.Mode)
		}
		sh := res.Shadow
		if sh == nil {
			t.Fatal("no shadow report")
		}
		// memrank: 2, 3, 4 (1 is gated out); the store: 1, 2, 3.
		if diff := cmp.Diff([]uint64{2, 3, 4}, numIDs(sh.Memrank)); diff != "" {
			t.Errorf("memrank's order (-want +got):\n%s", diff)
		}
		if !sh.TopChanged || sh.Dropped != 1 || sh.Moved != 2 || sh.Overlap != 2.0/3 {
			t.Errorf("report %+v", sh)
		}
	}
	// The store was asked twice per query: the caller's request as it came,
	// and memrank's oversampled one.
	if n := len(src.reqs); n != 6 {
		t.Errorf("%d upstream queries, want 6", n)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dst.totals(); len(got) != 0 {
		t.Errorf("shadow mode counted accesses: %v", got)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sums[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sums[m.Name] += int64(p.Count)
				}
			}
		}
	}
	want := map[string]int64{"memrank.rank.shadow.queries": 3, "memrank.rank.shadow.top_changed": 3, "memrank.rank.shadow.dropped": 3, "memrank.rank.shadow.overlap": 3}
	for k, v := range want {
		if sums[k] != v {
			t.Errorf("%s = %d, want %d", k, sums[k], v)
		}
	}
	// One comparison per interval reaches the log.
	if n := strings.Count(logs.String(), "shadow ranking"); n != 1 {
		t.Errorf("%d log lines, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "memrank=\"[2 3 4]\"") {
		t.Errorf("log line without memrank's order: %s", logs.String())
	}
}

// TestShadowSampleRate: unsampled queries cost one upstream call and carry
// no report.
func TestShadowSampleRate(t *testing.T) {
	src := &fakeSource{info: cosineInfo(), points: guardPoints(guardMem{id: 1, score: 0.9})}
	r := newRanker(t, src, func(c *rank.Config) {
		c.Mode = rank.ModeShadow
		c.Shadow.SampleRate = 1e-9
	})
	res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
	if err != nil {
		t.Fatal(err)
	}
	if res.Shadow != nil || len(src.reqs) != 1 {
		t.Errorf("shadow %+v after %d upstream calls: want none after 1", res.Shadow, len(src.reqs))
	}
	if diff := cmp.Diff([]uint64{1}, ids(res.Points), cmpopts.EquateEmpty()); diff != "" {
		t.Error(diff)
	}
}
