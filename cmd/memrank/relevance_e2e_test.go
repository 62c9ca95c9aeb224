package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
)

// relevanceServe is memrank serve on the embedded store with the default
// (semantic) embedder, asked through all three fronts.
type relevanceServe struct {
	t    *testing.T
	base string
	grpc *qdrant.Client
	emb  *embed.Semantic
}

func startRelevanceServe(t *testing.T) *relevanceServe {
	t.Helper()
	// Accesses flushed at once, so an answer shows what the last counted.
	httpAddr, grpcAddr, _ := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=20ms"}, "--data", t.TempDir())
	host, port, err := net.SplitHostPort(grpcAddr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	client, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	emb, err := embed.NewSemantic(384)
	if err != nil {
		t.Fatal(err)
	}
	return &relevanceServe{t: t, base: "http://" + httpAddr, grpc: client, emb: emb}
}

// outcomeOf is the part of an observe answer these tests read.
type outcomeOf struct {
	Decision   string   `json:"decision"`
	MemoryID   string   `json:"memory_id"`
	Confidence float64  `json:"confidence"`
	Warnings   []string `json:"warnings"`
	// Contradicts is the stored memory a negation contradicts.
	Contradicts string `json:"contradicts"`
}

func (s *relevanceServe) observe(path, body string) outcomeOf {
	s.t.Helper()
	code, b := post(s.t, s.base+path, body)
	if code != http.StatusOK {
		s.t.Fatalf("%s: %d %s", path, code, b)
	}
	var env struct{ Result outcomeOf }
	if err := json.Unmarshal(b, &env); err != nil {
		s.t.Fatalf("%s: %s: %v", path, b, err)
	}
	return env.Result
}

// retrieved is the part of a /v1/retrieve answer these tests read.
type retrieved struct {
	Result []struct {
		ID          json.RawMessage `json:"id"`
		BelowGate   bool            `json:"below_gate"`
		AccessCount int64           `json:"access_count"`
		Payload     struct {
			Text string `json:"text"`
		} `json:"payload"`
	} `json:"result"`
	At    string `json:"at"`
	Empty string `json:"empty"`
}

func (s *relevanceServe) retrieve(body string) retrieved {
	s.t.Helper()
	code, b := post(s.t, s.base+"/v1/retrieve", body)
	if code != http.StatusOK {
		s.t.Fatalf("retrieve %s: %d %s", body, code, b)
	}
	var r retrieved
	if err := json.Unmarshal(b, &r); err != nil {
		s.t.Fatalf("retrieve %s: %v", body, err)
	}
	return r
}

func (r retrieved) texts() []string {
	out := make([]string, len(r.Result))
	for i, x := range r.Result {
		out[i] = x.Payload.Text
	}
	return out
}

func (s *relevanceServe) vector(text string) []float32 {
	s.t.Helper()
	v, err := s.emb.Embed(context.Background(), []string{text})
	if err != nil {
		s.t.Fatal(err)
	}
	return v[0]
}

// restTexts asks the Qdrant REST query route through memrank.
func (s *relevanceServe) restTexts(coll, question string, limit int) []string {
	s.t.Helper()
	vec, _ := json.Marshal(s.vector(question))
	code, b := post(s.t, s.base+"/collections/"+coll+"/points/query",
		fmt.Sprintf(`{"query": %s, "limit": %d, "with_payload": true}`, vec, limit))
	if code != http.StatusOK {
		s.t.Fatalf("REST query: %d %s", code, b)
	}
	var env struct {
		Result struct {
			Points []struct {
				Payload struct{ Text string } `json:"payload"`
			} `json:"points"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, p := range env.Result.Points {
		out = append(out, p.Payload.Text)
	}
	return out
}

// grpcTexts asks Qdrant's gRPC Query through memrank with the official
// go-client.
func (s *relevanceServe) grpcTexts(coll, question string, limit int) []string {
	s.t.Helper()
	pts, err := s.grpc.Query(context.Background(), &qdrant.QueryPoints{CollectionName: coll,
		Query: qdrant.NewQueryDense(s.vector(question)), Limit: qdrant.PtrOf(uint64(limit)), WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		s.t.Fatalf("gRPC query: %v", err)
	}
	var out []string
	for _, p := range pts {
		out = append(out, p.GetPayload()["text"].GetStringValue())
	}
	return out
}

// TestOldUnreadRelevantMemoryIsReturned: a memory observed ten years ago
// and never read since, the best match of its question, comes back first
// on every front. Age lowers a memory's weight within a bound; it never
// removes it from an answer (the decay floor used to, after ~115 days).
func TestOldUnreadRelevantMemoryIsReturned(t *testing.T) {
	s := startRelevanceServe(t)
	old := time.Now().AddDate(-10, 0, 0).UTC().Format(time.RFC3339)
	s.observe("/v1/observe", `{"collection":"mem","text":"Bob has a cat named Tom","source":"direct","session_id":"s1","observed_at":"`+old+`"}`)
	for i, text := range []string{"Alice works at the bakery on Main Street", "The team meets on Tuesdays at ten",
		"Carol prefers green tea to coffee", "The project deadline moved to March"} {
		s.observe("/v1/observe", fmt.Sprintf(`{"collection":"mem","text":%q,"source":"direct","session_id":"s%d"}`, text, i+2))
	}
	const question, want = "does Bob have a cat", "Bob has a cat named Tom"
	fronts := map[string][]string{
		"native": s.retrieve(`{"collection":"mem","text":"` + question + `","limit":3}`).texts(),
		"REST":   s.restTexts("mem", question, 3),
		"gRPC":   s.grpcTexts("mem", question, 3),
	}
	for front, texts := range fronts {
		if len(texts) == 0 || texts[0] != want {
			t.Errorf("%s: %q, want %q first", front, texts, want)
		}
	}
}

// TestTextOnlyObservationIsReturnedFirst: a memory observed with nothing
// but its text (source weak_inference by default, confidence 0.4675, below
// the retrieval gate) is returned first, flagged below_gate, for the
// question it answers best; the observe answer warns that it sits below
// the gate.
func TestTextOnlyObservationIsReturnedFirst(t *testing.T) {
	s := startRelevanceServe(t)
	cat := s.observe("/v1/observe", `{"collection":"mem","text":"Bob has a cat named Tom"}`)
	if cat.Confidence >= 0.5 || len(cat.Warnings) != 1 || !strings.Contains(cat.Warnings[0], "below the retrieval gate") {
		t.Errorf("text-only observation: confidence %v, warnings %q: want one warning about the gate", cat.Confidence, cat.Warnings)
	}
	for i, text := range []string{"Alice works at the bakery on Main Street", "The team meets on Tuesdays at ten",
		"Carol prefers green tea to coffee"} {
		o := s.observe("/v1/observe", fmt.Sprintf(`{"collection":"mem","text":%q,"source":"direct","session_id":"s%d"}`, text, i+2))
		if len(o.Warnings) != 0 {
			t.Errorf("a direct statement was warned about: %q", o.Warnings)
		}
	}
	r := s.retrieve(`{"collection":"mem","text":"does Bob have a cat","limit":3}`)
	if len(r.Result) == 0 || r.Result[0].Payload.Text != "Bob has a cat named Tom" || !r.Result[0].BelowGate {
		t.Errorf("answer %q (first below_gate %v), want the cat first, flagged below_gate", r.texts(), len(r.Result) > 0 && r.Result[0].BelowGate)
	}
	// Another question: the gate holds, the cat is not dragged in.
	r = s.retrieve(`{"collection":"mem","text":"where does Alice work","limit":3}`)
	for _, x := range r.Result {
		if x.Payload.Text == "Bob has a cat named Tom" {
			t.Errorf("the below-gate cat was returned for another question: %q", r.texts())
		}
	}
}

// TestRetrieveAtReplaysHistory: asked as of a time, an answer holds what
// was known then: Bob lived in Berlin until a correction moved him to
// Munich; before the correction the answer is Berlin (Munich not yet
// observed, the supersession not yet applied), after it Munich. A query
// with at never counts an access.
func TestRetrieveAtReplaysHistory(t *testing.T) {
	s := startRelevanceServe(t)
	now := time.Now().UTC()
	t1, t2 := now.AddDate(0, -6, 0), now.AddDate(0, -1, 0)
	berlin := s.observe("/v1/observe", `{"collection":"mem","text":"Bob lives in Berlin","source":"direct","session_id":"s1","observed_at":"`+t1.Format(time.RFC3339)+`"}`)
	s.observe("/v1/observe", `{"collection":"mem","text":"The team meets on Tuesdays at ten","source":"direct","session_id":"s2","observed_at":"`+t1.Format(time.RFC3339)+`"}`)
	munich := s.observe("/v1/memories/"+berlin.MemoryID+"/correct",
		`{"collection":"mem","text":"Bob lives in Munich","session_id":"s3","observed_at":"`+t2.Format(time.RFC3339)+`"}`)
	if munich.Decision != "corrected" || munich.MemoryID == berlin.MemoryID {
		t.Fatalf("correction: %+v", munich)
	}
	between := now.AddDate(0, -3, 0).Format(time.RFC3339)
	then := s.retrieve(`{"collection":"mem","text":"where does Bob live","limit":3,"at":"` + between + `"}`)
	if texts := then.texts(); len(texts) == 0 || texts[0] != "Bob lives in Berlin" || strings.Contains(strings.Join(texts, "|"), "Munich") {
		t.Errorf("as of %s: %q, want Berlin first and no Munich", between, texts)
	}
	if then.At != between {
		t.Errorf("the answer's at %q, want %q", then.At, between)
	}
	before := s.retrieve(`{"collection":"mem","text":"where does Bob live","limit":3,"at":"` + now.AddDate(-1, 0, 0).Format(time.RFC3339) + `"}`)
	if len(before.Result) != 0 {
		t.Errorf("before anything was observed: %q, want nothing", before.texts())
	}
	time.Sleep(200 * time.Millisecond) // ten flush intervals
	today := s.retrieve(`{"collection":"mem","text":"where does Bob live","limit":3}`)
	if texts := today.texts(); len(texts) == 0 || texts[0] != "Bob lives in Munich" || strings.Contains(strings.Join(texts, "|"), "Berlin") {
		t.Errorf("today: %q, want Munich first and the superseded Berlin left out", texts)
	}
	for _, x := range today.Result {
		if x.AccessCount != 0 {
			t.Errorf("an access was counted for %s by a query with at: %d", x.ID, x.AccessCount)
		}
	}
	// The query of today counted Munich: the check above could see a count.
	time.Sleep(200 * time.Millisecond)
	if again := s.retrieve(`{"collection":"mem","text":"where does Bob live","limit":3,"count_access":false}`); len(again.Result) == 0 || again.Result[0].AccessCount != 1 {
		t.Errorf("a query without at counted no access: %+v", again.Result)
	}
	code, b := post(t, s.base+"/v1/retrieve", `{"collection":"mem","text":"x","at":"yesterday"}`)
	if code != http.StatusBadRequest || !strings.Contains(string(b), "at") {
		t.Errorf("a bad at: %d %s", code, b)
	}
}

// TestWhoSaidWhatOnRead: what the write path keeps apart, the read path
// returns apart, on every front: another city, a negation (recorded as a
// contradiction on both), the same words from two speakers.
func TestWhoSaidWhatOnRead(t *testing.T) {
	s := startRelevanceServe(t)
	obs := func(text, speaker string) outcomeOf {
		return s.observe("/v1/observe", fmt.Sprintf(`{"collection":"who","text":%q,"speaker":%q,"source":"direct","session_id":%q}`,
			text, speaker, text))
	}
	for _, text := range []string{"Alice works at the bakery on Main Street", "The team meets on Tuesdays at ten",
		"Carol prefers green tea to coffee", "Bob lives in Berlin", "Bob lives in Munich"} {
		if o := obs(text, ""); o.Decision != "inserted" {
			t.Fatalf("%q: %+v, want a memory of its own", text, o)
		}
	}
	acme := obs("I work at Acme", "")
	notAcme := obs("I don't work at Acme", "")
	if notAcme.Decision != "inserted" || notAcme.Contradicts != acme.MemoryID {
		t.Errorf("the negation: %+v, want inserted, contradicting %s", notAcme, acme.MemoryID)
	}
	caroline, melanie := obs("That's awesome!", "Caroline"), obs("That's awesome!", "Melanie")
	if caroline.MemoryID == melanie.MemoryID {
		t.Errorf("two speakers' words folded into %s", caroline.MemoryID)
	}
	tests := []struct {
		question string
		want     []string // all among the first four, each once
	}{
		{question: "where does Bob live", want: []string{"Bob lives in Berlin", "Bob lives in Munich"}},
		{question: "do I work at Acme", want: []string{"I work at Acme", "I don't work at Acme"}},
		{question: "that's awesome", want: []string{"That's awesome!", "That's awesome!"}},
	}
	for _, tc := range tests {
		fronts := map[string][]string{
			"native": s.retrieve(`{"collection":"who","text":"` + tc.question + `","limit":4}`).texts(),
			"REST":   s.restTexts("who", tc.question, 4),
			"gRPC":   s.grpcTexts("who", tc.question, 4),
		}
		for front, texts := range fronts {
			got := map[string]int{}
			for _, x := range texts {
				got[x]++
			}
			for _, w := range tc.want {
				got[w]--
			}
			for w, n := range got {
				if n < 0 {
					t.Errorf("%s, %q: %q is missing from %q", front, tc.question, w, texts)
				}
			}
		}
	}
	// A correction naming something new is stored and returned, never
	// folded behind the negation it resembles.
	initech := s.observe("/v1/memories/"+acme.MemoryID+"/correct", `{"collection":"who","text":"I work at Initech now, not Acme","session_id":"s9"}`)
	if initech.Decision != "corrected" || initech.MemoryID == notAcme.MemoryID || initech.MemoryID == acme.MemoryID {
		t.Errorf("the correction: %+v, want a memory of its own", initech)
	}
	if texts := s.retrieve(`{"collection":"who","text":"where do I work","limit":4}`).texts(); !slices.Contains(texts, "I work at Initech now, not Acme") {
		t.Errorf("where do I work: %q, want the correction among them", texts)
	}
	for _, id := range []string{acme.MemoryID, notAcme.MemoryID} {
		code, b := jsonRequest(t, http.MethodGet, s.base+"/v1/memories/"+id+"?collection=who", "")
		if code != http.StatusOK || !strings.Contains(string(b), `"contradictions":1`) || !strings.Contains(string(b), "contradiction_unresolved") {
			t.Errorf("memory %s: %d %s: want one contradiction, recorded", id, code, b)
		}
	}
}
