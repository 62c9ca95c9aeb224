package restapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
)

func benchVector(dims int) string {
	parts := make([]string, dims)
	for i := range parts {
		parts[i] = fmt.Sprintf("%.6f", float64(i%97)/97-0.5)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// BenchmarkDecodeQuery: a Python client's query body (384 dims, a filter)
// parsed and translated to QueryPoints.
func BenchmarkDecodeQuery(b *testing.B) {
	body := `{"query":{"nearest":` + benchVector(384) + `},"filter":{"must":[{"key":"user_id","match":{"value":"dana"}}]},"limit":10,"with_vector":false,"with_payload":true}`
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		v, err := qdrantjson.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := toQueryPoints(v, "", "mem"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeUpsert: 100 points of 384 dims with small payloads.
func BenchmarkDecodeUpsert(b *testing.B) {
	var pts []string
	vec := benchVector(384)
	for i := range 100 {
		pts = append(pts, fmt.Sprintf(`{"id":%d,"vector":%s,"payload":{"text":"memory %d","confidence":0.9,"access_counts":{"a":3}}}`, i, vec, i))
	}
	body := `{"points":[` + strings.Join(pts, ",") + `]}`
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		v, err := qdrantjson.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		for i, e := range v.Members[0].Val.Items() {
			if _, err := toPointStruct(e, qdrantjson.Index("points", i)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEncodeQueryResult: ten scored points with memory-sized payloads
// written in Qdrant's REST shape.
func BenchmarkEncodeQueryResult(b *testing.B) {
	pts := make([]*qdrant.ScoredPoint, 10)
	for i := range pts {
		pts[i] = &qdrant.ScoredPoint{Id: qdrant.NewIDNum(uint64(i) + 1<<60), Score: 0.9, Version: 7, Payload: map[string]*qdrant.Value{
			"text": qdrant.NewValueString("Lives in Lisbon since 2021"), "confidence": qdrant.NewValueDouble(0.9),
			"created_at": qdrant.NewValueString("2026-01-02T03:04:05Z"), "access_counts": qdrant.NewValueFromFields(map[string]*qdrant.Value{"a": qdrant.NewValueInt(3)}),
			"entities": qdrant.NewValueFromList(qdrant.NewValueString("Dana"), qdrant.NewValueString("Lisbon")),
		}}
	}
	var buf []byte
	for b.Loop() {
		buf = appendScoredPoints(buf[:0], pts, shape{payload: true})
	}
	b.SetBytes(int64(len(buf)))
}
