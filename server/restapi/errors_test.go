package restapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/qdrantjson"
)

const (
	notFound  = "Not found: Collection `nope` doesn't exist!"
	queryPath = "/collections/c/points/query"
)

// badInputCases run against collection "c" (4 dims, Cosine) holding point 1;
// their bodies also seed the fuzz targets.
var badInputCases = []struct {
	name, method, path, body string
	status                   int
	want                     string
}{
	{"malformed JSON", "POST", queryPath, `{"query":[1,0,0,0],`, 400, "Format error in JSON body: EOF while parsing an object at line 1 column 19"},
	{"not JSON", "POST", queryPath, `query=1`, 400, "Format error in JSON body: expected value at line 1 column 1"},
	{"empty body", "POST", "/collections/c/points/scroll", ``, 400, "Format error in JSON body: EOF while parsing a value"},
	{"trailing garbage", "POST", queryPath, `{} {}`, 400, "trailing characters at line 1 column 4"},
	{"trailing comma", "POST", queryPath, `{"limit":1,}`, 400, "trailing comma at line 1 column 12"},
	{"second line", "POST", queryPath, "{\n  \"limit\": x}", 400, "expected value at line 2 column 12"},
	{"lone surrogate", "POST", queryPath, `{"using":"\ud800"}`, 400, "Format error in JSON body"},
	{"invalid UTF-8", "POST", queryPath, "{\"using\":\"\xff\xfe\"}", 400, "Format error in JSON body: invalid unicode code point"},
	{"path not UTF-8", "GET", "/collections/%FF%FE", ``, 400, "Wrong input: the path is not valid UTF-8 once decoded"},
	{"path not UTF-8, body route", "POST", "/collections/%FF%FE/points/scroll", `{}`, 400, "Wrong input: the path is not valid UTF-8 once decoded"},
	{"invalid UTF-8 in payload", "PUT", "/collections/c/points", "{\"points\":[{\"id\":2,\"vector\":[1,0,0,0],\"payload\":{\"k\":\"\xc3\x28\"}}]}", 400, "invalid unicode code point"},
	{"too deep", "POST", queryPath, strings.Repeat("[", 200) + strings.Repeat("]", 200), 400, "recursion limit exceeded"},
	{"too large", "POST", queryPath, `{"query":[` + strings.Repeat("0,", 40000) + `0]}`, 400, "larger than allowed (limit: 65536 bytes)"},
	{"wrong type", "POST", queryPath, `{"limit":"ten"}`, 400, "Format error in JSON body: limit: invalid type: string \"ten\", expected a non-negative integer"},
	{"duplicate field", "POST", queryPath, `{"limit":1,"limit":2}`, 400, "duplicate field `limit`"},

	{"query dimension", "POST", queryPath, `{"query":[1,0,0]}`, 400, "Vector dimension error: expected dim: 4, got 3"},
	{"search dimension", "POST", "/collections/c/points/search", `{"vector":[1,0,0],"limit":1}`, 400, "Vector dimension error: expected dim: 4, got 3"},
	{"upsert dimension", "PUT", "/collections/c/points?wait=true", `{"points":[{"id":3,"vector":[1,0,0,0,0]}]}`, 400, "Vector dimension error: expected dim: 4, got 5"},
	{"batch dimension", "POST", "/collections/c/points/query/batch", `{"searches":[{"query":[1,0,0,0]},{"query":[1]}]}`, 400, "Vector dimension error: expected dim: 4, got 1"},

	{"limit 0", "POST", queryPath, `{"query":[1,0,0,0],"limit":0}`, 422, "Validation error in JSON body: [limit: value 0 invalid, must be 1 or larger]"},
	{"limit negative", "POST", queryPath, `{"query":[1,0,0,0],"limit":-1}`, 400, "limit: invalid value: integer `-1`"},
	{"limit fraction", "POST", queryPath, `{"query":[1,0,0,0],"limit":1.5}`, 400, "limit: invalid type: floating point `1.5`"},
	{"limit above u64", "POST", queryPath, `{"query":[1,0,0,0],"limit":18446744073709551616}`, 400, "limit: invalid value: integer `18446744073709551616`"},
	{"search limit 0", "POST", "/collections/c/points/search", `{"vector":[1,0,0,0],"limit":0}`, 422, "[limit: value 0 invalid, must be 1 or larger]"},
	{"search without limit", "POST", "/collections/c/points/search", `{"vector":[1,0,0,0]}`, 400, "missing field `limit`"},
	{"scroll limit 0", "POST", "/collections/c/points/scroll", `{"limit":0}`, 422, "[limit: value 0 invalid, must be 1 or larger]"},
	{"scroll limit above u32", "POST", "/collections/c/points/scroll", `{"limit":4294967296}`, 422, "must be 4294967295 or smaller"},
	{"groups size 0", "POST", "/collections/c/points/query/groups", `{"query":[1,0,0,0],"group_by":"k","group_size":0}`, 422, "[group_size: value 0 invalid, must be 1 or larger]"},

	{"query unknown collection", "POST", "/collections/nope/points/query", `{"query":[1,0,0,0]}`, 404, notFound},
	{"search unknown collection", "POST", "/collections/nope/points/search", `{"vector":[1,0,0,0],"limit":1}`, 404, notFound},
	{"batch unknown collection", "POST", "/collections/nope/points/query/batch", `{"searches":[{"query":[1,0,0,0]}]}`, 404, notFound},
	{"groups unknown collection", "POST", "/collections/nope/points/query/groups", `{"query":[1,0,0,0],"group_by":"k"}`, 404, notFound},
	{"scroll unknown collection", "POST", "/collections/nope/points/scroll", `{}`, 404, notFound},
	{"count unknown collection", "POST", "/collections/nope/points/count", `{}`, 404, notFound},
	{"upsert unknown collection", "PUT", "/collections/nope/points", `{"points":[{"id":1,"vector":[1,0,0,0]}]}`, 404, notFound},
	{"retrieve unknown collection", "POST", "/collections/nope/points", `{"ids":[1]}`, 404, notFound},
	{"get point unknown collection", "GET", "/collections/nope/points/1", ``, 404, notFound},
	{"get unknown collection", "GET", "/collections/nope", ``, 404, notFound},
	{"set payload unknown collection", "POST", "/collections/nope/points/payload", `{"payload":{},"points":[1]}`, 404, notFound},

	{"missing point", "GET", "/collections/c/points/42", ``, 404, "Not found: Point with id 42 does not exists!"},
	{"bad point id in path", "GET", "/collections/c/points/forty-two", ``, 400, `Can not recognize "forty-two" as point id`},
	{"bad point id in body", "POST", "/collections/c/points", `{"ids":[-1]}`, 400, "value integer `-1` is not a valid point ID, valid values are either an unsigned integer or a UUID"},
	{"float point id", "POST", "/collections/c/points", `{"ids":[1.0]}`, 400, "is not a valid point ID"},
	{"collection exists", "PUT", "/collections/c", `{"vectors":{"size":4,"distance":"Cosine"}}`, 409, "Collection `c` already exists!"},
	{"bad distance", "PUT", "/collections/d", `{"vectors":{"size":4,"distance":"cosine"}}`, 400, "unknown variant string \"cosine\", expected one of `Cosine`, `Euclid`, `Dot`, `Manhattan`"},

	{"unknown field", "POST", queryPath, `{"query":[1,0,0,0],"bogus":1}`, 400, "unknown field `bogus`, expected one of `shard_key`"},
	{"unknown nested field", "POST", queryPath, `{"query":{"nearest":[1,0,0,0],"boost":2}}`, 400, "query: unknown field `boost`, expected one of `nearest`, `mmr`"},
	{"unknown filter field", "POST", "/collections/c/points/count", `{"filter":{"must":[{"key":"k","matches":{"value":"v"}}]}}`, 400, "filter.must[0]: unknown field `matches`"},
	{"unknown point field", "PUT", "/collections/c/points", `{"points":[{"id":1,"vector":[1,0,0,0],"payloads":{}}]}`, 400, "points[0]: unknown field `payloads`"},

	{"timeout 0", "POST", queryPath + "?timeout=0", `{}`, 422, "[timeout: value 0 invalid, must be 1 or larger]"},
	{"timeout not a number", "POST", queryPath + "?timeout=soon", `{}`, 400, "Deserialize error in query parameters: timeout"},
	{"wait not a bool", "PUT", "/collections/c/points?wait=yes", `{"points":[]}`, 400, "wait: provided string was not `true` or `false`"},
	{"consistency", "POST", queryPath + "?consistency=some", `{}`, 400, "consistency"},

	{"unknown route", "GET", "/metrics-or-not", ``, 404, "does not translate GET /metrics-or-not"},
	{"untranslated route", "POST", "/collections/c/points/recommend", `{"positive":[1]}`, 404, "does not translate POST /collections/c/points/recommend"},
	{"untranslated method", "PATCH", "/collections/c", `{}`, 404, "does not translate PATCH /collections/c"},
	{"untranslated field value", "PUT", "/collections/d", `{"vectors":{"size":4,"distance":"Cosine"},"quantization_config":{"scalar":{"type":"int8"}}}`, 400, "quantization_config: `quantization_config` is not supported by memrank's REST front"},
}

