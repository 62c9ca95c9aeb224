package candcache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"
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
