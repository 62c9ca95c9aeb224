package locomo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// fakeStore keeps what was written; Query answers with the points of the
// collection whose turn ids the test's answer function names, in order.
type fakeStore struct {
	exists  map[string]bool
	created []string
	points  map[string][]*qdrant.PointStruct
	vectors map[string]*qdrant.VectorsConfig
	indexes map[string]map[string]*qdrant.PayloadSchemaInfo
	// answer gives the turn ids the store returns for a question's vector.
	answer func(vec []float32) []string
	log    *[]string
}

func (s *fakeStore) CollectionExists(_ context.Context, name string) (bool, error) {
	return s.exists[name], nil
}

func (s *fakeStore) CreateCollection(_ context.Context, req *qdrant.CreateCollection) error {
	s.created = append(s.created, fmt.Sprintf("%s %d %s", req.GetCollectionName(),
		req.GetVectorsConfig().GetParams().GetSize(), req.GetVectorsConfig().GetParams().GetDistance()))
	if s.vectors == nil {
		s.vectors = map[string]*qdrant.VectorsConfig{}
	}
	s.vectors[req.GetCollectionName()] = req.GetVectorsConfig()
	return nil
}

func (s *fakeStore) GetCollectionInfo(_ context.Context, name string) (*qdrant.CollectionInfo, error) {
	vc, ok := s.vectors[name]
	if !ok {
		return nil, fmt.Errorf("no collection %q", name)
	}
	return &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{VectorsConfig: vc}},
		PayloadSchema: s.indexes[name]}, nil
}

func (s *fakeStore) CreateFieldIndex(_ context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.UpdateResult, error) {
	if s.indexes == nil {
		s.indexes = map[string]map[string]*qdrant.PayloadSchemaInfo{}
	}
	if s.indexes[req.GetCollectionName()] == nil {
		s.indexes[req.GetCollectionName()] = map[string]*qdrant.PayloadSchemaInfo{}
	}
	// FieldType is PayloadSchemaType less one.
	s.indexes[req.GetCollectionName()][req.GetFieldName()] = &qdrant.PayloadSchemaInfo{
		DataType: qdrant.PayloadSchemaType(req.GetFieldType() + 1), Params: req.GetFieldIndexParams()}
	return &qdrant.UpdateResult{}, nil
}

// scrollPage is the fake's page size, smaller than any the harness asks
// for, so that every scroll pages.
const scrollPage = 4

func (s *fakeStore) ScrollAndOffset(_ context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error) {
	pts := s.points[req.GetCollectionName()]
	start := 0
	if off := req.GetOffset(); off != nil {
		start = slices.IndexFunc(pts, func(p *qdrant.PointStruct) bool { return p.GetId().String() == off.String() })
		if start < 0 {
			return nil, nil, fmt.Errorf("no point %v", off)
		}
	}
	end := min(start+scrollPage, len(pts))
	var out []*qdrant.RetrievedPoint
	for _, p := range pts[start:end] {
		rp := &qdrant.RetrievedPoint{Id: p.GetId()}
		if req.GetWithPayload().GetEnable() {
			rp.Payload = p.GetPayload()
		}
		if req.GetWithVectors().GetEnable() {
			rp.Vectors = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
				Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: p.GetVectors().GetVector().GetDense().GetData()}}}}}
		}
		out = append(out, rp)
	}
	if end == len(pts) {
		return out, nil, nil
	}
	return out, pts[end].GetId(), nil
}

func (s *fakeStore) Upsert(_ context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error) {
	if s.points == nil {
		s.points = map[string][]*qdrant.PointStruct{}
	}
	s.points[req.GetCollectionName()] = append(s.points[req.GetCollectionName()], req.GetPoints()...)
	return &qdrant.UpdateResult{}, nil
}

func (s *fakeStore) Query(_ context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	*s.log = append(*s.log, "raw "+req.GetCollectionName())
	if req.GetLimit() != Limit || !req.GetWithPayload().GetEnable() {
		return nil, fmt.Errorf("limit %d, with payload %v", req.GetLimit(), req.GetWithPayload())
	}
	vec := req.GetQuery().GetNearest().GetDense().GetData()
	var out []*qdrant.ScoredPoint
	for _, turn := range s.answer(vec) {
		for _, p := range s.points[req.GetCollectionName()] {
			covers := slices.ContainsFunc(p.GetPayload()["turn_ids"].GetListValue().GetValues(), func(v *qdrant.Value) bool {
				return TurnOf(v.GetStringValue()) == turn
			})
			if covers {
				out = append(out, &qdrant.ScoredPoint{Id: p.GetId(), Payload: p.GetPayload()})
			}
		}
	}
	return out, nil
}

// fakeEmbedder's vector of a text is its length and its number of words.
type fakeEmbedder struct{}

