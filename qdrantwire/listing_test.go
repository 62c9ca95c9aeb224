package qdrantwire

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// listingOf is a QueryResponse of n points as Qdrant answers a request
// for ids, scores and versions: integer ids, or UUIDs when uuids is set.
func listingOf(n int, uuids bool) *qdrant.QueryResponse {
	resp := &qdrant.QueryResponse{Time: 0.000125}
	for i := range n {
		id := qdrant.NewIDNum(uint64(1000 + i))
		if uuids {
			id = qdrant.NewID("5c56c793-69f3-4fbf-87e6-c4bf54c28c" + string(rune('a'+i%26)) + "0")
		}
		resp.Result = append(resp.Result, &qdrant.ScoredPoint{Id: id, Score: 0.9 - float32(i)/100, Version: uint64(7 * i)})
	}
	return resp
}

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// protoListing is what go-client returns for b.
func protoListing(b []byte) ([]*qdrant.ScoredPoint, error) {
	var resp qdrant.QueryResponse
	if err := proto.Unmarshal(b, &resp); err != nil {
		return nil, err
	}
	return resp.GetResult(), nil
}

func TestDecodeListing(t *testing.T) {
	withPayload := listingOf(3, false)
	withPayload.Result[1].Payload = map[string]*qdrant.Value{"text": qdrant.NewValueString("Dana lives in Lisbon")}
	withUsage := listingOf(2, false)
	withUsage.Usage = &qdrant.Usage{}
	mixed := listingOf(4, false)
	mixed.Result[2].Id = qdrant.NewID("0b4f0fd4-6a0e-4a3a-9d3c-2b0e9f6f2e11")
	emptyID := listingOf(1, false)
	emptyID.Result[0].Id = &qdrant.PointId{}
	inf := listingOf(1, false)
	inf.Result[0].Score = float32(math.Inf(-1))
	nan := listingOf(1, false)
	nan.Result[0].Score = float32(math.NaN())
	valid := marshal(t, listingOf(2, false))

	tests := []struct {
		name string
		b    []byte
		fast bool // read without protobuf
	}{
		{name: "integer ids", b: marshal(t, listingOf(40, false)), fast: true},
		{name: "uuids", b: marshal(t, listingOf(40, true)), fast: true},
		{name: "mixed ids", b: marshal(t, mixed), fast: true},
		{name: "empty", b: nil, fast: true},
		{name: "time only", b: marshal(t, &qdrant.QueryResponse{Time: 1}), fast: true},
		{name: "empty id", b: marshal(t, emptyID), fast: true},
		{name: "infinite score", b: marshal(t, inf), fast: true},
		{name: "NaN score", b: marshal(t, nan), fast: true},
		{name: "payload goes to protobuf", b: marshal(t, withPayload)},
		{name: "usage goes to protobuf", b: marshal(t, withUsage)},
		{name: "unknown top-level field goes to protobuf", b: protowire.AppendVarint(protowire.AppendTag(append([]byte{}, valid...), 9, protowire.VarintType), 3)},
		{name: "unknown point field goes to protobuf", b: protowire.AppendBytes(protowire.AppendTag(nil, fieldResult, protowire.BytesType),
			protowire.AppendVarint(protowire.AppendTag(nil, 12, protowire.VarintType), 1))},
		{name: "score with the wrong wire type goes to protobuf", b: protowire.AppendBytes(protowire.AppendTag(nil, fieldResult, protowire.BytesType),
			protowire.AppendVarint(protowire.AppendTag(nil, fieldPointScore, protowire.VarintType), 1))},
		{name: "two ids are merged by protobuf", b: protowire.AppendBytes(protowire.AppendTag(nil, fieldResult, protowire.BytesType),
			append(marshal(t, &qdrant.ScoredPoint{Id: qdrant.NewIDNum(4)}), marshal(t, &qdrant.ScoredPoint{Id: &qdrant.PointId{}})...))},
		{name: "truncated", b: valid[:len(valid)-3]},
		{name: "uuid not utf-8", b: protowire.AppendBytes(protowire.AppendTag(nil, fieldResult, protowire.BytesType),
			protowire.AppendBytes(protowire.AppendTag(nil, fieldPointID, protowire.BytesType),
				protowire.AppendBytes(protowire.AppendTag(nil, fieldIDUUID, protowire.BytesType), []byte{0xff, 0xfe})))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := protoListing(tc.b)
			got, err := DecodeListing(tc.b)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, protobuf's %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("points differ from protobuf's (-protobuf +got):\n%s", diff)
			}
			if _, fast := decodeListing(tc.b); fast != tc.fast {
				t.Errorf("fast path taken: %v, want %v", fast, tc.fast)
			}
		})
	}
}

// FuzzDecodeListing checks that DecodeListing answers every input as
// protobuf does, and that its fast path, when it answers, agrees.
func FuzzDecodeListing(f *testing.F) {
	mixed := listingOf(3, true)
	mixed.Result[0].Id = qdrant.NewIDNum(math.MaxUint64)
	payload := listingOf(2, false)
	payload.Result[0].Payload = map[string]*qdrant.Value{"k": qdrant.NewValueInt(1)}
	for _, m := range []*qdrant.QueryResponse{listingOf(0, false), listingOf(1, false), listingOf(5, false), mixed, payload} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// A NaN score (a fuzzer's find: NaN is not equal to itself).
	f.Add([]byte("\n/0000000000000000000000000000000000000000\x1d00\xff\xff00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := protoListing(b)
		got, err := DecodeListing(b)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, protobuf's %v", err, wantErr)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("points differ from protobuf's (-protobuf +got):\n%s", diff)
		}
		if fast, ok := decodeListing(b); ok {
			if wantErr != nil {
				t.Fatalf("fast path read what protobuf refuses (%v)", wantErr)
			}
			if diff := cmp.Diff(want, fast, protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
				t.Fatalf("fast path differs from protobuf (-protobuf +fast):\n%s", diff)
			}
		}
	})
}

func BenchmarkDecodeListing(b *testing.B) {
	data := marshal(b, listingOf(40, false))
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeListing(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := protoListing(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
