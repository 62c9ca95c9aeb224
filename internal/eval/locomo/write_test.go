package locomo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// fakeObserver is a write path on a fakeStore: it folds a turn into an
// earlier memory when their texts, without the "Name:" prefix, are the
// same (tier 1) or a paraphrase it knows (tier 2). Told the speaker, it
// folds only a speaker's own turns; otherwise two speakers' same words
// fold, as a write path that does not tell speakers apart would.
type fakeObserver struct {
	st    *fakeStore
	codec *memory.Codec
	got   []Observation
	keys  map[string]int // fold key -> index of its memory in the collection's points
	err   error
}

// paraphrases maps a text to the one it paraphrases.
var paraphrases = map[string]string{
	"my sister and her two dogs live in bergen": "my sister lives in bergen with her two dogs",
}

func (f *fakeObserver) Observe(ctx context.Context, obs Observation) (Outcome, error) {
	f.got = append(f.got, obs)
	if f.err != nil {
		return Outcome{}, f.err
	}
	if !f.st.exists[obs.Collection] {
		f.create(ctx, obs.Collection)
	}
	_, body, _ := strings.Cut(obs.Text, ": ")
	key, tier := strings.ToLower(strings.TrimRight(body, "!.")), 1
	if p, ok := paraphrases[key]; ok {
		key, tier = p, 2
	}
	if obs.Speaker != "" {
		key = obs.Speaker + "|" + key
	}
	turn := obs.SessionID + ":" + obs.TurnID // qualified, as memrank's write path stores it
	pts := f.st.points[obs.Collection]
	if i, ok := f.keys[key]; ok {
		m := f.codec.DecodeQdrant(pts[i].GetPayload())
		decision := "independent"
		if slices.Contains(m.SessionIDs, obs.SessionID) {
			decision = "restatement"
		} else {
			m.SessionIDs = append(m.SessionIDs, obs.SessionID)
		}
		m.TurnIDs = append(m.TurnIDs, turn)
		pts[i].Payload = f.codec.Encode(&m)
		return Outcome{Decision: decision, MemoryID: pointID(pts[i].GetId()), Tier: tier}, nil
	}
	m := &memory.Memory{Text: obs.Text, Source: obs.Source, CreatedAt: obs.ObservedAt, LastObservedAt: obs.ObservedAt,
		SessionIDs: []string{obs.SessionID}, TurnIDs: []string{turn}, Retrievable: true, Tier: scoring.TierActive}
	vec, _ := fakeEmbedder{}.Embed(ctx, []string{obs.Text})
	id := qdrant.NewIDNum(uint64(len(pts) + 1))
	f.keys[key] = len(pts)
	f.st.points[obs.Collection] = append(pts, &qdrant.PointStruct{Id: id, Vectors: qdrant.NewVectorsDense(vec[0]), Payload: f.codec.Encode(m)})
	audit := memory.AuditCollection(obs.Collection)
	f.st.points[audit] = append(f.st.points[audit], &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(len(f.st.points[audit]))),
		Vectors: qdrant.NewVectorsDense([]float32{1}), Payload: map[string]*qdrant.Value{"reason": qdrant.NewValueString("insert")}})
	return Outcome{Decision: "inserted", MemoryID: pointID(id)}, nil
}

// create makes the collection and its companion, as the write path does:
// an index, the embedder record with its bands.
func (f *fakeObserver) create(ctx context.Context, name string) {
	audit := memory.AuditCollection(name)
	for _, c := range []struct {
		name string
		dims uint64
	}{{name, 2}, {audit, 1}} {
		_ = f.st.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: c.name,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: c.dims, Distance: qdrant.Distance_Cosine})})
		f.st.exists[c.name] = true
	}
	_, _ = f.st.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: name, FieldName: "text_hash",
		FieldType:        qdrant.FieldType_FieldTypeKeyword.Enum(),
		FieldIndexParams: qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{IsTenant: qdrant.PtrOf(false)})})
	rec := memory.EmbedderRecord{Model: "fake-v1:2", Dimensions: 2, Collection: name, SameThreshold: 0.9, JudgeThreshold: 0.8}
	_, _ = f.st.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: audit, Points: []*qdrant.PointStruct{rec.Point()}})
}