func (fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), float32(len(strings.Fields(t)))}
	}
	return out, nil
}
func (fakeEmbedder) Dimensions() int { return 2 }
func (fakeEmbedder) Model() string   { return "fake-v1:2" }

// fakeAsker answers both memrank systems with turn ids by question text.
type fakeAsker struct {
	answers map[string][]string // question text -> turn ids
	byVec   map[[2]float32][]string
	log     *[]string
	err     error
}

func (f *fakeAsker) Retrieve(_ context.Context, collection, text string, limit int) ([]Hit, error) {
	*f.log = append(*f.log, fmt.Sprintf("retrieve %s %d", collection, limit))
	if f.err != nil {
		return nil, f.err
	}
	return hits(f.answers[text]...), nil
}

func (f *fakeAsker) QueryPoints(_ context.Context, collection string, vec []float32, limit int) ([]Hit, error) {
	*f.log = append(*f.log, fmt.Sprintf("query %s %d", collection, limit))
	return hits(f.byVec[[2]float32(vec)]...), nil
}

type fakeFlusher struct{ log *[]string }

func (f fakeFlusher) Flush(context.Context) error {
	*f.log = append(*f.log, "flush")
	return nil
}

// fakeRun runs the mini bench on fakes: raw finds every question's first
// evidence turn first; memrank finds it at rank 3 for conv-26 and not at
// all (an empty answer) for conv-44.
func fakeRun(t *testing.T) (*Report, *fakeStore, []string) {
	t.Helper()
	b, err := Build(openMini(t), Options{At: at})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	evidence := map[[2]float32][]string{}
	memrank := &fakeAsker{answers: map[string][]string{}, byVec: map[[2]float32][]string{}, log: &log}
	for _, c := range b.Conversations {
		for _, q := range c.Questions {
			vec, _ := fakeEmbedder{}.Embed(context.Background(), []string{q.Text})
			key := [2]float32(vec[0])
			evidence[key] = q.Evidence
			if c.SampleID == "conv-26" {
				memrank.answers[q.Text] = []string{"X1", "X2", q.Evidence[0]}
				memrank.byVec[key] = memrank.answers[q.Text]
			}
		}
	}
	st := &fakeStore{answer: func(vec []float32) []string { return evidence[[2]float32(vec)][:1] }, log: &log}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	rep, err := Run(context.Background(), Config{
		Bench: b, File: "mini.json", Store: st, Embedder: fakeEmbedder{}, Codec: codec,
		Retriever: memrank, Querier: memrank, Flusher: fakeFlusher{&log}, Notes: []string{"a note"},
		Progress: func(stage string, done, total int) {
			if s := fmt.Sprintf("%s %d/%d", stage, done, total); len(stages) == 0 || stages[len(stages)-1] != s {
				stages = append(stages, s)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"loading 0/14", "loading 5/14", "loading 14/14", "asking 0/7", "asking 1/7", "asking 2/7",
		"asking 3/7", "asking 4/7", "asking 5/7", "asking 6/7", "asking 7/7"}, stages); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	return rep, st, log
}

func TestRunLoads(t *testing.T) {
	_, st, _ := fakeRun(t)
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range []string{"locomo_conv_26", "locomo_conv_44"} {
		for _, s := range []string{"_retrieve", "_query"} {
			want = append(want, c+s+" 2 Cosine", c+s+"_memrank_audit 1 Cosine")
		}
	}
	if diff := cmp.Diff(want, st.created); diff != "" {
		t.Errorf("collections created (-want +got):\n%s", diff)
	}
	for _, name := range []string{"locomo_conv_26_retrieve", "locomo_conv_26_query"} {
		pts := st.points[name]
		if len(pts) != 5 {
			t.Fatalf("%s: %d points", name, len(pts))
		}
		p := pts[2]
		m := codec.DecodeQdrant(p.GetPayload())
		if p.GetId().GetNum() != 3 || m.Text != "Ana: Here she is, asleep already. [shares image: a photo of a grey cat on a sofa]" ||
			m.TurnIDs[0] != "D1:3" || m.SessionIDs[0] != "session_1" || !m.CreatedAt.Equal(utc(2026, 11, 18, 3, 51)) || m.HasConfidence ||
			len(p.GetVectors().GetVector().GetDense().GetData()) != 2 {
			t.Errorf("%s point 3: id %v, %+v", name, p.GetId(), m)
		}
		audit := st.points[name+"_memrank_audit"]
		if len(audit) != 1 {
			t.Fatalf("%s's companion: %d points", name, len(audit))
		}
		rec := memory.ParseEmbedderRecord(audit[0].GetPayload())
		if audit[0].GetId().String() != memory.EmbedderRecordID().String() || rec.Model != "fake-v1:2" || rec.Dimensions != 2 || rec.Collection != name {
			t.Errorf("%s's embedder record: %v %+v", name, audit[0].GetId(), rec)
		}
	}
}

func TestRunAsks(t *testing.T) {
	rep, _, log := fakeRun(t)
	// Each question: raw and /v1/retrieve on the _retrieve copy, qdrant
	// query on the _query copy, then a flush.
	var want []string
	for _, c := range []struct {
		name string
		n    int
	}{{"locomo_conv_26", 4}, {"locomo_conv_44", 3}} {
		for range c.n {
			want = append(want, "raw "+c.name+"_retrieve", "retrieve "+c.name+"_retrieve 25", "query "+c.name+"_query 25", "flush")
		}
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(rep.PerQuestion) != 7 {
		t.Fatalf("%d questions answered", len(rep.PerQuestion))
	}
	q := rep.PerQuestion[1] // conv-26 qa[1]: evidence D1:3, D2:2
	raw, ret := q.Systems[SystemRaw], q.Systems[SystemRetrieve]
	if q.SampleID != "conv-26" || q.Question != 1 || q.CategoryName != "multi-hop" || !q.Recent ||
		raw.R10 != 0.5 || raw.FirstHit == nil || *raw.FirstHit != 1 || ret.MRR != 1.0/3 ||
		!cmp.Equal(ret.Top10, [][]string{{"X1"}, {"X2"}, {"D1:3"}}) || !cmp.Equal(raw.Top10IDs, []string{"3"}) {
		t.Errorf("conv-26 qa[1]: %+v", q)
	}
	if q := rep.PerQuestion[6].Systems[SystemQuery]; !q.Empty() || q.FirstHit != nil || len(q.Top10) != 0 {
		t.Errorf("conv-44 qa[2], qdrant query: %+v", q)
	}
}

// row finds a report row.
func row(t *testing.T, rep *Report, group, subset, system string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Group == group && r.Subset == subset && r.System == system {
			return r
		}
	}
	t.Fatalf("no row %s/%s/%s", group, subset, system)
	return Row{}
}

func TestRunReport(t *testing.T) {
	rep, _, _ := fakeRun(t)
	if len(rep.Rows) != 3*6*3 {
		t.Errorf("%d rows", len(rep.Rows))
	}
	wantGroups := []Group{
		{"all", "all 2 conversations", []string{"conv-26", "conv-44"}},
		{"dev", "dev (1: conv-26)", []string{"conv-26"}},
		{"held_out", "held out (1: conv-44)", []string{"conv-44"}},
	}
	if diff := cmp.Diff(wantGroups, rep.Groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	nan := jsonFloat(math.NaN())
	f := func(x float64) jsonFloat { return jsonFloat(x) }
	// Raw returns each question's first evidence turn only: R@k is
	// 1/|evidence|: 1, 1/2, 1, 1 for conv-26; 1, 1/2, 1 for conv-44.
	// memrank returns it third for conv-26 and nothing for conv-44.
	for _, tc := range []struct {
		group, subset, system string
		want                  Row
	}{
		{"all", "all", SystemRaw, Row{Questions: 7, R5: f(6.0 / 7), R10: f(6.0 / 7), R25: f(6.0 / 7), Hit10: 1, MRR: 1, R10VsRaw: nan}},
		{"all", "all", SystemRetrieve, Row{Questions: 7, R5: f(3.5 / 7), R10: f(3.5 / 7), R25: f(3.5 / 7), Hit10: f(4.0 / 7),
			MRR: f(4.0 / 3 / 7), Empty: 3, R10VsRaw: f(-2.5 / 7)}},
		{"dev", "all", SystemQuery, Row{Questions: 4, R5: f(3.5 / 4), R10: f(3.5 / 4), R25: f(3.5 / 4), Hit10: 1, MRR: f(1.0 / 3),
			R10VsRaw: 0}},
		{"held_out", "all", SystemQuery, Row{Questions: 3, R5: 0, R10: 0, R25: 0, Hit10: 0, MRR: 0, Empty: 3, R10VsRaw: f(-2.5 / 3)}},
		{"held_out", "multi_hop", SystemRaw, Row{Questions: 1, R5: 0.5, R10: 0.5, R25: 0.5, Hit10: 1, MRR: 1, R10VsRaw: nan}},
		{"dev", "open_domain", SystemRaw, Row{Questions: 1, R5: 1, R10: 1, R25: 1, Hit10: 1, MRR: 1, R10VsRaw: nan}},
		{"held_out", "open_domain", SystemRetrieve, Row{Questions: 0, R5: nan, R10: nan, R25: nan, Hit10: nan, MRR: nan, R10VsRaw: nan}},
		// Recent: conv-26's four and conv-44's qa[2].
		{"all", "recent", SystemRaw, Row{Questions: 5, R5: f(4.5 / 5), R10: f(4.5 / 5), R25: f(4.5 / 5), Hit10: 1, MRR: 1, R10VsRaw: nan}},
		{"held_out", "recent", SystemRetrieve, Row{Questions: 1, Empty: 1, R10VsRaw: -1}},
		{"all", "temporal", SystemRetrieve, Row{Questions: 2, R5: 0.5, R10: 0.5, R25: 0.5, Hit10: 0.5, MRR: f(1.0 / 6), Empty: 1, R10VsRaw: -0.5}},
	} {
		t.Run(tc.group+"/"+tc.subset+"/"+tc.system, func(t *testing.T) {
			tc.want.Group, tc.want.Subset, tc.want.System = tc.group, tc.subset, tc.system
			got := row(t, rep, tc.group, tc.subset, tc.system)
			approx := cmp.Comparer(func(a, b jsonFloat) bool {
				return math.IsNaN(float64(a)) && math.IsNaN(float64(b)) || math.Abs(float64(a-b)) < 1e-12
			})
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	rep, _, _ := fakeRun(t)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got struct {
		File          string   `json:"file"`
		At            string   `json:"at"`
		RealDates     bool     `json:"real_dates"`
		Limit         int      `json:"limit"`
		Turns         int      `json:"turns"`
		Questions     int      `json:"questions"`
		Skipped       Skipped  `json:"skipped"`
		Embedder      any      `json:"embedder"`
		Conversations []any    `json:"conversations"`
		Systems       []System `json:"systems"`
		Rows          []map[string]any
		PerQuestion   []map[string]any `json:"per_question"`
		Notes         []string         `json:"notes"`
	}
	dec := json.NewDecoder(&buf)
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.File != "mini.json" || got.At != "2026-12-01T00:00:00Z" || got.RealDates || got.Limit != 25 || got.Turns != 14 ||
		got.Questions != 7 || got.Skipped != (Skipped{1, 2}) || len(got.Conversations) != 2 || len(got.Systems) != 3 ||
		len(got.Rows) != 54 || len(got.PerQuestion) != 7 || len(got.Notes) != 1 {
		t.Errorf("report %+v", got)
	}
	if r := got.Rows[0]; r["r_at_10_vs_raw"] != nil || r["system"] != "raw" || r["r_at_10"] == nil {
		t.Errorf("first row %v", r)
	}
	b, _ := json.Marshal(got.PerQuestion[0]["systems"].(map[string]any)["retrieve"])
	for _, key := range []string{`"r_at_10":1`, `"first_hit":3`, `"returned":3`, `"top_10_turn_ids":[["X1"],["X2"],["D1:1"]]`, `"top_10_ids":["1","2","3"]`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("per-question answer %s without %s", b, key)
		}
	}
}

func TestRunTable(t *testing.T) {
	rep, _, _ := fakeRun(t)
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"LoCoMo mini.json: 2 conversations, 14 turns, 7 questions (categories 1-4 with evidence); skipped: 1 adversarial, 2 without evidence; 2 evidence ids name no turn (dropped)\n",
		"at 2026-12-01T00:00:00Z, dates shifted (each conversation's latest session at 2026-11-30T00:00:00Z); embedder fake-v1:2; limit 25\n",
		"\nall 2 conversations\nsubset ",
		"\ndev (1: conv-26)\n",
		"\nheld out (1: conv-44)\n",
		"R@10 vs raw",
		"recent (30d)",
		"note: a note\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table without %q:\n%s", want, out)
		}
	}
}

func TestRunErrors(t *testing.T) {
	b, err := Build(openMini(t), Options{At: at})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"no bench", func(c *Config) { c.Bench = nil }, "no bench"},
		{"no flusher", func(c *Config) { c.Flusher = nil }, "a retriever, a querier and a flusher are required"},
		{"collection exists", func(c *Config) {
			c.Store = &fakeStore{exists: map[string]bool{"locomo_conv_44_query": true}, log: &log}
		}, `locomo: conv-44: collection "locomo_conv_44_query" exists already`},
		{"retrieve fails", func(c *Config) {
			c.Retriever = &fakeAsker{err: errors.New("boom"), log: &log}
		}, "locomo: conv-26 question 0: /v1/retrieve: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			memrank := &fakeAsker{log: &log}
			cfg := Config{
				Bench: b, Store: &fakeStore{answer: func([]float32) []string { return nil }, log: &log}, Embedder: fakeEmbedder{},
				Codec: codec, Retriever: memrank, Querier: memrank, Flusher: fakeFlusher{&log},
			}
			tc.cfg(&cfg)
			if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
