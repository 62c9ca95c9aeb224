package restapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

// The read-path fixture: memories whose raw similarity order differs from
// memrank's, because the closest ones are stale or never used and farther
// ones fresh and used often. Two ids are above 2^53, so re-ranked answers
// carry them too.
type rankedMemory struct {
	id         uint64
	similarity float32 // cosine to fixtureQuery
	age        time.Duration
	accesses   int64
}

const (
	bigID1 = uint64(9007199254740993)     // 2^53 + 1: not representable as a float64
	bigID2 = uint64(18446744073709551615) // 2^64 - 1
	// anchorID is a point whose vector is fixtureQuery itself, stored as a
	// memory that is not retrievable: memrank never returns it, and a query
	// by its id (which Qdrant excludes from the answer) sees the same
	// similarities as a query by the raw vector.
	anchorID = uint64(99)
)

var (
	fixtureMem = []rankedMemory{
		{1, 0.80, 400 * 24 * time.Hour, 0},
		{2, 0.70, 300 * 24 * time.Hour, 1},
		{bigID1, 0.60, 2 * 24 * time.Hour, 40},
		{4, 0.50, 1 * time.Hour, 120},
		{bigID2, 0.40, 10 * 24 * time.Hour, 3},
	}
	fixtureQuery = []float32{1, 0, 0, 0, 0, 0, 0, 0}
)

// vectorAt is a unit vector at the given cosine to fixtureQuery, its rest
// on an axis of its own, so memories are far apart from one another (no
// tier-2 folding: pairwise cosines are products of similarities).
func vectorAt(sim float32, axis int) []float32 {
	v := make([]float32, len(fixtureQuery))
	v[0] = sim
	v[axis] = float32(math.Sqrt(float64(1 - sim*sim)))
	return v
}

func fixtureMemory(m rankedMemory) *memory.Memory {
	at := fixtureNow.Add(-m.age)
	return &memory.Memory{
		Text:           fmt.Sprintf("memory number %d about a different topic", m.id),
		MemoryType:     scoring.TypeFact,
		Source:         scoring.SourceDirect,
		ExtractorModel: "gpt-4o-mini",
		Grounding:      scoring.GroundingSupported,
		Confidence:     0.9,
		HasConfidence:  true,
		CreatedAt:      at,
		LastObservedAt: at,
		LastAccessedAt: at,
		AccessCounts:   []memory.AccessCount{{Replica: "other", Count: m.accesses}},
		Retrievable:    true,
	}
}

// jsonFloats writes a vector as a JSON array in shortest float32 form.
func jsonFloats(v []float32) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// loadRankedFixture creates collection "mem" and upserts the fixture through
// the REST front, payloads written as the JSON memrank's codec encodes,
// each with a "grp" key of its own for the group queries.
func (e *env) loadRankedFixture() {
	e.t.Helper()
	res := e.ok("PUT", "/collections/mem", fmt.Sprintf(`{"vectors":{"size":%d,"distance":"Cosine"}}`, len(fixtureQuery)))
	if string(res) != "true" {
		e.t.Fatalf("create mem: %s", res)
	}
	var pts []string
	point := func(id uint64, vec []float32, m *memory.Memory) {
		payload := e.codec.Encode(m)
		js := qdrantjson.AppendPayload(nil, payload)
		js = append(js[:len(js)-1], fmt.Sprintf(`,"grp":"g%d"}`, id)...)
		pts = append(pts, fmt.Sprintf(`{"id":%d,"vector":%s,"payload":%s}`, id, jsonFloats(vec), js))
	}
	for i, m := range fixtureMem {
		point(m.id, vectorAt(m.similarity, i+1), fixtureMemory(m))
	}
	anchor := fixtureMemory(rankedMemory{id: anchorID, age: time.Hour})
	anchor.Retrievable = false
	point(anchorID, fixtureQuery, anchor)
	res = e.ok("PUT", "/collections/mem/points?wait=true", `{"points":[`+strings.Join(pts, ",")+`]}`)
	if !bytes.Contains(res, []byte(`"status":"completed"`)) {
		e.t.Fatalf("upsert: %s", res)
	}
}

