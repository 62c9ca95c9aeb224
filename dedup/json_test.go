package dedup

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// encodeNoHTML is how the native API encodes its answers.
func encodeNoHTML(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestOutcomeJSON(t *testing.T) {
	tests := []struct {
		name string
		o    Outcome
		want string
	}{
		{"full", Outcome{Decision: DecisionIndependent, MemoryID: "553f9722-8ebe-5636-9720-a487cf263fc6", Confidence: 0.8125,
			Observations: 3, Tier: 3, Judge: &JudgeInfo{Verdict: "same", Cached: true, Reason: "both say <Neovim> & vim"},
			Superseded: "7", Merged: []string{"1002", "1003"}, Reason: "r", Replayed: true},
			`{"decision":"independent","memory_id":"553f9722-8ebe-5636-9720-a487cf263fc6","confidence":0.8125,"observations":3,` +
				`"dedup_tier":3,"judge":{"verdict":"same","cached":true,"reason":"both say <Neovim> & vim"},"superseded":"7",` +
				`"merged":["1002","1003"],"reason":"r","replayed":true}`},
		{"zero", Outcome{},
			`{"decision":"","memory_id":"","confidence":0,"observations":0,"dedup_tier":0,"judge":null,"replayed":false}`},
		{"a fallback, empty lists left out", Outcome{Decision: DecisionInserted, Confidence: 1e-5, Judge: &JudgeInfo{Fallback: "timeout"}, Merged: []string{}},
			`{"decision":"inserted","memory_id":"","confidence":1e-05,"observations":0,"dedup_tier":0,"judge":{"verdict":"","cached":false,"fallback":"timeout"},"replayed":false}`},
		{"no confidence", Outcome{Decision: DecisionRejected, Confidence: math.NaN()},
			`{"decision":"rejected","memory_id":"","confidence":null,"observations":0,"dedup_tier":0,"judge":null,"replayed":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodeNoHTML(t, tt.o); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			b, err := json.Marshal(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			var back Outcome
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			want := tt.o
			if math.IsNaN(want.Confidence) {
				want.Confidence = math.Inf(1) // null reads back as +Inf
			}
			if len(want.Merged) == 0 {
				want.Merged = nil
			}
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
	// The encoder that calls MarshalJSON decides about HTML: json.Marshal
	// escapes as it would for a struct.
	b, _ := json.Marshal(Outcome{Reason: "<b>"})
	if !bytes.Contains(b, []byte(`"reason":"\u003cb\u003e"`)) {
		t.Errorf("json.Marshal: %s", b)
	}
	var o Outcome
	if err := json.Unmarshal([]byte(`{"decision":"inserted","confidence":"high"}`), &o); err == nil {
		t.Error("a confidence that is not a number was read")
	}
}

func TestMemoryViewJSON(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 5e8, time.FixedZone("CEST", 2*3600))
	v := MemoryView{ID: "7", Collection: "m", Payload: []byte(` {"text": "x", "big": 18446744073709551615, "f": 3.0} `),
		Audit: []AuditRecord{
			{MemoryID: "7", ObservationID: "o1", Reason: "insert", New: 0.7, At: at, SessionID: "s", TurnID: "t",
				Source: 0.95, Extractor: 0.9, Type: 0.75, Grounding: "supported", Decision: DecisionInserted},
			{MemoryID: "7", Reason: "merge", Old: 0.7, New: math.Inf(1), OldN: 1, NewN: 2, Related: "8", Decision: DecisionIndependent},
		}}
	want := `{"id":"7","collection":"m","payload":{"text":"x","big":18446744073709551615,"f":3.0},"audit":[` +
		`{"memory_id":"7","observation_id":"o1","reason":"insert","old":0,"new":0.7,"old_n":0,"new_n":0,"at":"2026-05-01T10:00:00.5Z",` +
		`"session_id":"s","turn_id":"t","source":0.95,"extractor":0.9,"type":0.75,"grounding":"supported","decision":"inserted"},` +
		`{"memory_id":"7","observation_id":"","reason":"merge","old":0.7,"new":null,"old_n":1,"new_n":2,"at":"",` +
		`"session_id":"","turn_id":"","source":0,"extractor":0,"type":0,"grounding":"","decision":"independent","related":"8"}]}`
	if got := encodeNoHTML(t, v); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := encodeNoHTML(t, MemoryView{ID: "7", Payload: []byte(" \n")}); got != `{"id":"7","collection":"","payload":{},"audit":[]}` {
		t.Errorf("empty: %s", got)
	}
	if _, err := json.Marshal(MemoryView{ID: "7", Payload: []byte(`{"text":`)}); err == nil {
		t.Error("a payload that is not JSON was written")
	}
}

func TestStatsJSON(t *testing.T) {
	st := Stats{Collection: "m", Method: "counted", Memories: 120, Archived: 3, Superseded: 4,
		Average:   0.71234,
		Buckets:   map[string]int{"medium": 40, "high": 70, "low": 10},
		Histogram: []int{0, 0, 0, 0, 10, 20, 20, 30, 40, 0},
		Tiers:     map[string]int{"active": 120, "archived": 3},
		TiersAsOf: time.Date(2026, 11, 1, 3, 0, 0, 0, time.FixedZone("x", 3600)),
		Types:     map[string]int{"fact\n": 1},
		Decisions: map[string]int64{"restatement": 300, "inserted": 124},
		Judge:     JudgeStats{Calls: 9, CacheHits: 1, CacheMisses: 99999, Fallbacks: 1, CacheHitRate: 1e-5},
	}
	want := `{"collection":"m","method":"counted","memories":120,"archived":3,"superseded":4,"average_confidence":0.71234,` +
		`"buckets":{"high":70,"low":10,"medium":40},"histogram":[0,0,0,0,10,20,20,30,40,0],` +
		`"tiers":{"active":120,"archived":3},"tiers_as_of":"2026-11-01T02:00:00Z",` +
		`"types":{"fact\n":1},"decisions":{"inserted":124,"restatement":300},` +
		`"judge":{"calls":9,"cache_hits":1,"cache_misses":99999,"fallbacks":1,"cache_hit_rate":1e-05}}`
	if got := encodeNoHTML(t, st); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// No look-ups: no rate, whatever the field holds; nothing scored: no
	// average; never consolidated: no tiers' time.
	want = `{"collection":"","method":"","memories":0,"archived":0,"superseded":0,"average_confidence":null,"buckets":{},"histogram":[],` +
		`"tiers":{},"tiers_as_of":null,"types":{},"decisions":{},` +
		`"judge":{"calls":0,"cache_hits":0,"cache_misses":0,"fallbacks":0,"cache_hit_rate":null}}`
	if got := encodeNoHTML(t, Stats{Judge: JudgeStats{CacheHitRate: 0.5}}); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestOutcomeOldTier: outcomes audited before the rename kept the dedup
// stage under "tier"; replays read them still.
func TestOutcomeOldTier(t *testing.T) {
	var o Outcome
	if err := json.Unmarshal([]byte(`{"decision":"restatement","memory_id":"7","confidence":0.5,"observations":0,"tier":1,"judge":null,"replayed":false}`), &o); err != nil {
		t.Fatal(err)
	}
	if o.Tier != 1 || o.Decision != DecisionRestatement {
		t.Errorf("%+v", o)
	}
}
