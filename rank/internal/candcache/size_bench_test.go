package candcache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// memoryPayload is a memory record's payload with an access_counts map of
// keys entries, the part of a payload made of many small values.
func memoryPayload(b *testing.B, keys int) map[string]*qdrant.Value {
	b.Helper()
	counts := map[string]any{}
	for i := range keys {
		counts[fmt.Sprintf("replica-%02d", i)] = int64(i * 7)
	}
	m, err := qdrant.TryValueMap(map[string]any{
		"text": strings.Repeat("x", 200), "text_hash": strings.Repeat("a", 64), "created_at": "2026-01-01T00:00:00Z",
		"last_accessed_at": "2026-01-02T00:00:00Z", "confidence": 0.8, "importance": 0.5, "access_counts": counts,
		"entities": []any{"tea", "coffee", "green tea"}, "session_ids": []any{"s1", "s2"}, "kind": "fact",
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkPayloadSize compares the payload part of Entry.Size with the
// heap the decoded payload takes (heap-B/entry vs est-B/entry): the byte
// bound is only as good as that estimate.
func BenchmarkPayloadSize(b *testing.B) {
	for _, keys := range []int{1, 20} {
		b.Run(fmt.Sprintf("access_counts=%d", keys), func(b *testing.B) {
			const n = 2000
			src := memoryPayload(b, keys)
			k := key(1, 1)
			var heap, est int64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				keep := make([]*Entry, n)
				for i := range keep {
					p := make(map[string]*qdrant.Value, len(src))
					for name, v := range src {
						p[name] = proto.Clone(v).(*qdrant.Value)
					}
					keep[i] = &Entry{Payload: p}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = int64(after.HeapAlloc-before.HeapAlloc) / n
				est = keep[0].Size(&k) - entryOverhead - decodedSize
				runtime.KeepAlive(keep)
			}
			b.ReportMetric(float64(heap), "heap-B/entry")
			b.ReportMetric(float64(est), "est-B/entry")
		})
	}
}

// BenchmarkEntryCapacity measures what keeping an entry's payload bytes
// (PayloadWire, for replies that copy them) costs in capacity: the
// estimated bytes of a memory-shaped entry, as the proxy benchmark's
// memories are written, with and without them, and how many such entries
// the default 64 MiB bound holds.
func BenchmarkEntryCapacity(b *testing.B) {
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	created := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	m := &memory.Memory{
		Text: "Dana moved to Lisbon in March and works from the Alfama office on Tuesdays", MemoryType: "fact",
		Source: "direct", ExtractorModel: "gpt-4o-mini", Observations: 3, CreatedAt: created,
		LastObservedAt: created.Add(48 * time.Hour), SessionIDs: []string{"s-123"}, Retrievable: true,
		AccessCounts:   []memory.AccessCount{{Replica: "memrank-0", Count: 12}, {Replica: "memrank-1", Count: 7}},
		LastAccessedAt: created.Add(72 * time.Hour), HasLogprob: true, ExtractorLogprob: -0.2,
	}
	payload := codec.Encode(m)
	wire, err := proto.Marshal(&qdrant.ScoredPoint{Payload: payload}) // only the payload's fields
	if err != nil {
		b.Fatal(err)
	}
	vec := make([]float32, 384)
	for i := range vec {
		vec[i] = float32(i%7) / 7
	}
	k := Key{Collection: "memories", ID: PointKey{Num: 123456}, Version: 42}
	for _, tc := range []struct {
		name string
		wire []byte
	}{{"payload_bytes=no", nil}, {"payload_bytes=yes", wire}} {
		b.Run(tc.name, func(b *testing.B) {
			e := &Entry{Payload: payload, Dense: vec, PayloadWire: tc.wire,
				Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
					Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: vec}}}}}}
			codec.DecodeRank(payload, &e.Mem)
			var size int64
			for b.Loop() {
				size = e.Size(&k)
			}
			b.ReportMetric(float64(size), "est-B/entry")
			b.ReportMetric(float64(len(tc.wire)), "wire-B/entry")
			b.ReportMetric(float64((64<<20)/size), "entries/64MiB")
		})
	}
}