// Bad input answers in Qdrant's error envelope {"status":{"error"},"time"}
// with Qdrant's HTTP code and words, and never panics (a panic would be a
// dropped connection, which doRequest turns into a fatal error).
func TestBadInput(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBodyBytes = 1 << 16 })
	e.createCollection("c", "Cosine")
	e.ok("PUT", "/collections/c/points?wait=true", `{"points":[{"id":1,"vector":[1,0,0,0],"payload":{"k":"v"}}]}`)
	for _, c := range badInputCases {
		t.Run(c.name, func(t *testing.T) {
			checkError(t, doRequest(t, e.url, c.method, c.path, c.body), c.status, c.want)
		})
	}

	// Huge limits and offsets pass the front without overflow (offset +
	// limit, limit x group_size) and reach the store, whose bound
	// (store.max_results) refuses them; Qdrant would answer what there is.
	for _, c := range []struct{ path, body string }{
		{queryPath, `{"query":[1,0,0,0],"limit":1000000000000}`},
		{queryPath, `{"query":[1,0,0,0],"limit":18446744073709551615}`},
		{queryPath, `{"query":[1,0,0,0],"limit":10,"offset":18446744073709551615}`},
		{queryPath, `{"query":[1,0,0,0],"limit":18446744073709551615,"offset":18446744073709551615}`},
		{queryPath, `{"limit":18446744073709551615,"offset":18446744073709551615}`},
		{queryPath, `{"prefetch":{"query":[1,0,0,0],"limit":18446744073709551615},"query":{"fusion":"rrf"},"limit":18446744073709551615}`},
		{"/collections/c/points/search", `{"vector":[1,0,0,0],"limit":18446744073709551615,"offset":5}`},
		{"/collections/c/points/query/batch", `{"searches":[{"query":[1,0,0,0],"limit":18446744073709551615}]}`},
		{"/collections/c/points/query/groups", `{"query":[1,0,0,0],"group_by":"k","limit":18446744073709551615,"group_size":18446744073709551615}`},
		{"/collections/c/points/search/groups", `{"vector":[1,0,0,0],"group_by":"k","limit":4294967295,"group_size":4294967295}`},
	} {
		r := e.do("POST", c.path, c.body)
		if r.status != 400 || !bytes.Contains(r.body, []byte("beyond this store's bound of 10000 points per request")) {
			t.Errorf("%s %s: HTTP %d %s, want the store's bound", c.path, c.body, r.status, r.body)
		}
	}
	r := e.do("POST", "/collections/c/points/scroll", `{"limit":4294967295}`)
	checkEnvelope(t, r)

	// A timeout beyond what a Duration holds means no deadline, not one
	// already passed.
	r = e.do("POST", "/collections/c/points/count?timeout=18446744073709551615", `{}`)
	checkEnvelope(t, r)

	// A trailing slash is ignored, as by Qdrant.
	r = e.do("GET", "/collections/c/exists/", "")
	checkEnvelope(t, r)
}

