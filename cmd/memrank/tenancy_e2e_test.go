package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/memrank/memrank/tenancy"
)

// recorderREST is Qdrant's REST API as a test sees it: every request that
// reaches it is recorded.
type recorderREST struct {
	mu  sync.Mutex
	got []string
}

func (u *recorderREST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.got = append(u.got, r.Method+" "+r.URL.Path+" "+string(b)+" api-key="+r.Header.Get("api-key"))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"result":{"from":"upstream"},"status":"ok","time":0}`)
}

func (u *recorderREST) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

// TestTenancyFailsClosed runs serve with tenants by API key and an upstream
// REST API that records what reaches it. Nothing a tenant sends reaches it
// raw (with no tenant filter): untranslated routes and unknown body fields
// are refused; a key memrank does not know is refused (401) everywhere,
// deleting a collection included; only an administrator's request is
// forwarded.
func TestTenancyFailsClosed(t *testing.T) {
	up := &recorderREST{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__API_KEYS=key-alice=alice,key-bob=bob",
		"MEMRANK_TENANCY__ADMIN_API_KEYS=[key-root]",
	}, "--data", t.TempDir(), "--upstream-rest", srv.URL)
	base := "http://" + httpAddr
	do := func(method, path, body, key string) (int, string) {
		t.Helper()
		return jsonRequest(t, method, base+path, body, "api-key", key)
	}
	if code, body := do("PUT", "/collections/tc", `{"vectors":{"size":4,"distance":"Cosine"}}`, "key-root"); code != 200 {
		t.Fatalf("the administrator cannot create a collection: %d %s", code, body)
	}
	for _, tt := range []struct {
		name, method, path, body, key string
		code                          int
		msg                           string
	}{
		{"unknown body field", "POST", "/collections/tc/points/scroll", `{"limit":100,"zzz":1}`, "key-alice", 403, "cannot be scoped to a tenant"},
		{"untranslated route", "POST", "/collections/tc/points/batch", `{"operations":[]}`, "key-alice", 403, "cannot be scoped to a tenant"},
		{"facet", "POST", "/collections/tc/facet", `{"key":"user_id"}`, "key-bob", 403, "cannot be scoped to a tenant"},
		{"snapshots", "GET", "/collections/tc/snapshots", ``, "key-alice", 403, "cannot be scoped to a tenant"},
		{"unknown key, untranslated", "POST", "/collections/tc/points/batch", `{"operations":[]}`, "not-a-real-key", 401, "invalid API key"},
		{"no key, untranslated", "GET", "/cluster", ``, "", 401, "must provide an API key"},
		{"unknown key deletes", "DELETE", "/collections/tc", ``, "not-a-real-key", 401, "invalid API key"},
		{"tenant deletes", "DELETE", "/collections/tc", ``, "key-alice", 403, "administrator"},
		{"unknown key scrolls", "POST", "/collections/tc/points/scroll", `{"limit":1}`, "not-a-real-key", 401, "invalid API key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := do(tt.method, tt.path, tt.body, tt.key)
			if code != tt.code || !strings.Contains(body, tt.msg) {
				t.Errorf("HTTP %d %s, want %d with %q", code, body, tt.code, tt.msg)
			}
		})
	}
	if got := up.requests(); len(got) != 0 {
		t.Fatalf("requests reached the upstream REST API unscoped: %q", got)
	}
	if code, body := do("GET", "/collections/tc", ``, "key-alice"); code != 200 {
		t.Errorf("the collection is gone or unreadable by its tenant: %d %s", code, body)
	}
	// An administrator's untranslated request is forwarded with its key.
	if code, body := do("POST", "/collections/tc/points/batch", `{"operations":[]}`, "key-root"); code != 200 || !strings.Contains(body, "upstream") {
		t.Errorf("an administrator's request was not forwarded: %d %s", code, body)
	}
	if got := up.requests(); len(got) != 1 || !strings.HasSuffix(got[0], "api-key=key-root") {
		t.Errorf("upstream saw %q", got)
	}
}

// TestTenancyJWT runs serve with tenants from a verified token's claim:
// a tenant's token writes and reads its own memories; a forged or expired
// token is refused (401), as is any request without one.
func TestTenancyJWT(t *testing.T) {
	secret := strings.Repeat("s", 32)
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__JWT__CLAIM=sub",
		"MEMRANK_TENANCY__JWT__HMAC_SECRET=" + secret,
	}, "--data", t.TempDir())
	token := func(sub, key string, exp time.Time) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": exp.Unix()}).SignedString([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	do := func(path, body, bearer string) (int, string) {
		t.Helper()
		if bearer != "" {
			bearer = "Bearer " + bearer
		}
		return jsonRequest(t, "POST", "http://"+httpAddr+path, body, "Authorization", bearer)
	}
	alice, bob := token("alice", secret, time.Now().Add(time.Hour)), token("bob", secret, time.Now().Add(time.Hour))
	if code, body := do("/v1/observe", `{"collection":"m","text":"Alice likes tea"}`, alice); code != 200 {
		t.Fatalf("alice observes: %d %s", code, body)
	}
	if code, body := do("/v1/retrieve", `{"collection":"m","text":"tea"}`, alice); code != 200 || !strings.Contains(body, "Alice likes tea") {
		t.Errorf("alice retrieves: %d %s", code, body)
	}
	if code, body := do("/v1/retrieve", `{"collection":"m","text":"tea"}`, bob); code != 200 || strings.Contains(body, "Alice likes tea") {
		t.Errorf("bob retrieves alice's memory: %d %s", code, body)
	}
	for name, bearer := range map[string]string{
		"forged":  token("alice", strings.Repeat("x", 32), time.Now().Add(time.Hour)),
		"expired": token("alice", secret, time.Now().Add(-time.Hour)),
		"none":    "",
	} {
		if code, body := do("/v1/retrieve", `{"collection":"m","text":"tea"}`, bearer); code != http.StatusUnauthorized {
			t.Errorf("%s token: %d %s", name, code, body)
		}
	}
}

// jsonRequest sends a JSON request to base+path with headers (name, value
// pairs; an empty value is left out) and returns the status and body.
func jsonRequest(t *testing.T, method, url, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] != "" {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestTenancyLine: serve says at start whether tenancy is on, and how.
func TestTenancyLine(t *testing.T) {
	for _, tt := range []struct {
		c    tenancy.Config
		want string
	}{
		{tenancy.Config{}, "tenancy off: every caller sees every memory"},
		{tenancy.Config{Key: "user_id", APIKeys: map[string]string{"k1": "a", "k2": "b"}, AdminAPIKeys: []string{"r"}},
			"tenancy on: payload key user_id, tenants from 2 API keys, 1 administrator keys"},
		{tenancy.Config{Key: "user_id", Header: "X-Tenant"},
			"tenancy on: payload key user_id, tenants from the X-Tenant header (trusted: keep memrank behind a gateway that sets it), 0 administrator keys"},
		{tenancy.Config{Key: "user_id", JWT: tenancy.JWTConfig{Claim: "sub"}},
			"tenancy on: payload key user_id, tenants from the sub claim of verified tokens, 0 administrator keys"},
	} {
		if got := tenancyLine(tt.c); got != tt.want {
			t.Errorf("tenancyLine = %q, want %q", got, tt.want)
		}
	}
}
