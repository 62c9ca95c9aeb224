package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestKeepalive: the servers' enforcement policy tolerates the pings of the
// clients they serve: go-client's every 10 s, and memrank's own upstream
// dial when one memrank fronts another.
func TestKeepalive(t *testing.T) {
	tests := []struct {
		name string
		ping time.Duration
	}{
		{"go-client", 10 * time.Second},
		{"memrank's upstream dial", ClientKeepalive().Time},
	}
	policy := ServerKeepalive()
	if !policy.PermitWithoutStream {
		t.Error("idle clients' pings are refused")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ping < policy.MinTime {
				t.Errorf("pings every %v, the server allows no more often than %v", tc.ping, policy.MinTime)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{name: "defaults", edit: func(*Config) {}},
		{name: "qdrant", edit: func(c *Config) { c.GRPC, c.REST = "qdrant:6334", "http://qdrant:6333" }},
		{name: "no port", edit: func(c *Config) { c.GRPC = "qdrant" }, want: "grpc"},
		{name: "port zero", edit: func(c *Config) { c.GRPC = "qdrant:0" }, want: "grpc"},
		{name: "rest not a URL", edit: func(c *Config) { c.REST = "qdrant:6333" }, want: "rest"},
		{name: "zero timeout", edit: func(c *Config) { c.Timeout = 0 }, want: "timeout"},
		{name: "key with a newline", edit: func(c *Config) { c.APIKey = "a\nb" }, want: "api_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want+":")):
				t.Errorf("Validate: %v, want an error about %q", err, tc.want)
			}
		})
	}
}

// TestInProcess: a server served in process answers over the real gRPC
// stack, and Shutdown stops it, twice without harm.
func TestInProcess(t *testing.T) {
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ip := ServeInProcess(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := DialInProcess(ctx, ip)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("health check: %v", err)
	}
	if err := ip.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ip.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Error("the server still answers after Shutdown")
	}
}

// TestGracefulStopCutsStreams: a stream that never ends (a health watch)
// is cut when the context ends, instead of holding the stop forever.
func TestGracefulStopCutsStreams(t *testing.T) {
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ip := ServeInProcess(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := DialInProcess(ctx, ip)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	watch, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer scancel()
	if err := ip.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err == nil {
		t.Error("the watch survived the stop")
	}
}

func TestRESTURL(t *testing.T) {
	u, err := Config{REST: "http://qdrant:6333"}.RESTURL()
	if err != nil || u.Host != "qdrant:6333" {
		t.Errorf("RESTURL = %v, %v", u, err)
	}
	if u, err := (Config{}).RESTURL(); u != nil || err != nil {
		t.Errorf("empty: %v, %v", u, err)
	}
	if _, err := (Config{REST: "ftp://x"}).RESTURL(); err == nil {
		t.Error("ftp URL accepted")
	}
	if _, err := Dial(context.Background(), ""); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("Dial(\"\") = %v, want an error", err)
	}
}
