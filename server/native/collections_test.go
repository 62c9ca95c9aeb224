package native

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/tenancy"
)

// TestCreateCollectionRoute: PUT /v1/collections/{name} makes the memory
// collection and its companion, answers 200 again for an existing one
// (saying so), and 409 for a collection of another size.
func TestCreateCollectionRoute(t *testing.T) {
	h, client := embedEnv(t, Config{})
	ctx := context.Background()
	if err := client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "small",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 8, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	made := CreatedCollection{Collection: "notes", Created: true, Model: "memrank-local-sem-v1:384", Dimensions: 384,
		Distance: "Cosine", AuditCollection: "notes_memrank_audit"}
	existed := made
	existed.Created, existed.Existed = false, true
	tests := []struct {
		name, path, body string
		code             int
		want             *CreatedCollection
		inBody           string
	}{
		{name: "new", path: "/v1/collections/notes", code: 200, want: &made},
		{name: "again", path: "/v1/collections/notes", body: `{}`, code: 200, want: &existed},
		{name: "the name in the body too", path: "/v1/collections/notes", body: `{"collection":"notes"}`, code: 200, want: &existed},
		{name: "another name in the body", path: "/v1/collections/notes", body: `{"collection":"other"}`, code: 400, inBody: "the path names"},
		{name: "a key to set", path: "/v1/collections/notes", body: `{"vectors":{"size":3}}`, code: 400, inBody: "unknown field"},
		{name: "not JSON", path: "/v1/collections/notes", body: `{"collection":`, code: 400, inBody: "Format error in JSON body"},
		{name: "another size", path: "/v1/collections/small", code: 409, inBody: "collection small holds 8-dimensional vectors"},
		{name: "a companion", path: "/v1/collections/notes_memrank_audit", code: 400, inBody: "companions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, http.MethodPut, tt.path, tt.body)
			if r.code != tt.code || !strings.Contains(string(r.body), tt.inBody) {
				t.Fatalf("HTTP %d %s, want %d with %q", r.code, r.body, tt.code, tt.inBody)
			}
			if tt.want == nil {
				return
			}
			var got struct {
				Result CreatedCollection `json:"result"`
				Status string            `json:"status"`
			}
			if err := json.Unmarshal(r.body, &got); err != nil || got.Status != "ok" {
				t.Fatalf("%s: %v", r.body, err)
			}
			if d := cmp.Diff(*tt.want, got.Result); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
	for _, name := range []string{"notes", "notes_memrank_audit"} {
		if ok, err := client.CollectionExists(ctx, name); err != nil || !ok {
			t.Errorf("collection %s: exists %v, %v", name, ok, err)
		}
	}
	if r := do(t, h, http.MethodPost, "/v1/collections/notes", ``); r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != "PUT" {
		t.Errorf("POST: HTTP %d, Allow %q", r.code, r.header.Get("Allow"))
	}
}

// TestCreateCollectionAdminOnly: collections are every tenant's, so under
// tenancy only an administrator makes one.
func TestCreateCollectionAdminOnly(t *testing.T) {
	h, client := embedEnv(t, Config{Tenancy: &tenancy.Policy{Key: "user_id",
		APIKeys: map[string]string{"dana-key": "dana"}, AdminAPIKeys: []string{"admin-key"}}})
	for _, tt := range []struct {
		name, key string
		code      int
	}{
		{"no key", "", 401},
		{"a tenant", "dana-key", 403},
		{"an unknown key", "nope", 401},
		{"an administrator", "admin-key", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.key != "" {
				header = []string{"api-key", tt.key}
			}
			if r := do(t, h, http.MethodPut, "/v1/collections/shared", ``, header...); r.code != tt.code {
				t.Errorf("HTTP %d %s, want %d", r.code, r.body, tt.code)
			}
			ok, err := client.CollectionExists(context.Background(), "shared")
			if err != nil || ok != (tt.code == 200) {
				t.Errorf("collection exists %v (%v) after HTTP %d", ok, err, tt.code)
			}
		})
	}
}

// TestCreateCollectionNotConfigured: without the write path the route
// answers 501.
func TestCreateCollectionNotConfigured(t *testing.T) {
	h := newHandler(t, Config{Ranker: &fakeRetriever{}})
	if r := do(t, h, http.MethodPut, "/v1/collections/notes", ``); r.code != http.StatusNotImplemented {
		t.Errorf("HTTP %d %s, want 501", r.code, r.body)
	}
}
