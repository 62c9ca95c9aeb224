package loadbench

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/upstream"
)

// TestRun drives a short run against the embedded store behind a one-slot
// limit: every query sent is answered (ok or shed), some are shed, none
// fails, and the report prints.
func TestRun(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := admission.DefaultConfig()
	cfg.MaxInFlight = 1
	l, err := admission.New(cfg, "grpc", settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- upstream.Serve(ctx, store.NewServer(db, l.ServerOptions()...), lis, 2*time.Second) }()
	defer func() { cancel(); <-done }()

	o := DefaultOptions()
	o.GRPC, o.Setup, o.Dim, o.Conns = lis.Addr().String(), 3000, 128, 2 // queries of ~1 ms: they overlap
	o.CapacityFor, o.Duration, o.Rate = 300*time.Millisecond, 700*time.Millisecond, 3000
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Capacity <= 0 || rep.Sent+rep.NotSent != int(o.Rate*o.Duration.Seconds()) || rep.OK+rep.Shed+rep.Failed != rep.Sent {
		t.Errorf("report %+v", rep)
	}
	if rep.OK == 0 || rep.Shed == 0 || rep.Failed != 0 {
		t.Errorf("ok %d, shed %d, failed %d (%s): want some of each but failures", rep.OK, rep.Shed, rep.Failed, rep.FailedExample)
	}
	var b strings.Builder
	if _, err := rep.WriteTo(&b); err != nil || !strings.Contains(b.String(), "goodput") {
		t.Errorf("report text %q, %v", b.String(), err)
	}
}