// expectedRanking is what docs/read-path.md says memrank answers for the
// fixture, computed from the scoring package: weight = base x freshness x
// boost with base the cosine, best first.
func expectedRanking(t testing.TB, codec *memory.Codec, limit int) ([]uint64, []float64) {
	t.Helper()
	type scored struct {
		id uint64
		w  float64
	}
	var all []scored
	for i, m := range fixtureMem {
		dec := codec.DecodeQdrant(codec.Encode(fixtureMemory(m)))
		in := codec.Inputs(&dec)
		in.Seq = i
		s := codec.Params().Evaluate(&in, float64(m.similarity), fixtureNow)
		all = append(all, scored{m.id, s.Weight})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.w, a.w) })
	var ids []uint64
	var ws []float64
	for _, s := range all[:limit] {
		ids, ws = append(ids, s.id), append(ws, s.w)
	}
	return ids, ws
}

// restPoint is a ScoredPoint or Record as read back: the id and score keep
// their literals.
type restPoint struct {
	ID      json.Number                `json:"id"`
	Version *json.Number               `json:"version"`
	Score   json.Number                `json:"score"`
	Payload map[string]json.RawMessage `json:"payload"`
	Vector  json.RawMessage            `json:"vector"`
}

func unmarshal(t testing.TB, raw []byte, dst any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}

// checkRanked asserts memrank's order, ids digit for digit, weights, and the
// ScoredPoint shape (version present; no payload or vector unasked).
func checkRanked(t *testing.T, name string, got []restPoint, wantIDs []uint64, wantWeights []float64) {
	t.Helper()
	var ids []string
	for _, p := range got {
		ids = append(ids, string(p.ID))
	}
	var want []string
	for _, id := range wantIDs {
		want = append(want, strconv.FormatUint(id, 10))
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("%s: order %v, want memrank's %v", name, ids, want)
	}
	for i, p := range got {
		score, err := strconv.ParseFloat(string(p.Score), 32)
		if err != nil {
			t.Fatalf("%s: score %q: %v", name, p.Score, err)
		}
		if math.Abs(score-wantWeights[i]) > 1e-5 {
			t.Errorf("%s: point %s score %v, want weight %v", name, p.ID, score, wantWeights[i])
		}
		if p.Version == nil {
			t.Errorf("%s: point %s has no version (the Python client requires it)", name, p.ID)
		}
		if p.Payload != nil || p.Vector != nil {
			t.Errorf("%s: point %s carries payload or vector the caller did not ask for", name, p.ID)
		}
	}
}

