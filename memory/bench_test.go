package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/scoring"
)

// benchPayloads are 100 payloads as go-client hands them over: every memory
// field memrank writes, plus a couple of application keys.
func benchPayloads(c *Codec, now time.Time) []map[string]*qdrant.Value {
	r := rand.New(rand.NewPCG(1, 1))
	types := []string{"entity", "event", "fact", "preference", "relation"}
	sources := []string{"direct", "confirmed", "strong_inference", "weak_inference", "speculation"}
	out := make([]map[string]*qdrant.Value, 100)
	for i := range out {
		created := now.Add(-time.Duration(r.IntN(400*24)) * time.Hour)
		m := Memory{
			Text:           fmt.Sprintf("memory number %d about something the user said", i),
			MemoryType:     types[i%5],
			Source:         sources[r.IntN(5)],
			ExtractorModel: "claude-3-5-sonnet",
			Observations:   r.IntN(5),
			Confidence:     0.3 + r.Float64()*0.65,
			HasConfidence:  true,
			CreatedAt:      created,
			LastObservedAt: created.Add(time.Duration(r.IntN(100)) * time.Hour),
			AccessCounts:   []AccessCount{{"replica-a", int64(r.IntN(20))}, {"replica-b", int64(r.IntN(20))}},
			SessionIDs:     []string{"s1", "s2"},
			TurnIDs:        []string{"t1", "t2"},
			Entities:       []string{"Acme"},
			Retrievable:    true,
			Modalities:     []string{"chat"},
		}
		if i%4 == 0 {
			m.LastAccessedAt = now.Add(-time.Duration(r.IntN(30*24)) * time.Hour)
		}
		p := c.Encode(&m)
		p["user_id"] = qdrant.NewValueString("u-1")
		p["app"] = qdrant.NewValueString("agent")
		out[i] = p
	}
	return out
}

// BenchmarkDecodeScoreSort100 is the read path's work for one query of 100
// candidates in go-client payload form: decode each payload (DecodeRank, as
// the read path does), score it, gate, sort, cut to 10. Goal (issue 3): at
// most 50 µs per 100 on the 2-core CI machine.
func BenchmarkDecodeScoreSort100(b *testing.B) {
	benchDecodeScoreSort(b, (*Codec).DecodeRank)
}

// BenchmarkFullDecodeScoreSort100 is the same with the full decode, provenance
// lists included, for comparison.
func BenchmarkFullDecodeScoreSort100(b *testing.B) {
	benchDecodeScoreSort(b, (*Codec).Decode)
}

func benchDecodeScoreSort(b *testing.B, decode func(*Codec, map[string]*qdrant.Value, *Memory)) {
	c := newCodec(b)
	p := c.Params()
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	payloads := benchPayloads(c, now)
	mems := make([]Memory, len(payloads))
	scores := make([]scoring.Score, 0, len(payloads))
	b.ReportAllocs()
	for b.Loop() {
		scores = scores[:0]
		for i, pl := range payloads {
			decode(c, pl, &mems[i])
			in := c.Inputs(&mems[i])
			in.Seq = i
			scores = append(scores, p.Evaluate(&in, 0.8, now))
		}
		top, _, _ := p.Select(scores, 10)
		if len(top) != 10 {
			b.Fatalf("got %d", len(top))
		}
	}
}

// BenchmarkDecode1 is one payload's decode, for the per-candidate figure.
func BenchmarkDecode1(b *testing.B) {
	c := newCodec(b)
	payloads := benchPayloads(c, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	var m Memory
	b.ReportAllocs()
	for b.Loop() {
		c.Decode(payloads[7], &m)
	}
}
