package main

import (
	"strings"
	"testing"
)

// TestCreateCollectionURL: create-collection --url asks a running serve,
// where under tenancy only an administrator may make a collection; a
// tenant then embeds texts with /v1/embeddings.
func TestCreateCollectionURL(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__API_KEYS=key-alice=alice",
		"MEMRANK_TENANCY__ADMIN_API_KEYS=[key-root]",
	}, "--data", t.TempDir())
	base := "http://" + httpAddr
	for _, tt := range []struct {
		name, key  string
		code       int
		out, inErr string
	}{
		{"a tenant", "key-alice", 1, "", "administrator"},
		{"the administrator", "key-root", 0, "made memory collection shared (memrank-local-sem-v1:384, 384 dimensions", ""},
		{"again", "key-root", 0, "memory collection shared already existed, kept as it is", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, "create-collection", "--url", base, "--api-key", tt.key, "--collection", "shared")
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.inErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tt.code, tt.out, tt.inErr)
			}
		})
	}
	body := `{"model":"memrank-local-sem-v1:384","input":["Dana uses Neovim"],"encoding_format":"base64"}`
	if code, got := jsonRequest(t, "POST", base+"/v1/embeddings", body, "Authorization", "Bearer key-alice"); code != 200 || !strings.Contains(got, `"object":"embedding"`) {
		t.Errorf("a tenant's embeddings: %d %.300s", code, got)
	}
	if code, got := jsonRequest(t, "POST", base+"/v1/embeddings", body); code != 401 || !strings.Contains(got, `"type":"authentication_error"`) {
		t.Errorf("embeddings without a key: %d %.300s", code, got)
	}
}

// TestEmbeddingsStoreKeys: with store.api_key, /v1/embeddings is refused
// to whom the store refuses a retrieve, though it reads no collection.
func TestEmbeddingsStoreKeys(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_STORE__API_KEY=rw-key",
		"MEMRANK_STORE__READ_ONLY_API_KEY=ro-key",
	}, "--data", t.TempDir())
	body := `{"input":"Dana uses Neovim"}`
	for _, tt := range []struct {
		name, key string
		code      int
	}{
		{"no key", "", 401},
		{"a wrong key", "nope", 403},
		{"the read-only key", "ro-key", 200},
		{"the key", "rw-key", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, got := jsonRequest(t, "POST", "http://"+httpAddr+"/v1/embeddings", body, "api-key", tt.key); code != tt.code {
				t.Errorf("HTTP %d %.300s, want %d", code, got, tt.code)
			}
		})
	}
}
