package store

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// wireDecoded is what a client decodes from a reply's point carrying
// wirePayload's bytes: the payload, or an error.
func wireDecoded(b []byte) (map[string]*qdrant.Value, error) {
	sp := &qdrant.ScoredPoint{Score: 0.5}
	sp.ProtoReflect().SetUnknown(b)
	raw, err := proto.Marshal(sp)
	if err != nil {
		return nil, err
	}
	var got qdrant.ScoredPoint
	if err := proto.Unmarshal(raw, &got); err != nil {
		return nil, err
	}
	return got.GetPayload(), nil
}

func storedPayload(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := proto.Marshal(&qdrant.Struct{Fields: qdrant.NewValueMap(m)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWirePayload(t *testing.T) {
	entry := storedPayload(t, map[string]any{"a": 1})
	tests := []struct {
		name   string
		stored []byte
		// decode: wirePayload declines and the caller decodes instead.
		decode bool
	}{
		{name: "empty payload", stored: nil},
		{name: "every kind of value", stored: storedPayload(t, map[string]any{
			"s": "text", "i": -7, "f": 2.5, "b": true, "n": nil, "l": []any{"x", 3, 4.5, false},
			"o": map[string]any{"deep": map[string]any{"k": []any{map[string]any{"z": "y"}}}}, "": "empty key", "ü": "utf-8"})},
		{name: "duplicate key, last one wins", stored: append(storedPayload(t, map[string]any{"k": "first"}), storedPayload(t, map[string]any{"k": "last"})...)},
		{name: "another field", stored: protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1), decode: true},
		{name: "field 1 as a varint", stored: protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1), decode: true},
		{name: "overlong tag", stored: append([]byte{0x8a, 0x00}, entry[1:]...), decode: true},
		{name: "truncated entry", stored: entry[:len(entry)-1], decode: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wirePayload(tc.stored)
			if tc.decode {
				if got != nil {
					t.Fatalf("wirePayload = %x, want nil (decode instead)", got)
				}
				return
			}
			if got == nil {
				t.Fatal("wirePayload declined a valid payload")
			}
			want, err := decodePayload(tc.stored)
			if err != nil {
				t.Fatal(err)
			}
			have, err := wireDecoded(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, have, protocmp.Transform(), cmpEmptyMaps); diff != "" {
				t.Errorf("payload (-decoded +wire):\n%s", diff)
			}
		})
	}
	if stored := storedPayload(t, map[string]any{"a": "b"}); &wirePayload(stored)[0] == &stored[0] {
		t.Error("wirePayload aliases the stored bytes, which may be bbolt's memory map")
	}
}

// cmpEmptyMaps equates a nil and an empty payload, which marshal alike.
var cmpEmptyMaps = cmp.FilterValues(func(a, b map[string]*qdrant.Value) bool { return len(a) == 0 && len(b) == 0 },
	cmp.Comparer(func(a, b map[string]*qdrant.Value) bool { return true }))

// FuzzWirePayload: for any stored bytes, the wire form is either declined or
// decodes exactly as the stored Struct does, failing where it fails.
func FuzzWirePayload(f *testing.F) {
	f.Add(storedPayload(f, map[string]any{"a": 1, "b": []any{"x", 2.5}, "c": map[string]any{"d": nil}}))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00})
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00})
	f.Add([]byte{0x0a, 0x03, 0x0a, 0x01, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		w := wirePayload(b)
		if w == nil {
			return
		}
		want, werr := decodePayload(b)
		have, herr := wireDecoded(w)
		if (werr == nil) != (herr == nil) {
			t.Fatalf("stored decode error %v, wire decode error %v", werr, herr)
		}
		if werr != nil {
			return
		}
		if diff := cmp.Diff(want, have, protocmp.Transform(), cmpEmptyMaps, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("payload (-decoded +wire):\n%s", diff)
		}
	})
}

// TestServerRepliesUseWirePayloads: every read the gRPC server answers with
// whole payloads passes them on as wire bytes, and a selection of keys
// still decodes. Without this, losing forWire on a method would only make
// it slower, which no answer-equality test sees.
func TestServerRepliesUseWirePayloads(t *testing.T) {
	db, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1, 0}), Payload: qdrant.NewValueMap(map[string]any{"g": "a", "n": 1})},
	}}); err != nil {
		t.Fatal(err)
	}
	s := &pointsService{db: db}
	whole := qdrant.NewWithPayload(true)
	limit := uint64(5)
	q := func(sel *qdrant.WithPayloadSelector) *qdrant.QueryPoints {
		return &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 0), Limit: &limit, WithPayload: sel}
	}
	sr := func(sel *qdrant.WithPayloadSelector) *qdrant.SearchPoints {
		return &qdrant.SearchPoints{CollectionName: "c", Vector: []float32{1, 0}, Limit: limit, WithPayload: sel}
	}
	calls := map[string]func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error){
		"Get": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.Get(ctx, &qdrant.GetPoints{CollectionName: "c", Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}, WithPayload: sel})
			return msgs(r.GetResult()), err
		},
		"Scroll": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", WithPayload: sel})
			return msgs(r.GetResult()), err
		},
		"Query": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.Query(ctx, q(sel))
			return msgs(r.GetResult()), err
		},
		"QueryBatch": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "c", QueryPoints: []*qdrant.QueryPoints{q(sel)}})
			return msgs(r.GetResult()[0].GetResult()), err
		},
		"Search": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.Search(ctx, sr(sel))
			return msgs(r.GetResult()), err
		},
		"SearchBatch": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.SearchBatch(ctx, &qdrant.SearchBatchPoints{CollectionName: "c", SearchPoints: []*qdrant.SearchPoints{sr(sel)}})
			return msgs(r.GetResult()[0].GetResult()), err
		},
		"QueryGroups": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: "c", Query: qdrant.NewQuery(1, 0), GroupBy: "g", WithPayload: sel})
			return msgs(r.GetResult().GetGroups()[0].GetHits()), err
		},
		"SearchGroups": func(sel *qdrant.WithPayloadSelector) ([]proto.Message, error) {
			r, err := s.SearchGroups(ctx, &qdrant.SearchPointGroups{CollectionName: "c", Vector: []float32{1, 0}, GroupBy: "g", GroupSize: 1, Limit: 1, WithPayload: sel})
			return msgs(r.GetResult().GetGroups()[0].GetHits()), err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				sel  *qdrant.WithPayloadSelector
				wire bool
			}{{whole, true}, {qdrant.NewWithPayloadInclude("g"), false}} {
				pts, err := call(tc.sel)
				if err != nil {
					t.Fatal(err)
				}
				if len(pts) != 1 {
					t.Fatalf("%d points, want 1", len(pts))
				}
				p := pts[0].(interface {
					proto.Message
					GetPayload() map[string]*qdrant.Value
				})
				unknown := len(p.ProtoReflect().GetUnknown()) > 0
				if unknown != tc.wire || (len(p.GetPayload()) > 0) == tc.wire {
					t.Errorf("whole payload %v: %d decoded keys, wire bytes %v", tc.wire, len(p.GetPayload()), unknown)
				}
			}
		})
	}
}

func msgs[M proto.Message](ps []M) []proto.Message {
	out := make([]proto.Message, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}
