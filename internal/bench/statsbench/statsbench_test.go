package statsbench

import (
	"context"
	"math"
	"strings"
	"testing"
)

// A small run: both answers agree on what they count, and the report
// prints them.
func TestRun(t *testing.T) {
	rep, err := Run(context.Background(), Options{Memories: 2000, Queries: 3, Scans: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c, s := rep.Counted, rep.Scanned
	if c.Memories+c.Archived+c.Superseded != 2001 || c.Superseded != s.Superseded || math.Abs(c.Average-s.Average) > 0.005 {
		t.Errorf("counted %+v\nscanned %+v", c, s)
	}
	if c.Tiers["archived"] == 0 || c.Memories == 0 {
		t.Errorf("no memory labelled archived or no memories: %+v", c)
	}
	var b strings.Builder
	if _, err := rep.WriteTo(&b); err != nil || !strings.Contains(b.String(), "stats of 2000 memories") {
		t.Errorf("report %q: %v", b.String(), err)
	}
}

// BenchmarkCounted times one counted /v1/stats answer at 50k memories.
func BenchmarkCounted(b *testing.B) {
	ctx := context.Background()
	f, err := open(ctx, b.TempDir(), 50000)
	if err != nil {
		b.Fatal(err)
	}
	defer f.close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.eng.Stats(ctx, "bench", ""); err != nil {
			b.Fatal(err)
		}
	}
}
