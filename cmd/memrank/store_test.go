package main

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// freeAddr reserves a loopback port and releases it for the command to take.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestQdrantCompatServes runs `memrank qdrant-compat`, talks to it with the
// official go-client, stops it as SIGTERM would (context cancel), and checks
// the data survives a second run on the same directory.
func TestQdrantCompatServes(t *testing.T) {
	dir := t.TempDir()
	start := func() (addr string, stop func() (int, string)) {
		addr = freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		var stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"qdrant-compat", "--data", dir, "--grpc", addr}, strings.NewReader(""), &bytes.Buffer{}, &stderr, nil)
		}()
		return addr, func() (int, string) {
			cancel()
			select {
			case code := <-done:
				return code, stderr.String()
			case <-time.After(20 * time.Second):
				t.Fatal("qdrant-compat did not stop")
				return 0, ""
			}
		}
	}
	connect := func(addr string) *qdrant.Client {
		host, port, _ := net.SplitHostPort(addr)
		p, err := strconv.Atoi(port)
		if err != nil {
			t.Fatal(err)
		}
		var client *qdrant.Client
		deadline := time.Now().Add(10 * time.Second)
		for {
			client, err = qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err = client.HealthCheck(ctx)
				cancel()
				if err == nil {
					return client
				}
				client.Close()
			}
			if time.Now().After(deadline) {
				t.Fatalf("qdrant-compat at %s never answered: %v", addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	addr, stop := start()
	client := connect(addr)
	ctx := context.Background()
	reply, err := client.HealthCheck(ctx)
	if err != nil || !strings.Contains(reply.GetTitle(), "not Qdrant") {
		t.Fatalf("health: %v %v", reply, err)
	}
	if err := client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "m",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"text": "hi"})},
	}}); err != nil {
		t.Fatal(err)
	}
	client.Close()

	// A second server on the same directory fails at once, naming the reason.
	var stderr bytes.Buffer
	code := run(ctx, []string{"qdrant-compat", "--data", dir, "--grpc", freeAddr(t)}, strings.NewReader(""), &bytes.Buffer{}, &stderr, nil)
	if code != exitFailure || !strings.Contains(stderr.String(), "in use by another process") {
		t.Errorf("second server: exit %d, stderr %q", code, stderr.String())
	}

	if code, errText := stop(); code != exitOK {
		t.Fatalf("stop: exit %d: %s", code, errText)
	}

	addr, stop = start()
	client = connect(addr)
	pts, err := client.Get(ctx, &qdrant.GetPoints{CollectionName: "m", Ids: []*qdrant.PointId{qdrant.NewIDNum(7)},
		WithPayload: qdrant.NewWithPayload(true)})
	client.Close()
	if err != nil || len(pts) != 1 || pts[0].GetPayload()["text"].GetStringValue() != "hi" {
		t.Errorf("after restart: %v %v", pts, err)
	}
	if code, errText := stop(); code != exitOK {
		t.Fatalf("stop: exit %d: %s", code, errText)
	}
}
