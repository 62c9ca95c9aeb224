package proxybench

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A short run on a small fixture, with the access flush and without: the
// report holds figures for both paths and prints them.
func TestRunSmall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noFlush bool
		line    string
	}{
		{name: "flush", line: "access flush: on"},
		{name: "no flush", noFlush: true, line: "access flush: off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Options{Memories: 500, Dim: 32, Queries: 16, Duration: 2 * time.Second, InFlight: 2,
				NoFlush: tc.noFlush, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Direct.N == 0 || rep.Proxied.N == 0 || rep.DirectQPS <= 0 || rep.ProxiedQPS <= 0 || rep.QPSRatio <= 0 {
				t.Fatalf("empty report: %+v", rep)
			}
			if rep.Proxied.P50 <= 0 || rep.Direct.P99 < rep.Direct.P50 {
				t.Fatalf("inconsistent latencies: %+v", rep)
			}
			out := rep.String()
			for _, want := range []string{"500 memories x 32 dims", "p50, 1 in flight", "p99, 1 in flight", "QPS, 2 in flight", "ratio", tc.line} {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{Memories: -1}, {Duplicates: 1}, {Dim: 70000}, {Oversample: 101}, {Duration: -time.Second}} {
		if o.Validate() == nil {
			t.Errorf("%+v: Validate() = nil", o)
		}
	}
}

// loadBench loads the reference fixture once per benchmark.
func loadBench(b *testing.B) *Fixture {
	b.Helper()
	f, err := Load(context.Background(), Options{Dir: b.TempDir(), Duration: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	})
	return f
}

// BenchmarkQuery times one query, 10k memories of 384 dims, limit 10,
// directly against the store and through memrank (oversample 4): the
// difference of the two ns/op is the latency memrank adds.
func BenchmarkQuery(b *testing.B) {
	f := loadBench(b)
	ctx := context.Background()
	for _, path := range []struct {
		name string
		run  func(i int) error
	}{
		{"direct", func(i int) error { return f.Query(ctx, f.Direct, i) }},
		{"memrank", func(i int) error { return f.Query(ctx, f.Proxied, i) }},
	} {
		b.Run(path.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := path.run(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkProxy is the whole measurement of `memrank bench proxy` (10 s here),
// reported as custom metrics.
func BenchmarkProxy(b *testing.B) {
	f := loadBench(b)
	for b.Loop() {
		rep, err := f.Measure(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.AddedP50.Microseconds())/1000, "added-p50-ms")
		b.ReportMetric(float64(rep.AddedP99.Microseconds())/1000, "added-p99-ms")
		b.ReportMetric(rep.QPSRatio, "qps-ratio")
		b.Log("\n" + rep.String())
	}
}
