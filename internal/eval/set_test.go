package eval

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
)

const header = `{"set": {"name": "t", "version": 1, "seed": 7, "now": "2026-11-24T00:00:00Z", "distance": "Cosine", "dim": 2, "embedder": "hand", "notes": "n"}}`

const payload = `{"text": "x", "source": "direct", "memory_type": "fact", "extractor_model": "gpt-4o"}`

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestParse(t *testing.T) {
	in := lines(header,
		``,
		`{"query": {"id": "q1", "vector": [0, 1], "topic": "t", "relevant": {"18446744073709551615": 3, "6F9619FF-8B86-D011-B42D-00C04FC964FF": 1}}}`,
		`{"memory": {"id": 18446744073709551615, "vector": [1, 0], "text": "also a text", "payload": `+payload+`, "topic": "t", "fact": "t/1", "correct": true, "role": "answer"}}`,
		`{"memory": {"id": "6f9619ff-8b86-d011-b42d-00c04fc964ff", "text": "embedded later", "payload": {}}}`,
		`{"query": {"id": "q2", "text": "a question", "limit": 3}}`,
	)
	s, err := Parse(strings.NewReader(in), "set.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := Header{Name: "t", Version: 1, Seed: 7, Now: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC),
		Distance: qdrant.Distance_Cosine, Dim: 2, Embedder: "hand", Notes: "n"}
	if diff := cmp.Diff(wantHeader, s.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if len(s.Memories) != 2 || len(s.Queries) != 2 {
		t.Fatalf("%d memories, %d queries; want 2 and 2", len(s.Memories), len(s.Queries))
	}
	m := s.Memories[0]
	// The largest u64 survives: no float64 on the way.
	if m.ID != "18446744073709551615" || m.Point.GetNum() != 18446744073709551615 {
		t.Errorf("id %q (%v), want 18446744073709551615", m.ID, m.Point)
	}
	if diff := cmp.Diff([]float32{1, 0}, m.Vector); diff != "" {
		t.Errorf("vector (-want +got):\n%s", diff)
	}
	if m.Line != 4 || m.Topic != "t" || m.Fact != "t/1" || m.Correct == nil || !*m.Correct || m.Role != "answer" {
		t.Errorf("memory %+v", m)
	}
	if got := m.Payload["source"].GetStringValue(); got != "direct" {
		t.Errorf("payload source %q", got)
	}
	u := s.Memories[1]
	if u.ID != "6f9619ff-8b86-d011-b42d-00c04fc964ff" || u.Vector != nil || u.Text != "embedded later" || u.Correct != nil {
		t.Errorf("uuid memory %+v", u)
	}
	q1, q2 := s.Queries[0], s.Queries[1]
	// Relevant keys take the ids' canonical forms.
	if diff := cmp.Diff(map[string]int{"18446744073709551615": 3, "6f9619ff-8b86-d011-b42d-00c04fc964ff": 1}, q1.Relevant); diff != "" {
		t.Errorf("relevant (-want +got):\n%s", diff)
	}
	if q1.Limit != DefaultLimit || q2.Limit != 3 || q2.Text != "a question" || q2.Vector != nil {
		t.Errorf("queries %+v, %+v", q1, q2)
	}
	if got, ok := s.Memory("18446744073709551615"); !ok || got.Line != 4 {
		t.Errorf("Memory lookup: %v, %v", got, ok)
	}
}

func TestParseErrors(t *testing.T) {
	mem := func(id, rest string) string {
		return `{"memory": {"id": ` + id + `, "vector": [1, 0], "payload": {}` + rest + `}}`
	}
	tests := []struct {
		name string
		in   string
		want []string // every error line, in order
	}{{
		name: "empty",
		in:   "\n\n",
		want: []string{"set.jsonl: empty: no set header"},
	}, {
		name: "header not first",
		in:   lines(mem("1", ""), header),
		want: []string{`set.jsonl:1: the first line must be the header {"set": {...}}, got "memory"`},
	}, {
		name: "bad header stops",
		in:   lines(`{"set": {"name": "t", "version": 2, "now": "2026-11-24T00:00:00Z", "dim": 2}}`, mem("1", `, "x": 1`)),
		want: []string{"set.jsonl:1: set: version: 2 is not a version this memrank reads (1)"},
	}, {
		name: "header missing now",
		in:   lines(`{"set": {"name": "t", "version": 1, "dim": 2}}`),
		want: []string{"set.jsonl:1: set: now: required"},
	}, {
		name: "header distance",
		in:   lines(`{"set": {"name": "t", "version": 1, "now": "2026-11-24T00:00:00Z", "dim": 2, "distance": "Euclid"}}`),
		want: []string{`set.jsonl:1: set: distance: "Euclid": memrank re-ranks Cosine and Dot collections only`},
	}, {
		name: "unknown keys and kinds",
		in: lines(header,
			mem("1", `, "colour": "red"`),
			`{"memories": {}}`,
			`{"memory": {}, "query": {}}`,
			`{"query": {"id": "q", "vector": [1, 0], "relevent": {}}}`,
			header),
		want: []string{
			`set.jsonl:2: memory: unknown key "colour" (known: id, vector, text, payload, topic, fact, correct, role)`,
			`set.jsonl:3: unknown line kind "memories" (want set, memory or query)`,
			`set.jsonl:4: want one object with one key (set, memory or query), got 2: memory, query`,
			`set.jsonl:5: query: unknown key "relevent" (known: id, vector, text, topic, relevant, limit)`,
			`set.jsonl:6: a second "set" header`,
		},
	}, {
		name: "bad JSON",
		in:   lines(header, `{"memory": {"id": 1,`, `[1, 2]`, `{"memory": {"id": 1, "id": 2}}`, `{"query": {}} x`),
		want: []string{
			"set.jsonl:2: not JSON: the line ends in the middle of a value",
			"set.jsonl:3: want a JSON object, got an array",
			`set.jsonl:4: memory: duplicate key "id"`,
			"set.jsonl:5: trailing data after the JSON object",
		},
	}, {
		name: "ids",
		in: lines(header,
			mem("1.5", ""),
			mem("-3", ""),
			mem(`"not-a-uuid"`, ""),
			mem("7", ""),
			mem("7", ""),
			`{"memory": {"vector": [1, 0], "payload": {}}}`,
			`{"query": {"id": "q", "vector": [1, 0]}}`,
			`{"query": {"id": "q", "vector": [1, 0]}}`,
			`{"query": {"id": 3, "vector": [1, 0]}}`),
		want: []string{
			"set.jsonl:2: memory: id: 1.5 is not an unsigned 64-bit integer or a UUID string",
			"set.jsonl:3: memory: id: -3 is not an unsigned 64-bit integer or a UUID string",
			`set.jsonl:4: memory: id: "not-a-uuid" is not a UUID (string ids are UUIDs)`,
			"set.jsonl:6: memory 7: the id of line 5 too",
			"set.jsonl:7: memory: id: required",
			`set.jsonl:9: query "q": the id of line 8 too`,
			"set.jsonl:10: query: id: want a string",
		},
	}, {
		name: "fields",
		in: lines(header,
			`{"memory": {"id": 1, "vector": [1, 0, 0], "payload": {}}}`,
			`{"memory": {"id": 2, "vector": [1, "a"], "payload": {}}}`,
			`{"memory": {"id": 3, "vector": [1, 0]}}`,
			`{"memory": {"id": 4, "payload": {}}}`,
			`{"memory": {"id": 5, "vector": [1, 0], "payload": []}}`,
			`{"memory": {"id": 6, "vector": [1, 0], "payload": {}, "correct": "yes"}}`,
			`{"memory": {"id": 8, "vector": [1e39, 0], "payload": {}}}`,
			`{"query": {"id": "q1", "vector": [1, 0], "relevant": {"1": 4}}}`,
			`{"query": {"id": "q2", "vector": [1, 0], "relevant": {"x": 1}}}`,
			`{"query": {"id": "q3", "vector": [1, 0], "limit": 0}}`,
			`{"query": {"id": "q4"}}`,
			`{"query": {"id": "q5", "text": "  "}}`,
			`{"query": {"id": "q6", "vector": [1, 0], "relevant": {"1": 1, "01": 2}}}`),
		want: []string{
			"set.jsonl:2: memory 1: vector: 3 numbers, the set's dim is 2",
			"set.jsonl:3: memory 2: vector: want an array of numbers",
			"set.jsonl:4: memory 3: payload: required",
			"set.jsonl:5: memory 4: vector or text: one is required",
			"set.jsonl:6: memory 5: payload: not a JSON object: got an array",
			"set.jsonl:7: memory 6: correct: want true or false",
			"set.jsonl:8: memory 8: vector: [0]: 1e+39 does not fit a float32",
			`set.jsonl:9: query "q1": relevant: "1": grade: 4 is outside [1, 3]`,
			`set.jsonl:10: query "q2": relevant: "x": not a point id (an unsigned integer or a UUID)`,
			`set.jsonl:11: query "q3": limit: 0 is outside [1, 1000]`,
			`set.jsonl:12: query "q4": vector or text: one is required`,
			`set.jsonl:13: query "q5": text: empty`,
			`set.jsonl:14: query "q6": relevant: "01": the same id as another key`,
		},
	}, {
		// Checked once every memory is read: a memory may follow its query.
		name: "relevant not a memory",
		in: lines(header,
			`{"query": {"id": "q", "vector": [1, 0], "relevant": {"2": 1, "9": 2, "1": 3}}}`,
			mem("1", "")),
		want: []string{`set.jsonl:2: query "q": relevant: 2, 9: not a memory of the set`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "set.jsonl")
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStopsAfterTooManyErrors(t *testing.T) {
	ls := []string{header}
	for range 30 {
		ls = append(ls, `{"memory": {}}`)
	}
	_, err := Parse(strings.NewReader(lines(ls...)), "s")
	got := strings.Split(err.Error(), "\n")
	if len(got) != maxErrors+1 || got[maxErrors] != "s: too many errors, stopped at line 21" {
		t.Errorf("%d errors, last %q", len(got), got[len(got)-1])
	}
}

func TestOpenGzip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "set.jsonl.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(lines(header, `{"memory": {"id": 1, "vector": [1, 0], "payload": {}}}`, `{"query": {"id": "q", "vector": [1, 0], "relevant": {"1": 1}}}`))); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.File != path || len(s.Memories) != 1 || len(s.Queries) != 1 {
		t.Errorf("set %+v", s)
	}
	// A bad line in a gzipped file is named by the file and its line.
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(lines(header, `{"memory": {"id": 1}}`)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2: ") {
		t.Errorf("error %v, want it to start with %s:2:", err, bad)
	}
}
