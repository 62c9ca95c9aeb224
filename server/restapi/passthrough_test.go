package restapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/store"
)

// step is one request of a pass-through script: its answer must be HTTP 200
// and equal testdata/<golden>.json (time zeroed).
type step struct {
	golden       string
	method, path string
	body         string
}

func (e *env) run(t *testing.T, steps []step) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, s := range steps {
		r := e.do(s.method, s.path, s.body)
		if r.status != http.StatusOK {
			t.Fatalf("%s %s %s: HTTP %d: %s", s.golden, s.method, s.path, r.status, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", s.golden, ct)
		}
		golden(t, s.golden, r.body)
		out[s.golden] = r.body
	}
	return out
}

const (
	uuidID  = "550e8400-e29b-41d4-a716-446655440000"
	payload = `{"f":3.0,"i":3,"big":9007199254740993,"neg":-7,"exp":1e3,"s":"x","t":true,"n":null,"nested":{"a":[1,2.5,"z"]}}`
)

// passThroughSteps is the script of TestPassThroughRoutes; its bodies also
// seed the fuzz targets.
var passThroughSteps = []step{
	{"root", "GET", "/", ""},
	{"create", "PUT", "/collections/docs", `{"vectors":{"size":4,"distance":"Dot"},"hnsw_config":{"m":8},"optimizers_config":{"default_segment_number":2}}`},
	{"exists_true", "GET", "/collections/docs/exists", ""},
	{"exists_false", "GET", "/collections/nope/exists", ""},
	{"list", "GET", "/collections", ""},
	{"get_collection_empty", "GET", "/collections/docs", ""},
	{"upsert_batch", "PUT", "/collections/docs/points?wait=true", `{"batch":{"ids":[1,2],"vectors":[[0.1,0.2,0.3,0.4],[0.4,0.3,0.2,0.1]],"payloads":[` + payload + `,{"s":"two","i":2}]}}`},
	{"upsert_list", "PUT", "/collections/docs/points?wait=true", `{"points":[` +
		`{"id":9007199254740993,"vector":[1,0,0,0],"payload":` + payload + `},` +
		`{"id":18446744073709551615,"vector":[0,1,0,0],"payload":{"f":3.0,"i":3}},` +
		`{"id":"550E8400-E29B-41D4-A716-446655440000","vector":[0,0,1,0],"payload":{"s":"uuid"}}]}`},
	{"retrieve", "POST", "/collections/docs/points", `{"ids":[9007199254740993,18446744073709551615,"` + uuidID + `",12345],"with_payload":true,"with_vector":true}`},
	{"retrieve_default", "POST", "/collections/docs/points", `{"ids":[1,2]}`},
	{"get_point_big", "GET", "/collections/docs/points/9007199254740993", ""},
	{"get_point_max", "GET", "/collections/docs/points/18446744073709551615", ""},
	{"get_point_uuid", "GET", "/collections/docs/points/" + uuidID, ""},
	{"scroll_page1", "POST", "/collections/docs/points/scroll", `{"limit":2,"with_payload":["s"]}`},
	{"scroll_page2", "POST", "/collections/docs/points/scroll", `{"limit":2,"offset":9007199254740993,"with_payload":false,"with_vector":true}`},
	{"scroll_last", "POST", "/collections/docs/points/scroll", `{"limit":10,"offset":"` + uuidID + `"}`},
	{"scroll_filter", "POST", "/collections/docs/points/scroll", `{"filter":{"must":{"key":"i","match":{"value":3}}},"with_payload":false}`},
	{"count", "POST", "/collections/docs/points/count", `{}`},
	{"count_filter", "POST", "/collections/docs/points/count", `{"filter":{"should":[{"key":"s","match":{"any":["two","uuid"]}}]},"exact":true}`},
	{"set_payload", "POST", "/collections/docs/points/payload?wait=true", `{"payload":{"x":1.5,"f":4},"points":[1]}`},
	{"set_payload_key", "POST", "/collections/docs/points/payload?wait=true", `{"payload":{"b":true,"c":2.0},"points":[1],"key":"nested"}`},
	{"after_set", "GET", "/collections/docs/points/1", ""},
	{"overwrite_payload", "PUT", "/collections/docs/points/payload?wait=true", `{"payload":{"only":3.0},"points":[2]}`},
	{"after_overwrite", "GET", "/collections/docs/points/2", ""},
	{"delete_payload", "POST", "/collections/docs/points/payload/delete?wait=true", `{"keys":["i","nested.a"],"points":[9007199254740993]}`},
	{"after_delete_payload", "GET", "/collections/docs/points/9007199254740993", ""},
	{"set_payload_filter", "POST", "/collections/docs/points/payload?wait=true", `{"payload":{"tagged":1},"filter":{"must":[{"key":"f","match":{"value":4}}]}}`},
	{"clear_payload", "POST", "/collections/docs/points/payload/clear?wait=true", `{"points":[18446744073709551615]}`},
	{"after_clear", "GET", "/collections/docs/points/18446744073709551615", ""},
	{"delete_ids", "POST", "/collections/docs/points/delete?wait=true", `{"points":[1]}`},
	{"delete_filter", "POST", "/collections/docs/points/delete?wait=true", `{"filter":{"must":[{"key":"s","match":{"value":"uuid"}}]}}`},
	{"count_after_delete", "POST", "/collections/docs/points/count", `{"exact":true}`},
	{"scroll_after_delete", "POST", "/collections/docs/points/scroll", `{}`},
	{"get_collection", "GET", "/collections/docs", ""},
	{"delete_collection", "DELETE", "/collections/docs", ""},
	{"delete_collection_again", "DELETE", "/collections/docs", ""},
	{"list_empty", "GET", "/collections", ""},
	{"create_idx", "PUT", "/collections/idx", `{"vectors":{"size":2,"distance":"Euclid"}}`},
	{"upsert_idx", "PUT", "/collections/idx/points?wait=true", `{"points":[{"id":7,"vector":[1,2],"payload":{"k":"seven","n":7}},{"id":8,"vector":[3,4],"payload":{"k":"eight","n":8.5}}]}`},
	{"create_index", "PUT", "/collections/idx/index?wait=true", `{"field_name":"k","field_schema":"keyword"}`},
	{"create_index_params", "PUT", "/collections/idx/index?wait=true", `{"field_name":"n","field_schema":{"type":"float","is_principal":true}}`},
	{"get_idx_collection", "GET", "/collections/idx", ""},
	{"query_euclid", "POST", "/collections/idx/points/query", `{"query":[3,4],"limit":2,"with_payload":{"include":["k"]},"with_vector":true}`},
	{"delete_index", "DELETE", "/collections/idx/index/k?wait=true", ""},
}

