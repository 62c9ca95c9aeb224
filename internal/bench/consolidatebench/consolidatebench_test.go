package consolidatebench_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/memrank/memrank/internal/bench/consolidatebench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunEmbedded(t *testing.T) {
	res, err := consolidatebench.RunEmbedded(context.Background(), consolidatebench.Embedded{Dir: t.TempDir(), NoSync: true},
		consolidatebench.Options{Memories: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if res.First.Memories != 1000 || res.First.Written == 0 || res.First.Audited != res.First.Written || res.First.Archived == 0 {
		t.Errorf("first run: %+v", res.First)
	}
	if res.Second.Written != 0 || res.Second.Audited != 0 {
		t.Errorf("second run wrote: %+v", res.Second)
	}
	var b bytes.Buffer
	if _, err := res.WriteTo(&b); err != nil || !strings.Contains(b.String(), "second run (same clock)") {
		t.Errorf("report: %q, %v", b.String(), err)
	}
}
