package memory

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/qdrantjson"
)

// checkDecoded asserts the decoder's contract on any payload: every memory
// key carrying a non-null value was either used or reported, and what the
// decoder produced survives an encode/decode round trip unchanged.
func checkDecoded(t *testing.T, c *Codec, payload map[string]*qdrant.Value) {
	m := c.DecodeQdrant(payload)
	reported := map[string]bool{}
	for _, p := range m.Problems {
		if p.Key == "" || p.Detail == "" && p.Kind != ProblemNull {
			t.Fatalf("problem without key or detail: %+v", p)
		}
		reported[p.Key] = true
	}
	for k, v := range payload {
		f, ok := c.byKey[k]
		if !ok {
			continue
		}
		null := v == nil || isNull(v)
		if null && nullIsAbsent.Has(f) {
			continue
		}
		if !m.Present.Has(f) && !reported[k] {
			t.Fatalf("key %q (%v) neither used nor reported; problems %v", k, v, m.Problems)
		}
	}
	again := c.DecodeQdrant(c.Encode(&m))
	for _, p := range again.Problems {
		// Encode leaves out what the record does not have (no confidence, no
		// created_at), so only "missing" can come back.
		if p.Kind != ProblemMissing {
			t.Fatalf("re-decoding what Encode wrote gave problems: %v", again.Problems)
		}
	}
	ignore := cmpopts.IgnoreFields(Memory{}, "Present", "Seen", "Problems", "TextHash")
	if diff := cmp.Diff(m, again, ignore, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("encode/decode changed the record (-first +second):\n%s", diff)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"text":"I work at Acme","source":"direct","memory_type":"entity","confidence":0.9,"created_at":"2026-01-01T00:00:00Z"}`,
		`{"source":5,"confidence":"x","access_counts":{"a":1.5,"b":-1},"session_ids":"s","created_at":1e300}`,
		`{"text":null,"observations":2.0,"superseded_by":"x","tier":"ARCHIVED","last_observed_at":"2026-01-02"}`,
		`[1,2]`, `{`, `{"a":{"b":{"c":[1,{"d":null}]}}}`,
	} {
		f.Add([]byte(s))
	}
	c := newCodec(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Memory
		payload, err := qdrantjson.DecodePayload(data)
		if err != nil {
			if c.DecodeJSON(data, &m) == nil {
				t.Fatal("DecodeJSON accepted what DecodePayload refused")
			}
			return
		}
		checkDecoded(t, c, payload)
		if !json.Valid(qdrantjson.AppendPayload(nil, payload)) {
			t.Fatalf("AppendPayload of %s is not JSON", data)
		}
	})
}

// FuzzDecodeQdrant feeds arbitrary protobuf-encoded Qdrant payloads, which
// reach every Value kind at every key.
func FuzzDecodeQdrant(f *testing.F) {
	c := newCodec(f)
	seeds := []map[string]any{
		{"text": "x", "source": "direct", "memory_type": "fact", "confidence": 0.7, "created_at": "2026-01-01T00:00:00Z"},
		{"source": int64(5), "confidence": "x", "access_counts": map[string]any{"a": 1.5}, "entities": []any{int64(1), "e"}},
		{"observations": -3.0, "retrievable": "no", "superseded_by": int64(-1), "last_accessed_at": true},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(&qdrant.Struct{Fields: qdrant.NewValueMap(s)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s qdrant.Struct
		if err := proto.Unmarshal(data, &s); err != nil {
			return
		}
		checkDecoded(t, c, s.GetFields())
	})
}
