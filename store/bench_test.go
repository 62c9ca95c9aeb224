package store_test

import (
	"context"
	"flag"
	"testing"

	"github.com/memrank/memrank/internal/bench/storebench"
)

var benchPoints = flag.Int("storebench.points", 100_000, "points loaded by BenchmarkStore (use fewer for a quick run)")

// BenchmarkStore loads the reference collection (100k cosine vectors of 384
// dims unless -storebench.points says otherwise) once, reports load
// throughput and memory, and times each query scenario of package
// storebench: engine and in-process gRPC, unfiltered and with a keyword
// filter on an indexed field.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	f, err := storebench.Load(ctx, storebench.Options{Points: *benchPoints, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ls := f.LoadStats()
	b.Logf("loaded %d points: %.0f points/s, heap %.1f MiB (%.2fx vectors), RSS %.1f MiB",
		ls.Points, ls.PointsPerSec, float64(ls.HeapInUse)/(1<<20), ls.HeapRatio(), float64(ls.RSS)/(1<<20))
	for _, sc := range f.Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := sc.Run(ctx, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(ls.PointsPerSec, "points/s")
		b.ReportMetric(ls.HeapRatio(), "heap/vectors")
		b.ReportMetric(float64(ls.RSS)/(1<<20), "RSS-MiB")
	})
}
