package client

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeAnswers: whatever a server (or something posing as one)
// answers, decoding it into the SDK's types returns an error or a value,
// never a panic; ids read back the way they were written.
func FuzzDecodeAnswers(f *testing.F) {
	for _, seed := range []string{
		outcomeAnswer,
		`{"result":[{"id":7,"score":0.5,"base_score":0.6,"weight":null,"confidence":null,"folded_ids":["a",3]}],"dropped":[{"id":"x","into":1,"base_score":null}]}`,
		`{"result":{"id":"42","collection":"m","payload":{},"audit":[{"at":"2026-05-01T12:00:00Z","old":null}]}}`,
		`{"result":{"average_confidence":null,"tiers_as_of":"2026-01-01T00:00:00Z","judge":{"cache_hit_rate":null}}}`,
		`{"id":18446744073709551616}`, `{"id":-1}`, `{"id":1.5}`, `{"at":"yesterday"}`, `null`, `[]`,
		`{"result":[],"at":"2026-06-01T00:00:00.5Z","empty":"x","guard":{"folded":1,"focus":null}}`,
		`{"result":{"decision":"inserted","warnings":["w",3]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r RetrieveResponse
		_ = json.Unmarshal(b, &r)
		var m struct{ Result *Memory }
		_ = json.Unmarshal(b, &m)
		var s struct{ Result *Stats }
		_ = json.Unmarshal(b, &s)
		var o struct{ Result *Outcome }
		_ = json.Unmarshal(b, &o)
		var a AuditRecord
		_ = json.Unmarshal(b, &a)
		var id ID
		if json.Unmarshal(b, &id) == nil {
			again, err := json.Marshal(string(id))
			if err != nil {
				t.Fatal(err)
			}
			var back ID
			if err := json.Unmarshal(again, &back); err != nil || back != id {
				t.Fatalf("id %q read back as %q (%v)", id, back, err)
			}
		}
		var fl Float
		_ = json.Unmarshal(b, &fl)
	})
}
