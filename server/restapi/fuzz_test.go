package restapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// Fuzz targets for the REST decoders of this package: the query and search
// body decoders, and (through the handler, over the embedded store) the
// point, payload, scroll, count and collection bodies. The JSON parser, the
// payload and filter codecs and point ids are fuzzed in qdrantjson.
// Properties: no panic; every refusal is one of the package's own errors
// with a Qdrant status; whatever is accepted marshals as a valid proto.

// seedBodies are the request bodies of the package's tests.
func seedBodies() []string {
	var out []string
	for _, c := range badInputCases {
		out = append(out, c.body)
	}
	for _, s := range passThroughSteps {
		out = append(out, s.body)
	}
	q := jsonFloats(fixtureQuery)
	out = append(out,
		`{"query":`+q+`,"limit":3}`, `{"query":{"nearest":99},"limit":3}`, `{"query":99}`,
		`{"searches":[{"query":`+q+`,"limit":3},{"query":{"nearest":99},"limit":3}]}`,
		`{"searches":[{"vector":`+q+`,"limit":3},{"vector":`+q+`,"top":2}]}`,
		`{"query":`+q+`,"group_by":"grp","group_size":1,"limit":3,"with_lookup":"c"}`,
		`{"vector":{"name":"dense","vector":[1,0]},"group_by":"g","group_size":2,"limit":2}`,
		`{"prefetch":[{"query":[1,0,0,0],"limit":50,"prefetch":{"query":{"indices":[1,7],"values":[0.5,0.25]},"using":"sparse"}}],"query":{"fusion":"rrf"},"limit":10}`,
		`{"prefetch":{"query":[0.1,0.2,0.3,0.4],"limit":50},"query":{"formula":{"mult":["$score",{"exp_decay":{"x":{"datetime_key":"at"},"target":{"datetime":"2024-01-01T00:00:00Z"},"scale":86400}}]},"defaults":{"at":"2024-01-01T00:00:00Z"}},"limit":10}`,
		`{"query":{"recommend":{"positive":[1,"550e8400-e29b-41d4-a716-446655440000"],"negative":[[1,0,0,0]],"strategy":"best_score"}}}`,
		`{"query":{"discover":{"target":1,"context":[{"positive":2,"negative":3}]}}}`,
		`{"query":{"order_by":{"key":"at","direction":"desc","start_from":"2024-01-01"}}}`,
		`{"query":{"sample":"random"},"limit":2}`,
		`{"query":{"nearest":[1,0,0,0],"mmr":{"diversity":0.5,"candidates_limit":100}},"params":{"hnsw_ef":128,"exact":true,"quantization":{"rescore":true}}}`,
		`{"query":{"relevance_feedback":{"target":1,"feedback":[{"example":2,"score":0.5}],"strategy":{"naive":{"a":1,"b":1,"c":1}}}}}`,
		`{"query":{"text":"where does Dana live","model":"local"},"using":"text","with_payload":{"exclude":["secret"]},"with_vectors":["text"]}`,
		`{"query":[[1,0],[0,1]],"score_threshold":0.2,"lookup_from":{"collection":"other","vector":"v"},"shard_key":["a",1]}`,
		`{"filter":{"must":[{"key":"kind","match":{"value":"note"}}]},"score_threshold":0.2,"limit":5,"with_payload":true}`,
	)
	return out
}

// checkDecodeErr asserts err is one of the package's refusals.
func checkDecodeErr(t *testing.T, err error) {
	t.Helper()
	var de *qdrantjson.Error
	if !errors.As(err, &de) {
		t.Fatalf("error %T %v is not a *qdrantjson.Error", err, err)
	}
	if st := de.Status(); st != http.StatusBadRequest && st != http.StatusUnprocessableEntity || de.Error() == "" {
		t.Fatalf("refusal with status %d and message %q", st, de.Error())
	}
	if !utf8.ValidString(de.Error()) {
		t.Fatalf("refusal message is not UTF-8: %q", de.Error())
	}
}

// checkProto asserts an accepted request can be sent over gRPC.
func checkProto(t *testing.T, m proto.Message) {
	t.Helper()
	if _, err := proto.Marshal(m); err != nil {
		t.Fatalf("accepted request does not marshal: %v: %v", err, m)
	}
}

func FuzzQueryBody(f *testing.F) {
	for _, b := range seedBodies() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		v, err := qdrantjson.Parse(body)
		if err != nil {
			return
		}
		if q, err := toQueryPoints(v, "", "c"); err != nil {
			checkDecodeErr(t, err)
		} else {
			if q.GetLimit() == 0 || q.GetCollectionName() != "c" {
				t.Fatalf("accepted query with limit %d on %q", q.GetLimit(), q.GetCollectionName())
			}
			checkProto(t, q)
		}
		if g, _, err := toQueryGroups(v, "c"); err != nil {
			checkDecodeErr(t, err)
		} else {
			if g.GetLimit() == 0 || g.GetGroupSize() == 0 || g.GetGroupBy() == "" && !strings.Contains(body, `"group_by":""`) {
				t.Fatalf("accepted groups query %v", g)
			}
			checkProto(t, g)
		}
		if items, err := batchItems(v); err != nil {
			checkDecodeErr(t, err)
		} else {
			for i, it := range items {
				if q, err := toQueryPoints(it, qdrantjson.Index("searches", i), "c"); err != nil {
					checkDecodeErr(t, err)
				} else {
					checkProto(t, q)
				}
			}
		}
	})
}

