package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strconv"
	"time"
)

// f4 is a float written with at most four decimals (the shortest text that
// reads back as the rounded value: 0.5, 0.1234).
type f4 float64

func (f f4) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, round4(float64(f)), 'f', -1, 64), nil
}

func vectorJSON(v []float64) json.RawMessage {
	b := make([]byte, 0, len(v)*8+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, round4(x), 'f', -1, 64)
	}
	return append(b, ']')
}

type setHeader struct {
	Name     string `json:"name"`
	Version  int    `json:"version"`
	Seed     uint64 `json:"seed"`
	Now      string `json:"now"`
	Distance string `json:"distance"`
	Dim      int    `json:"dim"`
	Embedder string `json:"embedder"`
	Notes    string `json:"notes"`
}

type memoryLine struct {
	ID      uint64          `json:"id"`
	Vector  json.RawMessage `json:"vector"`
	Payload *payload        `json:"payload"`
	Topic   string          `json:"topic"`
	Fact    string          `json:"fact"`
	Correct bool            `json:"correct"`
	Role    string          `json:"role"`
}

type queryLine struct {
	ID       string          `json:"id"`
	Vector   json.RawMessage `json:"vector"`
	Topic    string          `json:"topic"`
	Relevant map[string]int  `json:"relevant"`
	Limit    int             `json:"limit"`
}

const setNotes = "Synthetic long-term memories of an agent's user after about 18 months: " +
	"restated facts, outdated values (half of them not marked superseded), low-confidence guesses, " +
	"popular generic memories and many one-off events. Vectors are built from latent directions so " +
	"that cosine similarities follow the stated targets; no text was embedded. Grades: 3 the current " +
	"answer and its duplicates (same fact), 2 supporting detail, 1 minor detail or correct speculation, " +
	"0 everything else. See examples/eval/README.md."

// encode writes the set as JSON Lines: the set header, the memories in id
// order, the queries in id order. encoding/json sorts map keys, so the bytes
// depend only on the data.
func (d *dataset) encode() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	must := func(err error) {
		if err != nil {
			panic(err) // only plain data is encoded
		}
	}
	must(enc.Encode(map[string]setHeader{"set": {
		Name: "synthetic-agent-memories", Version: 1, Seed: d.cfg.Seed, Now: d.cfg.Now.Format(time.RFC3339),
		Distance: "Cosine", Dim: d.cfg.Dim, Embedder: "synthetic: text-embedding-3-small-like similarities",
		Notes: setNotes,
	}}))
	for _, m := range d.mems {
		must(enc.Encode(map[string]memoryLine{"memory": {
			ID: m.id, Vector: vectorJSON(m.vec), Payload: &m.p, Topic: m.t.id, Fact: m.fact,
			Correct: m.correct, Role: m.role,
		}}))
	}
	for _, q := range d.queries {
		must(enc.Encode(map[string]queryLine{"query": {
			ID: q.id, Vector: vectorJSON(q.vec), Topic: q.t.id, Relevant: q.relevant, Limit: d.cfg.Limit,
		}}))
	}
	return buf.Bytes()
}

// gzipped compresses deterministically: no name, no modification time.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
