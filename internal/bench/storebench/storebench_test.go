package storebench_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/memrank/memrank/internal/bench/storebench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A small run goes through every phase and prints every figure.
func TestRunSmall(t *testing.T) {
	rep, err := storebench.Run(context.Background(), storebench.Options{Points: 600, Dim: 16, BatchSize: 250, Queries: 20, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Load.Points != 600 || rep.Load.VectorBytes != 600*16*4 || rep.Load.HeapInUse == 0 || rep.Load.PointsPerSec <= 0 {
		t.Fatalf("load stats = %+v", rep.Load)
	}
	if len(rep.Search) != 6 {
		t.Fatalf("scenarios = %+v", rep.Search)
	}
	for _, l := range rep.Search {
		if l.Queries != 20 || l.P50 <= 0 || l.P99 < l.P50 {
			t.Errorf("%s: %+v", l.Name, l)
		}
	}
	out := rep.String()
	for _, want := range []string{"engine+filter", "grpc+filter", "engine+rrf", "engine+groups", "points/s", "Go heap in use after GC", "process RSS"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (storebench.Options{Points: -1}).Validate(); err == nil {
		t.Fatal("negative points accepted")
	}
	if _, err := storebench.Run(context.Background(), storebench.Options{Dim: 1 << 20}); err == nil {
		t.Fatal("huge dim accepted")
	}
}
