package proxybench

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A short run on a small fixture, with the access flush and without, and
// over REST: the report holds figures for both paths and prints them.
func TestRunSmall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noFlush bool
		rest    bool
		line    string
	}{
		{name: "flush", line: "access flush: on"},
		{name: "no flush", noFlush: true, line: "access flush: off"},
		{name: "REST", rest: true, line: "REST: JSON over loopback HTTP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Options{Memories: 500, Dim: 32, Queries: 16, Duration: 2 * time.Second, InFlight: 2,
				NoFlush: tc.noFlush, REST: tc.rest, Dir: t.TempDir()})
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
func loadBench(b *testing.B) *Fixture { return loadBenchWith(b, Options{}) }

func loadBenchWith(b *testing.B, o Options) *Fixture {
	b.Helper()
	o.Dir, o.Duration = b.TempDir(), 10*time.Second
	f, err := Load(context.Background(), o)
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
func BenchmarkQuery(b *testing.B) { benchQueries(b, loadBench(b)) }

// BenchmarkQueryWarm is BenchmarkQuery with the candidate cache warm: every
// query goes through memrank once before the clock starts, so that B/op
// and allocs/op are those of the steady state (hits, plus what the access
// flush re-versions) rather than an average with the first, cold pass.
func BenchmarkQueryWarm(b *testing.B) {
	f := loadBench(b)
	for i := range f.opts.Queries {
		if err := f.Query(context.Background(), f.Proxied, i); err != nil {
			b.Fatal(err)
		}
	}
	benchQueries(b, f)
}

// benchQueries times f's queries direct and through memrank.
func benchQueries(b *testing.B, f *Fixture) {
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

// BenchmarkFront drives the official go-client direct to the store and
// through memrank in one benchmark, with memrank's telemetry as serve sets
// it up and off. ns/op and allocs/op are the whole process's (client,
// memrank and store). proxied adds memrank-code-B/query: what is allocated
// on stacks that run memrank's own code (the front, the ranker and the
// go-client calls it makes), without grpc's transport goroutines. A
// difference of the whole process's figures cannot stand in for it: with
// the candidate cache the store answers memrank with less than it answers
// a direct query, so proxied minus direct is below memrank's share.
func BenchmarkFront(b *testing.B) {
	for _, mode := range []struct {
		name string
		off  bool
	}{{"telemetry=serve", false}, {"telemetry=off", true}} {
		b.Run(mode.name, func(b *testing.B) {
			f := loadBenchWith(b, Options{TelemetryOff: mode.off})
			ctx := context.Background()
			b.Run("direct", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := f.Query(ctx, f.Direct, i); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("proxied", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := f.Query(ctx, f.Proxied, i); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.StopTimer()
				code := memrankCodeAllocs(b, 100, func(i int) error { return f.Query(ctx, f.Proxied, i) })
				b.ReportMetric(code.bytes, "memrank-code-B/query")
				b.ReportMetric(code.allocs, "memrank-code-allocs/query")
			})
		})
	}
}

type perQuery struct{ bytes, allocs float64 }

// memrankCodeAllocs profiles every allocation of n calls of run and sums
// those whose stack runs memrank's code, the store and this benchmark
// excepted, per call.
func memrankCodeAllocs(b *testing.B, n int, run func(i int) error) perQuery {
	b.Helper()
	prev := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = prev }()
	before := memrankProfile()
	for i := range n {
		if err := run(i); err != nil {
			b.Fatal(err)
		}
	}
	after := memrankProfile()
	return perQuery{float64(after.bytes-before.bytes) / float64(n), float64(after.allocs-before.allocs) / float64(n)}
}

// memrankProfile is the cumulative allocation profile's total over stacks
// through memrank's code. Two GCs publish every allocation made so far.
func memrankProfile() struct{ bytes, allocs int64 } {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	for range 10 {
		n, _ := runtime.MemProfile(nil, true)
		recs = make([]runtime.MemProfileRecord, n+64)
		if n, ok := runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	var out struct{ bytes, allocs int64 }
	for _, r := range recs {
		if memrankStack(r.Stack()) {
			out.bytes += r.AllocBytes
			out.allocs += r.AllocObjects
		}
	}
	return out
}

func memrankStack(pcs []uintptr) bool {
	frames := runtime.CallersFrames(pcs)
	for {
		fr, more := frames.Next()
		const mod = "github.com/memrank/memrank/"
		if name, ok := strings.CutPrefix(fr.Function, mod); ok &&
			!strings.HasPrefix(name, "store") && !strings.HasPrefix(name, "internal/bench/") {
			return true
		}
		if !more {
			return false
		}
	}
}

// TestRESTPaths: with Options.REST, the proxied REST path goes through
// memrank's ranker (it records the accesses of what it returns) and the
// direct one does not.
func TestRESTPaths(t *testing.T) {
	f, err := Load(context.Background(), Options{Memories: 300, Dim: 16, Queries: 4, InFlight: 2, REST: true, NoFlush: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	direct, proxied := f.queriers()
	ctx := context.Background()
	before := f.recorder.Stats().Recorded
	if err := direct(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := f.recorder.Stats().Recorded; got != before {
		t.Fatalf("a direct REST query recorded %d accesses", got-before)
	}
	if err := proxied(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := f.recorder.Stats().Recorded; got == before {
		t.Fatal("a REST query through memrank recorded no access: it did not reach the ranker")
	}
}