// fakeWriteRun runs the mini bench through the fake write path: the
// memrank systems answer conv-44 qa[2] (evidence D2:2) with its memory's
// session-qualified turn ids.
func fakeWriteRun(t *testing.T, speaker bool) (*Report, *fakeStore, *fakeObserver) {
	t.Helper()
	b, err := Build(openMini(t), Options{At: at})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	st := &fakeStore{exists: map[string]bool{}, points: map[string][]*qdrant.PointStruct{}, log: &log,
		answer: func([]float32) []string { return []string{"D2:2"} }}
	obs := &fakeObserver{st: st, codec: codec, keys: map[string]int{}}
	memrank := &fakeAsker{answers: map[string][]string{"What race did Caro sign up for recently?": {"session_1:D1:3 session_2:D2:2"}},
		byVec: map[[2]float32][]string{}, log: &log}
	var stages []string
	rep, err := Run(context.Background(), Config{
		Bench: b, File: "mini.json", Store: st, Embedder: fakeEmbedder{}, Codec: codec,
		Retriever: memrank, Querier: memrank, Flusher: fakeFlusher{&log},
		WritePath: true, Speaker: speaker, Observer: obs,
		Progress: func(stage string, done, total int) {
			if s := fmt.Sprintf("%s %d/%d", stage, done, total); len(stages) == 0 || stages[len(stages)-1] != s {
				stages = append(stages, s)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 15+8 || stages[0] != "observing 0/14" || stages[14] != "observing 14/14" || stages[15] != "asking 0/7" {
		t.Errorf("progress %v", stages)
	}
	return rep, st, obs
}

func TestRunWritePathObserves(t *testing.T) {
	for _, speaker := range []bool{false, true} {
		t.Run(fmt.Sprintf("speaker %v", speaker), func(t *testing.T) {
			_, _, obs := fakeWriteRun(t, speaker)
			if len(obs.got) != 14 {
				t.Fatalf("%d observations", len(obs.got))
			}
			// In conversation order, each turn once, into the _retrieve copy.
			want := Observation{Collection: "locomo_conv_44_retrieve", Text: "Dev: That's awesome!", Source: "direct",
				SessionID: "session_1", TurnID: "D1:4", ObservedAt: utc(2026, 8, 30, 8, 27)}
			if speaker {
				want.Speaker = "Dev"
			}
			if diff := cmp.Diff(want, obs.got[8]); diff != "" {
				t.Errorf("observation 9 (-want +got):\n%s", diff)
			}
			if o := obs.got[0]; o.Collection != "locomo_conv_26_retrieve" || o.TurnID != "D1:1" {
				t.Errorf("first observation %+v", o)
			}
		})
	}
}

func TestNativeObserverBody(t *testing.T) {
	var body map[string]any
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/observe" || r.Header.Get("api-key") != "k" {
			http.Error(w, "wrong route or key", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, `{"result": {"decision": "independent", "memory_id": "a1", "dedup_tier": 2, "confidence": 0.8}, "status": "ok"}`)
	})
	p := Point{DiaID: "D2:3", SessionID: "session_2", Speaker: "Caro", Text: "Caro: That's awesome!", Time: utc(2026, 11, 30, 0, 0)}
	for _, speaker := range []bool{false, true} {
		out, err := NativeObserver{Handler: h, Header: http.Header{"Api-Key": {"k"}}}.Observe(context.Background(), p.observation("c", speaker))
		if err != nil {
			t.Fatal(err)
		}
		if out != (Outcome{Decision: "independent", MemoryID: "a1", Tier: 2}) {
			t.Errorf("outcome %+v", out)
		}
		want := map[string]any{"collection": "c", "text": "Caro: That's awesome!", "source": "direct", "session_id": "session_2",
			"turn_id": "D2:3", "observed_at": "2026-11-30T00:00:00Z"}
		if speaker {
			want["speaker"] = "Caro"
		}
		if diff := cmp.Diff(want, body); diff != "" {
			t.Errorf("speaker %v: body (-want +got):\n%s", speaker, diff)
		}
	}
	bad := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusConflict) })
	if _, err := (NativeObserver{Handler: bad}).Observe(context.Background(), p.observation("c", false)); err == nil ||
		!strings.Contains(err.Error(), "POST /v1/observe: status 409: no") {
		t.Errorf("a refusal: %v", err)
	}
}

