package backfillbench_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memrank/memrank/internal/bench/backfillbench"
)

func TestRun(t *testing.T) {
	res, err := backfillbench.Run(context.Background(), backfillbench.Options{Points: 300, Dimensions: 8, BatchSize: 64, Merge: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Points != 300 || res.Report.Backfilled != 300 || res.Report.Merged == 0 || res.Rollback.Points != 300 {
		t.Errorf("result %+v", res)
	}
	var out bytes.Buffer
	if _, err := res.WriteTo(&out); err != nil || !strings.Contains(out.String(), "points/s") {
		t.Errorf("report %q, %v", out.String(), err)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []backfillbench.Options{{Points: -1}, {Dimensions: 5000}, {BatchSize: 6000}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