// The routes Qdrant's clients use for administration and writes translate
// faithfully: each answer matches a golden file written from Qdrant's REST
// shapes (run with -update to rewrite them, then review the diff).
func TestPassThroughRoutes(t *testing.T) {
	e := newEnv(t, nil)
	got := e.run(t, passThroughSteps)

	// A few facts checked on the bytes themselves, not only via the goldens.
	mustContain := map[string][]string{
		"root":                    {`"title":"` + store.HealthTitle + `"`, `"version":"` + store.HealthVersion + `"`},
		"retrieve":                {`"id":9007199254740993`, `"id":18446744073709551615`, `"id":"` + uuidID + `"`, `"f":3.0`, `"i":3,`, `"big":9007199254740993`, `"exp":1000.0`},
		"get_point_max":           {`"id":18446744073709551615`, `"f":3.0`, `"i":3}`},
		"scroll_page1":            {`"next_page_offset":9007199254740993`},
		"scroll_page2":            {`"next_page_offset":"` + uuidID + `"`},
		"scroll_last":             {`"next_page_offset":null`},
		"count":                   {`"result":{"count":5}`},
		"count_filter":            {`"result":{"count":2}`},
		"after_set":               {`"x":1.5`, `"f":4,`, `"nested":{"a":[1,2.5,"z"],"b":true,"c":2.0}`},
		"after_overwrite":         {`"payload":{"only":3.0}`},
		"after_clear":             {`"payload":{}`},
		"count_after_delete":      {`"count":3`},
		"delete_collection":       {`"result":true`},
		"delete_collection_again": {`"result":false`},
		"exists_false":            {`"result":{"exists":false}`},
	}
	for name, subs := range mustContain {
		for _, s := range subs {
			if !bytes.Contains(got[name], []byte(s)) {
				t.Errorf("%s: %s does not contain %s", name, got[name], s)
			}
		}
	}
	// The default payload of retrieve is none; of GET by id, payload and vector.
	if bytes.Contains(got["retrieve_default"], []byte(`"payload"`)) || bytes.Contains(got["retrieve_default"], []byte(`"vector"`)) {
		t.Errorf("retrieve without selectors: %s", got["retrieve_default"])
	}
	if !bytes.Contains(got["get_point_uuid"], []byte(`"vector":[0.0,0.0,1.0,0.0]`)) {
		t.Errorf("GET by id without its vector: %s", got["get_point_uuid"])
	}
}