// TestRunWritePathCopies: the _query copy is the _retrieve one, vectors,
// payloads and indexes, its embedder record naming itself.
func TestRunWritePathCopies(t *testing.T) {
	_, st, _ := fakeWriteRun(t, false)
	var want []string
	for _, c := range []string{"locomo_conv_26", "locomo_conv_44"} {
		want = append(want, c+"_retrieve 2 Cosine", c+"_retrieve_memrank_audit 1 Cosine", c+"_query 2 Cosine", c+"_query_memrank_audit 1 Cosine")
	}
	if diff := cmp.Diff(want, st.created); diff != "" {
		t.Errorf("collections created (-want +got):\n%s", diff)
	}
	for _, c := range []string{"locomo_conv_26", "locomo_conv_44"} {
		from, to := st.points[c+"_retrieve"], st.points[c+"_query"]
		if len(from) == 0 || !cmp.Equal(from, to, cmp.Comparer(func(a, b *qdrant.PointStruct) bool { return a.String() == b.String() })) {
			t.Errorf("%s: %d points copied as %d, or not as they are", c, len(from), len(to))
		}
		if diff := cmp.Diff(st.indexes[c+"_retrieve"]["text_hash"].String(), st.indexes[c+"_query"]["text_hash"].String()); diff != "" {
			t.Errorf("%s: index (-want +got):\n%s", c, diff)
		}
		audit := st.points[c+"_query_memrank_audit"]
		if len(audit) != len(st.points[c+"_retrieve_memrank_audit"]) || len(audit) < 2 {
			t.Fatalf("%s: %d audit points copied", c, len(audit))
		}
		rec := memory.ParseEmbedderRecord(audit[0].GetPayload())
		if rec != (memory.EmbedderRecord{Model: "fake-v1:2", Dimensions: 2, Collection: c + "_query", SameThreshold: 0.9, JudgeThreshold: 0.8}) {
			t.Errorf("%s: the copy's embedder record %+v", c, rec)
		}
		if r := memory.ParseEmbedderRecord(st.points[c+"_retrieve_memrank_audit"][0].GetPayload()); r.Collection != c+"_retrieve" {
			t.Errorf("%s: the original's embedder record %+v", c, r)
		}
	}
}

