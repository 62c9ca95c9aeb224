package restapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/server/grpcfront"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is the REST front over memrank's whole read stack, in process: the
// embedded store served on an in-memory listener (with an interceptor that
// records the metadata every call arrives with), memrank's gRPC front with
// the real ranker over it, and this front's stubs pointed at the gRPC front,
// the way `memrank serve` wires them. The REST front itself is served on
// loopback.
type env struct {
	t     *testing.T
	url   string
	db    *store.DB
	codec *memory.Codec
	seen  *mdLog
}

// mdLog records the incoming metadata of every call the store receives.
type mdLog struct {
	mu    sync.Mutex
	calls []storeCall
}

type storeCall struct {
	method string
	md     metadata.MD
}

func (l *mdLog) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	l.mu.Lock()
	l.calls = append(l.calls, storeCall{method: info.FullMethod, md: md.Copy()})
	l.mu.Unlock()
	return handler(ctx, req)
}

// since returns the calls recorded after the first n.
func (l *mdLog) since(n int) []storeCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]storeCall(nil), l.calls[n:]...)
}

func (l *mdLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// fixtureNow is the ranker's clock.
var fixtureNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{InitialMmapSize: 1 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	})
	seen := &mdLog{}
	ip := upstream.ServeInProcess(store.NewServer(db, grpc.ChainUnaryInterceptor(seen.intercept)))
	t.Cleanup(func() { _ = ip.Close() })
	ctx := context.Background()
	up, err := upstream.DialInProcess(ctx, ip)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	src, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	// Age weighed on every query (focus 1), so the fixture's order is
	// memrank's, not the store's (the focus is rank's to test): the front
	// must carry whatever order the ranker gives.
	params := scoring.DefaultParams()
	params.FocusFloor = 1
	codec, err := memory.NewCodec(memory.DefaultKeys(), params)
	if err != nil {
		t.Fatal(err)
	}
	ranker, err := rank.New(src, rank.Config{Codec: codec, Now: func() time.Time { return fixtureNow }, Guard: rank.Guard{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	front, err := grpcfront.New(grpcfront.Config{Upstream: up, Ranker: ranker})
	if err != nil {
		t.Fatal(err)
	}
	fp := upstream.ServeInProcess(front)
	t.Cleanup(func() { _ = fp.Close() })
	conn, err := upstream.DialInProcess(ctx, fp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	cfg := Config{
		Points:      qdrant.NewPointsClient(conn),
		Collections: qdrant.NewCollectionsClient(conn),
		Qdrant:      qdrant.NewQdrantClient(conn),
	}
	if mod != nil {
		mod(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, url: srv.URL, db: db, codec: codec, seen: seen}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) String() string { return string(r.body) }

// do sends one request; body "" sends none.
func (e *env) do(method, path, body string, headers ...string) resp {
	e.t.Helper()
	return doRequest(e.t, e.url, method, path, body, headers...)
}

func doRequest(t testing.TB, base, method, path, body string, headers ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// ok sends a request that must succeed and returns the raw "result".
func (e *env) ok(method, path, body string) json.RawMessage {
	e.t.Helper()
	r := e.do(method, path, body)
	if r.status != http.StatusOK {
		e.t.Fatalf("%s %s: HTTP %d: %s", method, path, r.status, r.body)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Status string          `json:"status"`
		Time   *float64        `json:"time"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		e.t.Fatalf("%s %s: %v: %s", method, path, err, r.body)
	}
	if env.Status != "ok" || env.Time == nil || env.Result == nil {
		e.t.Fatalf("%s %s: not Qdrant's success envelope: %s", method, path, r.body)
	}
	return env.Result
}

// fail sends a request that must fail with status and a message
// containing want; it checks Qdrant's error envelope.
func (e *env) fail(method, path, body string, status int, want string) string {
	e.t.Helper()
	r := e.do(method, path, body)
	return checkError(e.t, r, status, want)
}

func checkError(t testing.TB, r resp, status int, want string) string {
	t.Helper()
	if r.status != status {
		t.Fatalf("HTTP %d, want %d: %s", r.status, status, r.body)
	}
	var env struct {
		Status struct {
			Error string `json:"error"`
		} `json:"status"`
		Time   *float64        `json:"time"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("not JSON: %v: %s", err, r.body)
	}
	if env.Time == nil || env.Result != nil || env.Status.Error == "" {
		t.Fatalf("not Qdrant's error envelope: %s", r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if !strings.Contains(env.Status.Error, want) {
		t.Fatalf("error %q does not contain %q", env.Status.Error, want)
	}
	return env.Status.Error
}

var timeField = regexp.MustCompile(`"time":[-+0-9.eE]+`)

// golden compares a response body (time zeroed, indented; number literals
// are kept exactly as written) with testdata/<name>.json.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	norm := timeField.ReplaceAll(body, []byte(`"time":0`))
	var buf bytes.Buffer
	if err := json.Indent(&buf, norm, "", "  "); err != nil {
		t.Fatalf("%s: not JSON: %v: %s", name, err, body)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, buf.Bytes(), want)
	}
}

// createCollection makes a 4-dim collection with the given distance.
func (e *env) createCollection(name, distance string) {
	e.t.Helper()
	res := e.ok("PUT", "/collections/"+name, `{"vectors":{"size":4,"distance":"`+distance+`"}}`)
	if string(res) != "true" {
		e.t.Fatalf("create %s: %s", name, res)
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