// fakePoints answers every Points call with one error, and records the
// metadata it arrived with (the REST front's outgoing metadata).
type fakePoints struct {
	qdrant.PointsClient // nil: methods not overridden panic, so a test would see it
	err                 error
	trailer             metadata.MD
	block               bool // wait for the call's deadline
	deadline            time.Duration
	timeout             uint64 // the request's Timeout field
}

func (f *fakePoints) Query(ctx context.Context, req *qdrant.QueryPoints, opts ...grpc.CallOption) (*qdrant.QueryResponse, error) {
	if d, ok := ctx.Deadline(); ok {
		f.deadline = time.Until(d)
	}
	f.timeout = req.GetTimeout()
	if f.block {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	for _, o := range opts {
		if tr, ok := o.(grpc.TrailerCallOption); ok && f.trailer != nil {
			*tr.TrailerAddr = f.trailer
		}
	}
	return nil, f.err
}

// Upstream gRPC statuses become Qdrant's HTTP codes; the upstream's words
// are kept, and transport noise (addresses) never reaches the caller.
func TestStatusMapping(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		trailer metadata.MD
		status  int
		want    string
		header  [2]string
	}{
		{"invalid argument", status.Error(codes.InvalidArgument, "Wrong input: bad"), nil, 400, "Wrong input: bad", [2]string{}},
		{"not found", status.Error(codes.NotFound, "Not found: Collection `x` doesn't exist!"), nil, 404, "Not found: Collection `x` doesn't exist!", [2]string{}},
		{"already exists", status.Error(codes.AlreadyExists, "exists"), nil, 409, "exists", [2]string{}},
		{"permission denied", status.Error(codes.PermissionDenied, "Forbidden: no"), nil, 403, "Forbidden: no", [2]string{}},
		{"unauthenticated", status.Error(codes.Unauthenticated, "Must provide an API key"), nil, 401, "Must provide an API key", [2]string{}},
		{"deadline", status.Error(codes.DeadlineExceeded, "Timeout error: slow"), nil, 408, "Timeout error: slow", [2]string{}},
		{"rate limit", status.Error(codes.ResourceExhausted, "Rate limiting exceeded"), metadata.Pairs("retry-after", "7"), 429, "Rate limiting exceeded", [2]string{"Retry-After", "7"}},
		{"insufficient storage", status.Error(codes.ResourceExhausted, "No space"), metadata.Pairs(qdrantjson.InsufficientStorageKey, "1"), 507, "No space", [2]string{}},
		{"internal", status.Error(codes.Internal, "Service internal error: boom"), nil, 500, "Service internal error: boom", [2]string{}},
		{"unimplemented", status.Error(codes.Unimplemented, "unknown method"), nil, 501, "unknown method", [2]string{}},
		{"unavailable transport", status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 10.0.0.7:6334: connect: connection refused\""), nil, 503, "Service unavailable: the upstream is not reachable", [2]string{}},
		{"not a status", context.DeadlineExceeded, nil, 408, "Timeout error", [2]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := &fakePoints{err: c.err, trailer: c.trailer}
			h, err := New(Config{Points: fp, Collections: qdrant.NewCollectionsClient(nil), Qdrant: fakeQdrant{}})
			if err != nil {
				t.Fatal(err)
			}
			r := serveOnce(t, h, "POST", "/collections/c/points/query", `{}`)
			msg := checkError(t, r, c.status, c.want)
			if strings.Contains(msg, "10.0.0.7") {
				t.Errorf("the upstream's address leaked: %q", msg)
			}
			if c.header[0] != "" && r.header.Get(c.header[0]) != c.header[1] {
				t.Errorf("%s: %q, want %q", c.header[0], r.header.Get(c.header[0]), c.header[1])
			}
		})
	}
}