// TestRunWritePathFolds: without the speaker, the fake write path folds
// the restated triathlon (an evidence turn), the paraphrase and the two
// speakers' "That's awesome!"; with it, not the last.
func TestRunWritePathFolds(t *testing.T) {
	for _, tc := range []struct {
		speaker bool
		want    WriteStats
	}{
		{false, WriteStats{Observations: 14, Decisions: map[string]int{"inserted": 11, "independent": 3},
			DedupTiers: map[string]int{"1": 2, "2": 1}, Memories: 11, Folds: 3, CrossSpeakerFolds: 1, EvidenceFolds: 1}},
		{true, WriteStats{Observations: 14, Decisions: map[string]int{"inserted": 12, "independent": 2},
			DedupTiers: map[string]int{"1": 1, "2": 1}, Memories: 12, Folds: 2, CrossSpeakerFolds: 0, EvidenceFolds: 1}},
	} {
		t.Run(fmt.Sprintf("speaker %v", tc.speaker), func(t *testing.T) {
			rep, _, _ := fakeWriteRun(t, tc.speaker)
			if rep.Mode != ModeWritePath || rep.WritePath == nil || rep.WritePath.Speaker != tc.speaker || len(rep.WritePath.Groups) != 3 {
				t.Fatalf("report: mode %q, write path %+v", rep.Mode, rep.WritePath)
			}
			all := rep.WritePath.Groups[0]
			ex := all.CrossSpeakerExamples
			all.CrossSpeakerExamples = nil
			if diff := cmp.Diff(WriteGroup{Group: "all", WriteStats: tc.want}, all); diff != "" {
				t.Errorf("all (-want +got):\n%s", diff)
			}
			if len(ex) != tc.want.CrossSpeakerFolds {
				t.Errorf("%d examples", len(ex))
			}
			if len(ex) > 0 {
				want := FoldExample{SampleID: "conv-44", MemoryID: "4", Text: "Dev: That's awesome!", Turns: []FoldTurn{
					{TurnID: "D1:4", Speaker: "Dev", Text: "Dev: That's awesome!"}, {TurnID: "D2:3", Speaker: "Caro", Text: "Caro: That's awesome!"}}}
				if diff := cmp.Diff(want, ex[0]); diff != "" {
					t.Errorf("example (-want +got):\n%s", diff)
				}
			}
			if dev := rep.WritePath.Groups[1]; dev.Group != "dev" || dev.Observations != 5 || dev.Folds != 0 || dev.Memories != 5 ||
				dev.Decisions["inserted"] != 5 || dev.CrossSpeakerExamples == nil {
				t.Errorf("dev %+v", dev)
			}
			if c := rep.Conversations[1].WritePath; c == nil || c.Folds != tc.want.Folds || c.Observations != 9 || rep.Conversations[0].WritePath.Folds != 0 {
				t.Errorf("conversations' write path: %+v, %+v", rep.Conversations[0].WritePath, c)
			}
		})
	}
}

// TestRunWritePathAnswers: a memory's session-qualified turn ids are read
// as LoCoMo's, so that a fold covers every turn it holds.
func TestRunWritePathAnswers(t *testing.T) {
	rep, _, _ := fakeWriteRun(t, false)
	q := rep.PerQuestion[6] // conv-44 qa[2]: evidence D2:2, in D1:3's memory
	ret, raw := q.Systems[SystemRetrieve], q.Systems[SystemRaw]
	if q.Question != 2 || ret.R10 != 1 || !cmp.Equal(ret.Top10, [][]string{{"D1:3", "D2:2"}}) {
		t.Errorf("/v1/retrieve %+v", ret)
	}
	if raw.R10 != 1 || !cmp.Equal(raw.Top10, [][]string{{"D1:3", "D2:2"}}) || !cmp.Equal(raw.Top10IDs, []string{"3"}) {
		t.Errorf("raw %+v", raw)
	}
}