func FuzzSearchBody(f *testing.F) {
	for _, b := range seedBodies() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		v, err := qdrantjson.Parse(body)
		if err != nil {
			return
		}
		if s, err := toSearchPoints(v, "", "c"); err != nil {
			checkDecodeErr(t, err)
		} else {
			if s.GetLimit() == 0 {
				t.Fatalf("accepted search with limit 0")
			}
			checkProto(t, s)
		}
		if g, _, err := toSearchGroups(v, "c"); err != nil {
			checkDecodeErr(t, err)
		} else {
			if g.GetLimit() == 0 || g.GetGroupSize() == 0 {
				t.Fatalf("accepted search groups %v", g)
			}
			checkProto(t, g)
		}
		if items, err := batchItems(v); err != nil {
			checkDecodeErr(t, err)
		} else {
			for i, it := range items {
				if s, err := toSearchPoints(it, qdrantjson.Index("searches", i), "c"); err != nil {
					checkDecodeErr(t, err)
				} else {
					checkProto(t, s)
				}
			}
		}
	})
}

// fuzzRoutes are the body-reading routes whose decoders live in the
// handlers.
var fuzzRoutes = []struct{ method, path string }{
	{"PUT", "/collections/c/points?wait=true"},
	{"POST", "/collections/c/points"},
	{"POST", "/collections/c/points/delete?wait=true"},
	{"PUT", "/collections/c/points/vectors?wait=true"},
	{"POST", "/collections/c/points/vectors/delete?wait=true"},
	{"POST", "/collections/c/points/payload?wait=true"},
	{"PUT", "/collections/c/points/payload?wait=true"},
	{"POST", "/collections/c/points/payload/delete?wait=true"},
	{"POST", "/collections/c/points/payload/clear?wait=true"},
	{"POST", "/collections/c/points/scroll"},
	{"POST", "/collections/c/points/count"},
	{"PUT", "/collections/f"},
	{"PUT", "/collections/c/index?wait=true"},
	{"POST", "/collections/c/points/query"},
	{"POST", "/collections/c/points/search"},
	{"POST", "/collections/c/points/query/groups"},
}

// directHandler is the REST front straight over the embedded store (no
// ranker: the decoders are what is fuzzed), collection "c" with a point.
func directHandler(t testing.TB) http.Handler {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{InitialMmapSize: 1 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ip := upstream.ServeInProcess(store.NewServer(db))
	t.Cleanup(func() { _ = ip.Close() })
	conn, err := grpc.NewClient("passthrough:///embedded",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ip.Dial(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	h, err := New(Config{Points: qdrant.NewPointsClient(conn), Collections: qdrant.NewCollectionsClient(conn), Qdrant: qdrant.NewQdrantClient(conn)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/collections/c", `{"vectors":{"size":4,"distance":"Cosine"}}`},
		{"PUT", "/collections/c/points?wait=true", `{"points":[{"id":1,"vector":[1,0,0,0],"payload":{"k":"v"}}]}`},
	} {
		if res := serveOnce(t, h, r.method, r.path, r.body); res.status != 200 {
			t.Fatalf("%s %s: %d %s", r.method, r.path, res.status, res.body)
		}
	}
	return h
}

func FuzzRouteBody(f *testing.F) {
	for i := range fuzzRoutes {
		for _, b := range seedBodies() {
			f.Add(uint8(i), b)
		}
	}
	h := directHandler(f)
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		res := serveOnce(t, h, r.method, r.path, body)
		if !json.Valid(res.body) {
			t.Fatalf("%s %s: answer is not JSON: %s", r.method, r.path, res.body)
		}
		switch res.status {
		case 200:
			checkEnvelopeBytes(t, res.body)
		case 400, 404, 409, 422, 501: // 501: what the embedded store does not implement
			var env struct {
				Status struct {
					Error string `json:"error"`
				} `json:"status"`
			}
			if err := json.Unmarshal(res.body, &env); err != nil || env.Status.Error == "" {
				t.Fatalf("%s %s: not Qdrant's error envelope: %s", r.method, r.path, res.body)
			}
		default:
			t.Fatalf("%s %s %q: HTTP %d: %s", r.method, r.path, body, res.status, res.body)
		}
	})
}

func checkEnvelopeBytes(t *testing.T, b []byte) {
	t.Helper()
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil || string(env["status"]) != `"ok"` || env["result"] == nil || env["time"] == nil {
		t.Fatalf("not Qdrant's envelope: %s", b)
	}
}
