package proxybench

import (
	"context"
	"testing"
)

// BenchmarkQueryWarm is BenchmarkQuery with the candidate cache warm: every
// query goes through memrank once before the clock starts, so that B/op
// and allocs/op are those of the steady state (hits, plus what the access
// flush re-versions) rather than an average with the first, cold pass.
func BenchmarkQueryWarm(b *testing.B) {
	f := loadBench(b)
	ctx := context.Background()
	for i := range f.opts.Queries {
		if err := f.Query(ctx, f.Proxied, i); err != nil {
			b.Fatal(err)
		}
	}
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