func TestRunWritePathReport(t *testing.T) {
	rep, _, _ := fakeWriteRun(t, false)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Mode      string  `json:"mode"`
		Load      float64 `json:"load_seconds"`
		WritePath struct {
			Speaker bool             `json:"speaker"`
			Copy    string           `json:"copy"`
			Groups  []map[string]any `json:"groups"`
		} `json:"write_path"`
		Conversations []map[string]any `json:"conversations"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	g := got.WritePath.Groups[2]
	if got.Mode != "write_path" || got.Load <= 0 || !strings.Contains(got.WritePath.Copy, "copied to the _query copy") ||
		g["group"] != "held_out" || g["folds"] != 3.0 || g["cross_speaker_folds"] != 1.0 || g["evidence_folds"] != 1.0 ||
		g["observations"] != 9.0 || len(g["cross_speaker_examples"].([]any)) != 1 || got.Conversations[1]["write_path"] == nil {
		t.Errorf("JSON %+v", got)
	}
	buf.Reset()
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"memories: each turn observed through memrank's write path (POST /v1/observe, in conversation order, without",
		"\nall 2 conversations\nwrite path: 14 observations (inserted 11, independent 3; matches: tier 1 2, tier 2 1); 11 memories (0 superseded); " +
			"folds 3 (turns in another memory), cross-speaker folds 1 (memories of several speakers' turns), evidence folds 1 (evidence turns in another memory)\nsubset ",
		"\ndev (1: conv-26)\nwrite path: 5 observations (inserted 5; matches: none); 5 memories (0 superseded); folds 0",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table without %q:\n%s", want, buf.String())
		}
	}
}

// TestRunDirectMode: written directly, the report says so and has no
// write-path numbers.
func TestRunDirectMode(t *testing.T) {
	rep, _, _ := fakeRun(t)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["mode"] != "direct" || got["write_path"] != nil || rep.Conversations[0].WritePath != nil {
		t.Errorf("mode %v, write path %v", got["mode"], got["write_path"])
	}
	if _, ok := got["conversations"].([]any)[0].(map[string]any)["write_path"]; ok {
		t.Error("a conversation written directly has write-path numbers")
	}
}

func TestRunWritePathErrors(t *testing.T) {
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
		{"no observer", func(c *Config) { c.Observer = nil }, "the write path needs an observer"},
		{"speaker without the write path", func(c *Config) { c.WritePath = false }, "speakers are given to the write path only"},
		{"observing fails", func(c *Config) { c.Observer.(*fakeObserver).err = errors.New("boom") }, "locomo: conv-26: observing D1:1: boom"},
		{"collection exists", func(c *Config) { c.Store.(*fakeStore).exists["locomo_conv_26_query_memrank_audit"] = true },
			`locomo: conv-26: collection "locomo_conv_26_query_memrank_audit" exists already`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeStore{exists: map[string]bool{}, points: map[string][]*qdrant.PointStruct{}, log: &log, answer: func([]float32) []string { return nil }}
			memrank := &fakeAsker{log: &log}
			cfg := Config{
				Bench: b, Store: st, Embedder: fakeEmbedder{}, Codec: codec, Retriever: memrank, Querier: memrank, Flusher: fakeFlusher{&log},
				WritePath: true, Speaker: true, Observer: &fakeObserver{st: st, codec: codec, keys: map[string]int{}},
			}
			tc.cfg(&cfg)
			if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestTurnOf(t *testing.T) {
	for in, want := range map[string]string{
		"session_3:D3:5": "D3:5", "D3:5": "D3:5", "session_12:D12:1": "D12:1", "s1:t4": "s1:t4", "session_x:D1:1": "session_x:D1:1", "": "",
	} {
		if got := TurnOf(in); got != want {
			t.Errorf("TurnOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMeasureSuperseded: a superseded memory is no memory of its own, and
// its turns count where they were folded.
func TestMeasureSuperseded(t *testing.T) {
	c := &Conversation{SampleID: "c", Points: []Point{
		{ID: 1, DiaID: "D1:1", Speaker: "A", Text: "A: x"}, {ID: 2, DiaID: "D1:2", Speaker: "B", Text: "B: x"},
		{ID: 3, DiaID: "D1:3", Speaker: "A", Text: "A: y"}}, Questions: []Question{{Evidence: []string{"D1:1", "D1:3"}}}}
	ws := newWriteStats()
	ws.measure(c, []storedMemory{
		{ID: "m1", M: memory.Memory{Text: "A: y", TurnIDs: []string{"session_1:D1:3", "session_1:D1:1", "session_1:D1:2"}}},
		{ID: "m2", M: memory.Memory{Text: "A: x", TurnIDs: []string{"session_1:D1:1"}, SupersededBy: "m1"}},
	})
	if ws.Memories != 1 || ws.Superseded != 1 || ws.Folds != 2 || ws.CrossSpeakerFolds != 1 || ws.EvidenceFolds != 1 ||
		len(ws.CrossSpeakerExamples) != 1 || ws.CrossSpeakerExamples[0].Turns[2] != (FoldTurn{"D1:2", "B", "B: x"}) {
		t.Errorf("%+v", ws)
	}
}
