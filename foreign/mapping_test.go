package foreign_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/foreign"
)

func TestRead(t *testing.T) {
	file, err := foreign.Parse([]byte(`{"name": "json-file", "text": ["body", "alt.text"], "created_at": "ts",
		"scope": ["owner", "team"], "source_rules": [{"key": "who", "equals": "Bot", "source": "speculation"}],
		"defaults": {"source": "direct", "memory_type": "event"}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		m       *foreign.Mapping
		payload map[string]any
		want    foreign.Fields
	}{
		{"mem0", foreign.Mem0(), map[string]any{"data": "Dana uses Neovim", "hash": "x", "user_id": "dana", "agent_id": "a1",
			"created_at": "2026-11-02T09:14:03.5-08:00", "updated_at": "2026-11-03T09:00:00-08:00"},
			foreign.Fields{Text: "Dana uses Neovim", CreatedAt: time.Date(2026, 11, 2, 17, 14, 3, 5e8, time.UTC),
				LastObservedAt: time.Date(2026, 11, 3, 17, 0, 0, 0, time.UTC), Scope: "user_id=dana\x00agent_id=a1",
				MemoryType: "fact", Source: "direct", Grounding: "supported"}},
		{"mem0 assistant", foreign.Mem0(), map[string]any{"data": "Might move", "role": "assistant", "created_at": "2026-11-02"},
			foreign.Fields{Text: "Might move", CreatedAt: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), MemoryType: "fact",
				Source: "weak_inference", Grounding: "supported"}},
		{"mem0 bad time", foreign.Mem0(), map[string]any{"data": "x", "created_at": "last tuesday"},
			foreign.Fields{Text: "x", MemoryType: "fact", Source: "direct", Grounding: "supported", Problems: []string{"created_at: not a time"}}},
		{"langchain", foreign.LangChain(), map[string]any{"page_content": "Deploys on Fridays",
			"metadata": map[string]any{"source": "notes.md", "timestamp": int64(1775000000000), "user_id": int64(7)}},
			foreign.Fields{Text: "Deploys on Fridays", CreatedAt: time.Unix(1775000000, 0).UTC(), Scope: "metadata.user_id=7",
				MemoryType: "fact", Source: "weak_inference", Grounding: "supported"}},
		{"file: second text key, rule, seconds", file, map[string]any{"alt": map[string]any{"text": "  Lunch at noon "}, "ts": 1775000000.5,
			"owner": "ann", "who": "bot"},
			foreign.Fields{Text: "Lunch at noon", CreatedAt: time.Unix(1775000000, 5e8).UTC(), Scope: "owner=ann",
				MemoryType: "event", Source: "speculation"}},
		{"nothing", file, map[string]any{"ts": nil, "body": ""}, foreign.Fields{MemoryType: "event", Source: "direct"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.m.Read(qdrant.NewValueMap(tc.payload))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"no text", "name: x\n", "no key names the text"},
		{"unknown key", "text: a\ncreated: b\n", "field created not found"},
		{"bad path", "text: 'a..b'\n", "text"},
		{"rule without source", "text: a\nsource_rules: [{key: role, equals: x}]\n", "source_rules[0].source is empty"},
		{"not yaml", "text: [a\n", "mapping"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := foreign.Parse([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		name string
		v    *qdrant.Value
		want time.Time
		ok   bool
	}{
		{"rfc3339", qdrant.NewValueString("2026-11-01T10:00:00+02:00"), time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), true},
		{"seconds", qdrant.NewValueInt(1775000000), time.Unix(1775000000, 0), true},
		{"milliseconds", qdrant.NewValueInt(1775000000123), time.UnixMilli(1775000000123), true},
		{"negative", qdrant.NewValueInt(-5), time.Time{}, false},
		{"bool", qdrant.NewValueBool(true), time.Time{}, false},
		{"far future", qdrant.NewValueDouble(1e300), time.Time{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := foreign.ParseTime(tc.v)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("ParseTime = %s, %t; want %s, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestBuiltin(t *testing.T) {
	for _, name := range []string{"mem0", "MEM0", "langchain"} {
		m, ok := foreign.Builtin(name)
		if !ok || m.Validate() != nil || len(m.Assumptions) == 0 {
			t.Errorf("Builtin(%q) = %v, %t", name, m, ok)
		}
	}
	if _, ok := foreign.Builtin("llamaindex"); ok {
		t.Error("llamaindex is not built in")
	}
}

// FuzzParse: any file either parses into a mapping that reads any payload
// without panicking, or is refused.
func FuzzParse(f *testing.F) {
	f.Add([]byte("text: body\ncreated_at: [a.b, c]\nscope: u\n"), "body", "2026-01-01")
	f.Add([]byte(`{"text": "x", "source_rules": [{"key": "r", "equals": "a", "source": "direct"}]}`), "x", "1775000000")
	f.Add([]byte("text: '\"odd key\".x[]'\n"), "", "")
	f.Fuzz(func(t *testing.T, file []byte, text, at string) {
		m, err := foreign.Parse(file)
		if err != nil {
			return
		}
		str := qdrant.NewValueString // unlike NewValueMap, takes any bytes, as a payload may hold
		payload := map[string]*qdrant.Value{"body": str(text), "x": qdrant.NewValueFromList(str(text), qdrant.NewValueInt(3)),
			"a": qdrant.NewValueStruct(&qdrant.Struct{Fields: map[string]*qdrant.Value{"b": str(at)}}),
			"c": str(at), "u": qdrant.NewValueNull(), "r": str("a")}
		_ = m.Read(payload)
	})
}
