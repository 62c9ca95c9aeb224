package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/internal/demo"
)

// TestAuditCompanionReadOnly: the demo's audit companion can be read
// through memrank but neither forged nor erased, on the REST routes memrank
// translates, on the ones it forwards raw, and over gRPC.
func TestAuditCompanionReadOnly(t *testing.T) {
	up := &recorderREST{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	httpAddr, grpcAddr, _ := startServe(t, "--demo", "--data", t.TempDir(), "--upstream-rest", srv.URL)
	audit := demo.Collection + "_memrank_audit"
	base := "http://" + httpAddr
	do := func(method, path, body string) (int, string) {
		t.Helper()
		return jsonRequest(t, method, base+path, body)
	}
	code, before := do("POST", "/collections/"+audit+"/points/count", `{"exact":true}`)
	if code != 200 {
		t.Fatalf("the audit trail cannot be read: %d %s", code, before)
	}
	for _, tt := range []struct{ name, method, path, body string }{
		{"upsert", "PUT", "/collections/" + audit + "/points?wait=true", `{"points":[{"id":1,"vector":{},"payload":{"forged":true}}]}`},
		{"filtered delete", "POST", "/collections/" + audit + "/points/delete?wait=true", `{"filter":{"must":[]}}`},
		{"set payload", "POST", "/collections/" + audit + "/points/payload", `{"payload":{"x":1},"points":[1]}`},
		{"delete collection", "DELETE", "/collections/" + audit, ``},
		{"forwarded batch", "POST", "/collections/" + audit + "/points/batch", `{"operations":[]}`},
		{"alias", "POST", "/collections/aliases", `{"actions":[{"create_alias":{"collection_name":"` + audit + `","alias_name":"x"}}]}`},
		{"alias, escaped", "POST", "/collections/aliases", `{"actions":[{"create_alias":{"collection_name":"` + strings.Replace(audit, "_memrank", `\u005fmemrank`, 1) + `","alias_name":"x"}}]}`},
		{"alias onto the companion's name", "POST", "/collections/aliases", `{"actions":[{"rename_alias":{"old_alias_name":"a","new_alias_name":"` + audit + `"}}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := do(tt.method, tt.path, tt.body)
			if code != http.StatusForbidden || !strings.Contains(body, "audit trail") {
				t.Errorf("HTTP %d %s, want 403", code, body)
			}
		})
	}
	if got := up.requests(); len(got) != 0 {
		t.Errorf("writes to the audit trail reached the upstream REST API: %q", got)
	}

	host, port, _ := net.SplitHostPort(grpcAddr)
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: audit, Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}), Payload: qdrant.NewValueMap(map[string]any{"forged": true})}}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("gRPC upsert: %v", err)
	}
	if err := c.DeleteCollection(ctx, audit); status.Code(err) != codes.PermissionDenied {
		t.Errorf("gRPC delete collection: %v", err)
	}
	if n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: audit, Exact: qdrant.PtrOf(true)}); err != nil || n == 0 {
		t.Errorf("gRPC count: %d %v", n, err)
	}
	if code, after := do("POST", "/collections/"+audit+"/points/count", `{"exact":true}`); code != 200 || after[:strings.Index(after, `"time"`)] != before[:strings.Index(before, `"time"`)] {
		t.Errorf("the audit trail changed: %s -> %s", before, after)
	}
}
