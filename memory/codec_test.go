package memory

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

func newCodec(t testing.TB) *Codec {
	t.Helper()
	c, err := NewCodec(DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustJSON(t testing.TB, c *Codec, s string) Memory {
	t.Helper()
	var m Memory
	if err := c.DecodeJSON([]byte(s), &m); err != nil {
		t.Fatalf("DecodeJSON(%s): %v", s, err)
	}
	return m
}

func problemKeys(m Memory) []string {
	var out []string
	for _, p := range m.Problems {
		out = append(out, p.Key+"/"+p.Kind.String())
	}
	return out
}

func TestDecodeFullRecord(t *testing.T) {
	c := newCodec(t)
	m := mustJSON(t, c, `{
		"text": "I work at Acme", "memory_type": "Entity", "source": "direct_statement",
		"extractor_model": "claude-3-5-sonnet", "extractor_logprob": -0.1, "grounding": "PARTIAL",
		"observations": 3, "confidence": 0.86, "decay_category": "relationship",
		"created_at": "2026-01-02T03:04:05Z", "last_observed_at": "2026-06-01T00:00:00.5+02:00",
		"last_accessed_at": "2026-11-01T00:00:00Z", "access_counts": {"b": 2, "a": 5, "_merged": 1},
		"session_ids": ["s1", "s2"], "turn_ids": ["t1"], "entities": ["Acme"], "text_hash": "abc",
		"retrievable": false, "tier": "Dormant", "superseded_by": 42, "corroborations": 2,
		"contradictions": 1, "modalities": ["chat", "email"], "memrank_schema": 1, "user_id": "u1"
	}`)
	want := Memory{
		Text: "I work at Acme", MemoryType: "entity", Source: "direct", ExtractorModel: "claude-3-5-sonnet",
		ExtractorLogprob: -0.1, HasLogprob: true, Grounding: scoring.GroundingPartial, Observations: 3,
		Confidence: 0.86, HasConfidence: true, DecayCategory: "relationship",
		CreatedAt:      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		LastObservedAt: time.Date(2026, 5, 31, 22, 0, 0, 5e8, time.UTC),
		LastAccessedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		AccessCounts:   []AccessCount{{"_merged", 1}, {"a", 5}, {"b", 2}},
		SessionIDs:     []string{"s1", "s2"}, TurnIDs: []string{"t1"}, Entities: []string{"Acme"}, TextHash: "abc",
		Retrievable: false, Tier: scoring.TierDormant, SupersededBy: "42", Corroborations: 2, Contradictions: 1,
		Modalities: []string{"chat", "email"}, Schema: 1,
		Levels: Levels{Source: 0.95, Type: 0.90, Extractor: math.Exp(-0.1), HalfLife: 180},
	}
	if diff := cmp.Diff(want, m, cmpopts.IgnoreFields(Memory{}, "Present", "Seen"), cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("decode (-want +got):\n%s", diff)
	}
	if m.Problems != nil {
		t.Errorf("unexpected problems: %v", m.Problems)
	}
	if m.AccessCount() != 8 || m.Unscored() {
		t.Errorf("access count %d unscored %v", m.AccessCount(), m.Unscored())
	}
}

func TestDecodeProblems(t *testing.T) {
	c := newCodec(t)
	tests := []struct {
		name    string
		json    string
		want    []string // key/kind, in decode order after sorting
		check   func(t *testing.T, m Memory)
		noScore bool
	}{
		{
			name: "missing fields of a scored memory are listed",
			json: `{"source": "direct"}`,
			want: []string{"confidence/missing", "created_at/missing", "extractor_model/missing", "memory_type/missing", "text/missing"},
			check: func(t *testing.T, m Memory) {
				if m.MemoryType != "fact" || m.Source != "direct" || m.Grounding != scoring.GroundingSupported || !m.Retrievable {
					t.Errorf("defaults wrong: %+v", m)
				}
			},
		},
		{
			// memrank leaves extractor_model out when no model was given.
			name: "memrank's own record without an extractor",
			json: `{"text": "x", "source": "direct", "memory_type": "fact", "confidence": 0.7,
				"created_at": "2026-01-01T00:00:00Z", "memrank_schema": 1}`,
			check: func(t *testing.T, m Memory) {
				if m.ExtractorModel != "" || m.Levels.Extractor != scoring.DefaultParams().ExtractorUnknown {
					t.Errorf("extractor %q at %v, want none at the unknown quality", m.ExtractorModel, m.Levels.Extractor)
				}
			},
		},
		{
			name:    "foreign point: nothing reported, unscored",
			json:    `{"text": "hello", "user_id": 7}`,
			noScore: true,
		},
		{
			name: "ill-typed values take defaults and are listed",
			json: `{"text": 5, "source": 0.9, "memory_type": "fact", "extractor_model": "x", "confidence": "high",
				"observations": "3", "created_at": 12.5e40, "retrievable": "yes", "session_ids": [1, "s"],
				"access_counts": {"r1": "x", "r2": 2.5, "r3": -1, "r4": 3}}`,
			want: []string{"access_counts/invalid", "access_counts/invalid", "access_counts/wrong type",
				"confidence/wrong type", "created_at/invalid", "observations/wrong type", "retrievable/wrong type",
				"session_ids/wrong type", "source/wrong type", "text/wrong type"},
			check: func(t *testing.T, m Memory) {
				if m.Source != "weak_inference" || m.HasConfidence || m.Observations != 0 || !m.Retrievable {
					t.Errorf("defaults wrong: %+v", m)
				}
				if diff := cmp.Diff([]AccessCount{{"r4", 3}}, m.AccessCounts); diff != "" {
					t.Errorf("access counts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"s"}, m.SessionIDs); diff != "" {
					t.Errorf("session ids (-want +got):\n%s", diff)
				}
				if m.Unscored() {
					t.Error("a point with a source key is a memory even when the value is unusable")
				}
			},
		},
		{
			name: "unknown enum values",
			json: `{"text": "x", "source": "rumour", "memory_type": "gossip", "grounding": "maybe", "tier": "frozen",
				"decay_category": "weather", "extractor_model": "m", "confidence": 0.5, "created_at": "2026-01-01T00:00:00Z"}`,
			want: []string{"decay_category/invalid", "grounding/invalid", "memory_type/invalid", "source/invalid", "tier/invalid"},
		},
		{
			name: "out-of-range values",
			json: `{"text": "x", "source": "direct", "memory_type": "fact", "extractor_model": "m", "confidence": 1.5,
				"extractor_logprob": 0.3, "observations": -2, "created_at": "yesterday"}`,
			want: []string{"confidence/invalid", "created_at/invalid", "extractor_logprob/invalid", "observations/invalid"},
		},
		{
			name: "nulls are listed except where null means none",
			json: `{"text": null, "source": "direct", "memory_type": "fact", "extractor_model": "m", "confidence": 0.7,
				"created_at": "2026-01-01T00:00:00Z", "superseded_by": null, "extractor_logprob": null,
				"last_accessed_at": null, "observations": null}`,
			want: []string{"observations/null", "text/null"},
		},
		{
			name: "lenient forms: integral floats, Unix times, zone-less times, a lone string list",
			json: `{"text": "x", "source": "Strong Inference", "memory_type": "preferences", "extractor_model": "m",
				"confidence": 1, "observations": 2.0, "created_at": 1767225600, "last_observed_at": "2026-01-02T00:00:00",
				"last_accessed_at": 1767312000000, "entities": "Acme"}`,
			want: []string{"entities/wrong type"},
			check: func(t *testing.T, m Memory) {
				if m.Source != "strong_inference" || m.MemoryType != "preference" || m.Confidence != 1 || m.Observations != 2 {
					t.Errorf("got %+v", m)
				}
				if !m.CreatedAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) ||
					!m.LastObservedAt.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) ||
					!m.LastAccessedAt.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("times: %v %v %v", m.CreatedAt, m.LastObservedAt, m.LastAccessedAt)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustJSON(t, c, tt.json)
			got := problemKeys(m)
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, m.Problems)
			}
			if m.Unscored() != tt.noScore {
				t.Errorf("Unscored() = %v, want %v", m.Unscored(), tt.noScore)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

func TestRenamedKeys(t *testing.T) {
	keys := DefaultKeys()
	keys.Text = "memory"       // mem0 writes the text under "memory"
	keys.CreatedAt = "created" // and its own timestamp names
	keys.Confidence = "trust"
	c, err := NewCodec(keys, scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	m := mustJSON(t, c, `{"memory": "likes tea", "created": "2026-01-01T00:00:00Z", "trust": 0.7, "text": "ignored"}`)
	if m.Text != "likes tea" || !m.HasConfidence || m.Confidence != 0.7 || m.CreatedAt.IsZero() {
		t.Errorf("got %+v", m)
	}
	p := c.Encode(&m)
	if _, ok := p["memory"]; !ok {
		t.Error("encode must use the renamed key")
	}
	if _, ok := p["text"]; ok {
		t.Error("encode wrote the default key")
	}

	dup := DefaultKeys()
	dup.Source = "text"
	if _, err := NewCodec(dup, scoring.DefaultParams()); err == nil || !strings.Contains(err.Error(), `"text" is used by both text and source`) {
		t.Errorf("duplicate key error = %v", err)
	}
	empty := DefaultKeys()
	empty.Tier = ""
	if _, err := NewCodec(empty, scoring.DefaultParams()); err == nil || !strings.Contains(err.Error(), "tier is empty") {
		t.Errorf("empty key error = %v", err)
	}
}

func TestConfiguredLevels(t *testing.T) {
	p := scoring.DefaultParams()
	p.SourceLevels["form_field"] = 0.9
	c, err := NewCodec(DefaultKeys(), p)
	if err != nil {
		t.Fatal(err)
	}
	m := mustJSON(t, c, `{"source": "Form Field"}`)
	if m.Source != "form_field" {
		t.Errorf("a configured source level must be accepted: %+v", m)
	}
	in := c.Inputs(&m)
	if in.Source != 0.9 {
		t.Errorf("inputs source = %v, want 0.9", in.Source)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	c := newCodec(t)
	m := Memory{
		Text: "I prefer dark mode", MemoryType: "preference", Source: "direct", ExtractorModel: "gpt-4o",
		ExtractorLogprob: -0.25, HasLogprob: true, Grounding: scoring.GroundingUnknown, Observations: 4,
		Confidence: 1, HasConfidence: true, DecayCategory: "preference",
		CreatedAt:      time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		LastObservedAt: time.Date(2026, 2, 2, 3, 4, 5, 0, time.UTC),
		AccessCounts:   []AccessCount{{"replica-a", 3}, {"replica-b", 9}},
		SessionIDs:     []string{"s1"}, TurnIDs: []string{}, Entities: []string{"UI"}, Retrievable: true,
		Tier: scoring.TierStale, SupersededBy: "5a0c3b0e-3f43-4d52-9d7b-6a8f0b3e2a11", Corroborations: 1,
		Modalities: []string{"chat"}, Schema: 1,
	}
	ignore := cmpopts.IgnoreFields(Memory{}, "Present", "Seen", "TextHash", "Levels")
	got := c.DecodeQdrant(c.Encode(&m))
	if diff := cmp.Diff(m, got, ignore, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("qdrant round trip (-want +got):\n%s", diff)
	}
	if got.TextHash != TextHash(m.Text) {
		t.Errorf("text_hash = %q, want computed %q", got.TextHash, TextHash(m.Text))
	}
	b := c.EncodeJSON(&m)
	if !strings.Contains(string(b), `"confidence":1.0`) {
		t.Errorf("a float confidence of 1 must stay a float in JSON: %s", b)
	}
	got = mustJSON(t, c, string(b))
	if diff := cmp.Diff(m, got, ignore, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	c := newCodec(t)
	for _, in := range []string{``, `[1]`, `"x"`, `{"a":`, `{} {}`, `null`} {
		var m Memory
		err := c.DecodeJSON([]byte(in), &m)
		if !errors.Is(err, qdrantjson.ErrNotObject) {
			t.Errorf("DecodeJSON(%q) = %v, want ErrNotObject", in, err)
		}
	}
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	m := mustJSON(t, c, `{"text": "ok", "x": `+deep+`}`)
	if m.Text != "ok" {
		t.Errorf("a deep unrelated value must not cost the record: %+v", m)
	}
}

func TestDecodeNilAndOddValues(t *testing.T) {
	c := newCodec(t)
	m := c.DecodeQdrant(nil)
	if !m.Unscored() || m.Problems != nil {
		t.Errorf("nil payload: %+v", m)
	}
	m = c.DecodeQdrant(map[string]*qdrant.Value{"source": nil, "text": {}, "confidence": qdrant.NewValueDouble(math.NaN())})
	want := []string{"confidence/invalid", "created_at/missing", "extractor_model/missing", "memory_type/missing", "source/null", "text/null"}
	got := problemKeys(m)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestInputs(t *testing.T) {
	c := newCodec(t)
	m := mustJSON(t, c, `{"text": "x", "source": "speculation", "memory_type": "fact", "extractor_model": "unknown-llm",
		"observations": 1, "grounding": "partial", "created_at": "2026-01-01T00:00:00Z", "decay_category": "price",
		"access_counts": {"a": 2, "b": 3}}`)
	in := c.Inputs(&m)
	want := scoring.Inputs{
		Components:   scoring.Components{Source: 0.30, Observations: 1, Extractor: 0.65, Type: 0.80},
		Grounding:    scoring.GroundingPartial,
		HalfLife:     60,
		LastObserved: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		AccessCount:  5,
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	// Outcome feedback feeds the boost as well: 5 reads and 4 uses.
	used := mustJSON(t, c, `{"text": "x", "source": "direct", "access_counts": {"a": 2, "b": 3}, "uses": 4,
		"last_used_at": "2026-02-01T00:00:00Z", "attribution": "reported", "flags": ["recurring_event"]}`)
	if in := c.Inputs(&used); in.AccessCount != 9 {
		t.Errorf("access count with uses %d, want 9", in.AccessCount)
	}
	if used.Uses != 4 || used.Attribution != "reported" || !used.LastUsedAt.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) ||
		len(used.Flags) != 1 {
		t.Errorf("decoded %+v", used)
	}
	u := mustJSON(t, c, `{"text": "foreign", "created_at": "2026-01-01T00:00:00Z"}`)
	if in := c.Inputs(&u); !in.Unscored || in.HalfLife != 90 || in.LastObserved.IsZero() {
		t.Errorf("unscored inputs: %+v", in)
	}
}

func TestRoundConfidence(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{0.6699999999999999, "0.67"},
		{0.5493767781700718, "0.549376778"},
		{0.99, "0.99"},
		{0, "0"},
	} {
		if got := strconv.FormatFloat(RoundConfidence(tt.in), 'g', -1, 64); got != tt.want {
			t.Errorf("RoundConfidence(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if !math.IsNaN(RoundConfidence(math.NaN())) {
		t.Error("NaN changed")
	}
}