// Every stub call has a deadline: the request's timeout parameter (plus a
// second, so the upstream's own timeout answer wins), else CallTimeout; one
// that runs out is Qdrant's 408.
func TestCallDeadline(t *testing.T) {
	fp := &fakePoints{block: true}
	h, err := New(Config{Points: fp, Collections: qdrant.NewCollectionsClient(nil), Qdrant: fakeQdrant{}, CallTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, serveOnce(t, h, "POST", queryPath, `{}`), 408, "Timeout error: the request did not complete in time")
	if fp.deadline <= 0 || fp.deadline > 50*time.Millisecond {
		t.Errorf("deadline %v, want CallTimeout", fp.deadline)
	}
	fp.block = false
	fp.err = status.Error(codes.DeadlineExceeded, "Timeout error: Operation 'Search' timed out after 5 seconds")
	checkError(t, serveOnce(t, h, "POST", queryPath+"?timeout=5", `{}`), 408, "Operation 'Search' timed out after 5 seconds")
	if fp.deadline <= 5*time.Second || fp.deadline > 6*time.Second || fp.timeout != 5 {
		t.Errorf("timeout=5: deadline %v and request timeout %d, want 5s + 1s and 5", fp.deadline, fp.timeout)
	}
}

// serveOnce runs one request through h without a server.
func serveOnce(t testing.TB, h http.Handler, method, path, body string, headers ...string) resp {
	t.Helper()
	req, err := http.NewRequest(method, path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	w := &recorder{header: http.Header{}}
	h.ServeHTTP(w, req)
	return resp{status: w.status, header: w.header, body: w.body.Bytes()}
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// Config.Validate refuses what New cannot work with.
func TestConfigValidate(t *testing.T) {
	ok := Config{Points: &fakePoints{}, Collections: qdrant.NewCollectionsClient(nil), Qdrant: fakeQdrant{}}
	if _, err := New(ok); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"no points":        func(c *Config) { c.Points = nil },
		"no collections":   func(c *Config) { c.Collections = nil },
		"no qdrant":        func(c *Config) { c.Qdrant = nil },
		"negative body":    func(c *Config) { c.MaxBodyBytes = -1 },
		"negative timeout": func(c *Config) { c.CallTimeout = -1 },
		"bad header":       func(c *Config) { c.ForwardHeaders = []string{"x tenant"} },
		"relative upstream": func(c *Config) {
			c.UpstreamREST = mustURL(t, "/qdrant")
		},
	} {
		c := ok
		mod(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// capturePoints records the requests it receives and answers them with
// Qdrant's asynchronous acknowledgement.
type capturePoints struct {
	qdrant.PointsClient
	upsert *qdrant.UpsertPoints
	query  *qdrant.QueryPoints
}

func (c *capturePoints) Upsert(_ context.Context, req *qdrant.UpsertPoints, _ ...grpc.CallOption) (*qdrant.PointsOperationResponse, error) {
	c.upsert = req
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{OperationId: ptr(uint64(42)), Status: qdrant.UpdateStatus_Acknowledged}}, nil
}

func (c *capturePoints) Query(_ context.Context, req *qdrant.QueryPoints, _ ...grpc.CallOption) (*qdrant.QueryResponse, error) {
	c.query = req
	return &qdrant.QueryResponse{}, nil
}

// The query parameters of writes and reads (wait, ordering, timeout,
// consistency) reach the request protos, and an asynchronous write answers
// Qdrant's "acknowledged".
func TestQueryParameters(t *testing.T) {
	cp := &capturePoints{}
	h, err := New(Config{Points: cp, Collections: qdrant.NewCollectionsClient(nil), Qdrant: fakeQdrant{}})
	if err != nil {
		t.Fatal(err)
	}
	r := serveOnce(t, h, "PUT", "/collections/c/points?wait=false&ordering=strong&timeout=3", `{"points":[{"id":1,"vector":[1,0]}]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"result":{"operation_id":42,"status":"acknowledged"}`) {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	u := cp.upsert
	if u.Wait == nil || *u.Wait || u.GetOrdering().GetType() != qdrant.WriteOrderingType_Strong || u.GetTimeout() != 3 || u.GetCollectionName() != "c" {
		t.Errorf("upsert request %v", u)
	}
	for param, want := range map[string]*qdrant.ReadConsistency{
		"majority": qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_Majority),
		"all":      qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_All),
		"quorum":   qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_Quorum),
		"2":        qdrant.NewReadConsistencyFactor(2),
	} {
		r := serveOnce(t, h, "POST", queryPath+"?consistency="+param, `{}`)
		if r.status != 200 || string(r.body[:len(`{"result":{"points":[]}`)]) != `{"result":{"points":[]}` {
			t.Fatalf("HTTP %d: %s", r.status, r.body)
		}
		if !proto.Equal(cp.query.GetReadConsistency(), want) {
			t.Errorf("consistency=%s: %v", param, cp.query.GetReadConsistency())
		}
		// Qdrant's defaults, set explicitly: limit 10, no payload, no vectors.
		if cp.query.GetLimit() != 10 || payloadRequested(cp.query.GetWithPayload()) || cp.query.GetWithVectors().GetEnable() {
			t.Errorf("defaults: %v", cp.query)
		}
	}
}

// TestUntranslatedOnTheEmbeddedStore: in front of the embedded store, with
// no Qdrant to forward to, an untranslated route says the store does not
// serve it and how to reach one that does; in front of Qdrant the answer
// points at --upstream-rest.
func TestUntranslatedOnTheEmbeddedStore(t *testing.T) {
	tests := []struct {
		name     string
		embedded bool
		want     string
	}{
		{"the embedded store", true, "Not found: memrank's REST front does not serve POST /collections/c/points/recommend: " +
			"the embedded store has only the routes the front translates; run Qdrant, and memrank serve with --upstream and --upstream-rest to forward it there"},
		{"Qdrant", false, "Not found: memrank's REST front does not translate POST /collections/c/points/recommend " +
			"(configure --upstream-rest to forward it to Qdrant)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.EmbeddedStore = tt.embedded })
			if got := checkError(t, e.do("POST", "/collections/c/points/recommend", `{"positive":[1],"limit":3}`), 404, tt.want); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