// End to end through the REST front, memrank's gRPC front, the real ranker
// and the embedded store: every read form answers memrank's order and
// weights, in Qdrant's REST shapes and envelope.
func TestEndToEndReranking(t *testing.T) {
	e := newEnv(t, nil)
	e.loadRankedFixture()
	const limit = 3
	wantIDs, wantWeights := expectedRanking(t, e.codec, limit)
	if slices.Equal(wantIDs, []uint64{1, 2, bigID1}) {
		t.Fatalf("the fixture is broken: memrank's order %v is the similarity order", wantIDs)
	}
	q := jsonFloats(fixtureQuery)

	queryForms := []struct{ name, body string }{
		{"raw vector", `{"query":` + q + `,"limit":3}`},
		{"nearest", `{"query":{"nearest":` + q + `},"limit":3,"with_payload":false}`},
		{"point id", `{"query":99,"limit":3}`},
		{"nearest point id", `{"query":{"nearest":99},"limit":3}`},
		{"python client", `{"query":{"nearest":` + q + `},"limit":3,"with_vector":false,"with_payload":false}`},
	}
	for _, f := range queryForms {
		t.Run("query/"+f.name, func(t *testing.T) {
			r := e.do("POST", "/collections/mem/points/query", f.body)
			checkEnvelope(t, r)
			var got struct {
				Result struct {
					Points []restPoint `json:"points"`
				} `json:"result"`
				Status string      `json:"status"`
				Time   json.Number `json:"time"`
			}
			unmarshal(t, r.body, &got)
			checkRanked(t, f.name, got.Result.Points, wantIDs, wantWeights)
		})
	}

	t.Run("search", func(t *testing.T) {
		var got struct {
			Result []restPoint `json:"result"`
			Status string      `json:"status"`
			Time   json.Number `json:"time"`
		}
		r := e.do("POST", "/collections/mem/points/search", `{"vector":`+q+`,"limit":3}`)
		checkEnvelope(t, r)
		unmarshal(t, r.body, &got)
		checkRanked(t, "search", got.Result, wantIDs, wantWeights)
	})

	t.Run("search/batch", func(t *testing.T) {
		var got struct {
			Result [][]restPoint `json:"result"`
			Status string        `json:"status"`
			Time   json.Number   `json:"time"`
		}
		r := e.do("POST", "/collections/mem/points/search/batch", `{"searches":[{"vector":`+q+`,"limit":3},{"vector":`+q+`,"top":2}]}`)
		checkEnvelope(t, r)
		unmarshal(t, r.body, &got)
		if len(got.Result) != 2 {
			t.Fatalf("%d results: %s", len(got.Result), r.body)
		}
		checkRanked(t, "search/batch[0]", got.Result[0], wantIDs, wantWeights)
		checkRanked(t, "search/batch[1]", got.Result[1], wantIDs[:2], wantWeights[:2])
	})

	t.Run("query/batch", func(t *testing.T) {
		var got struct {
			Result []struct {
				Points []restPoint `json:"points"`
			} `json:"result"`
			Status string      `json:"status"`
			Time   json.Number `json:"time"`
		}
		r := e.do("POST", "/collections/mem/points/query/batch", `{"searches":[{"query":`+q+`,"limit":3},{"query":{"nearest":99},"limit":3}]}`)
		checkEnvelope(t, r)
		unmarshal(t, r.body, &got)
		if len(got.Result) != 2 {
			t.Fatalf("%d results: %s", len(got.Result), r.body)
		}
		checkRanked(t, "query/batch[0]", got.Result[0].Points, wantIDs, wantWeights)
		checkRanked(t, "query/batch[1]", got.Result[1].Points, wantIDs, wantWeights)
	})

	t.Run("query/groups", func(t *testing.T) {
		var got struct {
			Result struct {
				Groups []struct {
					ID   string      `json:"id"`
					Hits []restPoint `json:"hits"`
				} `json:"groups"`
			} `json:"result"`
			Status string      `json:"status"`
			Time   json.Number `json:"time"`
		}
		r := e.do("POST", "/collections/mem/points/query/groups", `{"query":`+q+`,"group_by":"grp","group_size":1,"limit":3}`)
		checkEnvelope(t, r)
		unmarshal(t, r.body, &got)
		var hits []restPoint
		for _, g := range got.Result.Groups {
			if len(g.Hits) != 1 {
				t.Fatalf("group %s: %d hits: %s", g.ID, len(g.Hits), r.body)
			}
			if g.ID != "g"+string(g.Hits[0].ID) {
				t.Errorf("group %s holds point %s", g.ID, g.Hits[0].ID)
			}
			hits = append(hits, g.Hits[0])
		}
		checkRanked(t, "query/groups", hits, wantIDs, wantWeights)
	})

	t.Run("with_payload", func(t *testing.T) {
		var got struct {
			Result struct {
				Points []restPoint `json:"points"`
			} `json:"result"`
			Status string      `json:"status"`
			Time   json.Number `json:"time"`
		}
		r := e.do("POST", "/collections/mem/points/query", `{"query":`+q+`,"limit":3,"with_payload":["grp"]}`)
		checkEnvelope(t, r)
		unmarshal(t, r.body, &got)
		for i, p := range got.Result.Points {
			if p.ID != json.Number(strconv.FormatUint(wantIDs[i], 10)) {
				t.Fatalf("order %v", got.Result.Points)
			}
			want := `"g` + string(p.ID) + `"`
			if len(p.Payload) != 1 || string(p.Payload["grp"]) != want {
				t.Errorf("point %s payload %v, want only grp=%s", p.ID, p.Payload, want)
			}
		}
	})
}

// checkEnvelope asserts Qdrant's success envelope, member for member.
func checkEnvelope(t testing.TB, r resp) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if len(env) != 3 || env["result"] == nil || string(env["status"]) != `"ok"` {
		t.Fatalf("not Qdrant's envelope {result,status:ok,time}: %s", r.body)
	}
	var secs float64
	if err := json.Unmarshal(env["time"], &secs); err != nil || secs < 0 {
		t.Fatalf("time %s: %v", env["time"], err)
	}
}