// The u64 ids and the integer / float distinction survive every route that
// carries them, the re-ranked query included.
func TestIDsAndNumbersRoundTrip(t *testing.T) {
	e := newEnv(t, nil)
	e.createCollection("ids", "Cosine")
	res := e.ok("PUT", "/collections/ids/points?wait=true", `{"points":[`+
		`{"id":9007199254740993,"vector":[1,0,0,0],"payload":{"f":3.0,"i":3}},`+
		`{"id":18446744073709551615,"vector":[0.5,0.5,0.5,0.5],"payload":{"f":3.0,"i":3}},`+
		`{"id":9007199254740992,"vector":[0,1,0,0],"payload":{"f":-0.5,"i":-3}}]}`)
	if !bytes.Contains(res, []byte(`"status":"completed"`)) {
		t.Fatalf("upsert: %s", res)
	}
	big := []string{"9007199254740993", "18446744073709551615"}
	for _, c := range []struct{ name, method, path, body string }{
		{"retrieve", "POST", "/collections/ids/points", `{"ids":[9007199254740993,18446744073709551615],"with_payload":true}`},
		{"scroll", "POST", "/collections/ids/points/scroll", `{"filter":{"must":{"has_id":[9007199254740993,18446744073709551615]}}}`},
		{"query", "POST", "/collections/ids/points/query", `{"query":[1,0,0,0],"limit":2,"with_payload":true}`},
		{"query by id", "POST", "/collections/ids/points/query", `{"query":9007199254740992,"limit":2,"with_payload":true}`},
		{"search", "POST", "/collections/ids/points/search", `{"vector":[1,0,0,0],"limit":2,"with_payload":true}`},
		{"query has_id", "POST", "/collections/ids/points/query", `{"filter":{"must":{"has_id":[9007199254740993,18446744073709551615]}},"with_payload":true}`},
	} {
		r := e.do(c.method, c.path, c.body)
		checkEnvelope(t, r)
		for _, id := range big {
			if !bytes.Contains(r.body, []byte(`"id":`+id+`,`)) {
				t.Errorf("%s: id %s lost: %s", c.name, id, r.body)
			}
		}
		if n := bytes.Count(r.body, []byte(`"payload":{"f":3.0,"i":3}`)); n != 2 {
			t.Errorf("%s: %d payloads {f:3.0,i:3} byte for byte, want 2: %s", c.name, n, r.body)
		}
	}
	for _, id := range big {
		r := e.do("GET", "/collections/ids/points/"+id, "")
		checkEnvelope(t, r)
		if !bytes.HasPrefix(r.body, []byte(`{"result":{"id":`+id+`,"payload":{"f":3.0,"i":3},"vector":`)) {
			t.Errorf("GET %s: %s", id, r.body)
		}
	}
	// 3 and 3.0 are different values to Qdrant's match: the integer matches
	// the integer only.
	var cnt struct {
		Result struct {
			Count int `json:"count"`
		} `json:"result"`
	}
	if err := json.Unmarshal(e.ok("POST", "/collections/ids/points/count", `{"filter":{"must":[{"key":"i","match":{"value":3}}]}}`), &cnt.Result); err != nil {
		t.Fatal(err)
	}
	if cnt.Result.Count != 2 {
		t.Errorf("match i=3: %d points, want 2", cnt.Result.Count)
	}
	if err := json.Unmarshal(e.ok("POST", "/collections/ids/points/count", `{"filter":{"must":[{"key":"f","match":{"value":3}}]}}`), &cnt.Result); err != nil {
		t.Fatal(err)
	}
	if cnt.Result.Count != 0 {
		t.Errorf("match f=3 on a stored 3.0: %d points, want 0 (a float is not an integer)", cnt.Result.Count)
	}
}

// fakeQdrant answers HealthCheck with a commit, as a real Qdrant does.
type fakeQdrant struct{ reply *qdrant.HealthCheckReply }

func (f fakeQdrant) HealthCheck(context.Context, *qdrant.HealthCheckRequest, ...grpc.CallOption) (*qdrant.HealthCheckReply, error) {
	return f.reply, nil
}

// GET / answers the upstream's title, version and commit unwrapped (the
// Python and JS clients' compatibility check reads version).
func TestRootReportsUpstream(t *testing.T) {
	commit := "e3ad7a8a1b2c3d4e5f"
	e := newEnv(t, func(c *Config) {
		c.Qdrant = fakeQdrant{reply: &qdrant.HealthCheckReply{Title: "qdrant - vector search engine", Version: "1.17.0", Commit: &commit}}
	})
	r := e.do("GET", "/", "")
	want := `{"title":"qdrant - vector search engine","version":"1.17.0","commit":"e3ad7a8a1b2c3d4e5f"}`
	if r.status != 200 || string(r.body) != want {
		t.Fatalf("GET /: HTTP %d %s, want %s", r.status, r.body, want)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
	}
}
