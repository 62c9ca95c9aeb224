package qdrantwire

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// scoredSeeds are replies with every field of a scored point set, and the
// corner cases: none, nil points and values, an empty key, -0, unknown
// fields, named and unnamed vectors.
func scoredSeeds() map[string]*qdrant.QueryResponse {
	nested, _ := qdrant.NewValue(map[string]any{"a": []any{1, "x", map[string]any{"b": true}}, "c": nil})
	full := &qdrant.ScoredPoint{
		Id:         qdrant.NewIDNum(42),
		Payload:    map[string]*qdrant.Value{"text": qdrant.NewValueString("likes tea"), "n": qdrant.NewValueDouble(0.5), "nested": nested, "": qdrant.NewValueBool(false)},
		Score:      0.75,
		Version:    1 << 40,
		Vectors:    &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: []float32{1, 0, -2.5}}}}}},
		ShardKey:   qdrant.NewShardKeyNum(3),
		OrderValue: &qdrant.OrderValue{Variant: &qdrant.OrderValue_Float{Float: 1.5}},
	}
	unknown := &qdrant.ScoredPoint{Id: qdrant.NewID("0b6f8a8e-3a3e-4b3a-9b7e-2f1c0c5d6e7f"), Score: float32(math.Copysign(0, -1))}
	unknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7))
	return map[string]*qdrant.QueryResponse{
		"empty":    {},
		"time":     {Time: 0.001},
		"full":     {Result: []*qdrant.ScoredPoint{full, {Id: qdrant.NewIDNum(1)}}, Time: 2e-4},
		"nil":      {Result: []*qdrant.ScoredPoint{nil, {Payload: map[string]*qdrant.Value{"k": nil}}}},
		"unknown":  {Result: []*qdrant.ScoredPoint{unknown}},
		"named":    {Result: []*qdrant.ScoredPoint{{Id: qdrant.NewIDNum(0), Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: map[string]*qdrant.VectorOutput{"v": {Data: []float32{1}}}}}}}}},
		"negative": {Result: []*qdrant.ScoredPoint{{Score: -1, Version: 1}}, Time: math.Copysign(0, -1)},
	}
}

// sameReply fails unless EncodeScoredWire's output decodes to the reply
// proto.Marshal writes. With wires (the payloads as PayloadWires read them
// from some encoding of r), the payloads are copied from them, whose
// framing may differ from proto.Marshal's (a longer tag, a key twice), so
// only the decoded messages are compared.
func sameReply(t *testing.T, name string, r *qdrant.QueryResponse, wires [][]byte) {
	t.Helper()
	got, err := EncodeScoredWire(r.GetResult(), wires, r.GetTime())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, err := proto.Marshal(&qdrant.QueryResponse{Result: r.GetResult(), Time: r.GetTime()})
	if err != nil {
		t.Skipf("%s: proto.Marshal: %v", name, err) // nothing to compare with
	}
	if wires == nil && len(got) != len(want) {
		t.Errorf("%s: %d bytes, proto.Marshal writes %d", name, len(got), len(want))
	}
	var g, w qdrant.QueryResponse
	if err := proto.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: the encoding does not decode: %v", name, err)
	}
	if err := proto.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if diff := cmp.Diff(&w, &g, protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("%s: decodes differently (-proto.Marshal +EncodeScored):\n%s", name, diff)
	}
}

func TestEncodeScored(t *testing.T) {
	for name, r := range scoredSeeds() {
		t.Run(name, func(t *testing.T) { sameReply(t, name, r, nil) })
		t.Run(name+" with payload wires", func(t *testing.T) {
			b, err := proto.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			sameReply(t, name, r, payloadWires(t, b, len(r.GetResult())))
		})
	}
}

// payloadWires is PayloadWires(b), which must succeed with one payload per
// point.
func payloadWires(t *testing.T, b []byte, points int) [][]byte {
	t.Helper()
	wires, err := PayloadWires(b)
	if err != nil {
		t.Fatalf("PayloadWires of a reply protobuf decodes: %v", err)
	}
	if len(wires) != points {
		t.Fatalf("PayloadWires: %d payloads for %d points", len(wires), points)
	}
	for i, w := range wires {
		if w == nil {
			t.Fatalf("PayloadWires: point %d has nil bytes (an empty payload is empty bytes)", i)
		}
	}
	return wires
}

// TestPayloadWiresFraming: payload fields in a longer tag, a key twice and
// fields PayloadWires must skip (a payload field of another wire type, an
// unknown field, a result of another wire type) decode as protobuf decodes
// them.
func TestPayloadWiresFraming(t *testing.T) {
	entry := func(k, v string) []byte {
		val, _ := proto.Marshal(qdrant.NewValueString(v))
		var e []byte
		e = protowire.AppendTag(e, fieldMapKey, protowire.BytesType)
		e = protowire.AppendString(e, k)
		e = protowire.AppendTag(e, fieldMapValue, protowire.BytesType)
		return protowire.AppendBytes(e, val)
	}
	var point []byte
	point = protowire.AppendTag(point, fieldPointPayload, protowire.BytesType)
	point = protowire.AppendBytes(point, entry("k", "first"))
	point = append(point, 0x92, 0x00) // field 2, bytes, in a two-byte tag
	point = protowire.AppendBytes(point, entry("k", "last"))
	point = protowire.AppendTag(point, fieldPointPayload, protowire.VarintType)
	point = protowire.AppendVarint(point, 5)
	point = protowire.AppendTag(point, 99, protowire.BytesType)
	point = protowire.AppendBytes(point, []byte("x"))
	point = protowire.AppendTag(point, fieldPointPayload, protowire.BytesType)
	point = protowire.AppendBytes(point, entry("other", "v"))
	var reply []byte
	reply = protowire.AppendTag(reply, fieldResult, protowire.BytesType)
	reply = protowire.AppendBytes(reply, point)
	reply = protowire.AppendTag(reply, fieldResult, protowire.VarintType)
	reply = protowire.AppendVarint(reply, 1)
	reply = protowire.AppendTag(reply, fieldResult, protowire.BytesType)
	reply = protowire.AppendBytes(reply, nil)
	var r qdrant.QueryResponse
	if err := proto.Unmarshal(reply, &r); err != nil {
		t.Fatal(err)
	}
	if got := r.GetResult()[0].GetPayload()["k"].GetStringValue(); got != "last" {
		t.Fatalf("protobuf decodes k = %q", got)
	}
	sameReply(t, "framing", &r, payloadWires(t, reply, len(r.GetResult())))
	if _, err := PayloadWires(reply[:len(reply)-1]); err == nil {
		t.Error("PayloadWires accepted a truncated reply")
	}
}

// FuzzEncodeScored: any reply that decodes is encoded to the same message
// (and the same length) as proto.Marshal encodes it; and, with its payloads
// copied from its own bytes (PayloadWires), to the same message.
func FuzzEncodeScored(f *testing.F) {
	for _, r := range scoredSeeds() {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r qdrant.QueryResponse
		if proto.Unmarshal(b, &r) != nil {
			return
		}
		sameReply(t, "fuzzed", &r, nil)
		sameReply(t, "fuzzed, payload wires", &r, payloadWires(t, b, len(r.GetResult())))
	})
}

// TestPayloadWiresExactSize: each payload's bytes are allocated to their
// size, which is what the candidate cache counts.
func TestPayloadWiresExactSize(t *testing.T) {
	b, err := proto.Marshal(scoredSeeds()["full"])
	if err != nil {
		t.Fatal(err)
	}
	wires, err := PayloadWires(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wires {
		if cap(w) != len(w) {
			t.Errorf("point %d: %d bytes in a slice of capacity %d", i, len(w), cap(w))
		}
	}
}

// sameBatch fails unless EncodeBatchWire's output decodes to the batch
// reply proto.Marshal writes (and, without payload bytes, has its length).
// withWires copies each sub-result's payloads from its own encoding.
func sameBatch(t *testing.T, name string, r *qdrant.QueryBatchResponse, withWires bool) {
	t.Helper()
	results := make([][]*qdrant.ScoredPoint, len(r.GetResult()))
	var wires [][][]byte
	for i, sub := range r.GetResult() {
		results[i] = sub.GetResult()
		if withWires {
			b, err := proto.Marshal(&qdrant.QueryResponse{Result: sub.GetResult()})
			if err != nil {
				t.Skipf("%s: proto.Marshal: %v", name, err)
			}
			wires = append(wires, payloadWires(t, b, len(sub.GetResult())))
		}
	}
	got, err := EncodeBatchWire(results, wires, r.GetTime())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// What the encoder is given: each sub-result's points (a BatchResult's
	// own unknown fields are not).
	subs := make([]*qdrant.BatchResult, len(results))
	for i, points := range results {
		subs[i] = &qdrant.BatchResult{Result: points}
	}
	want, err := proto.Marshal(&qdrant.QueryBatchResponse{Result: subs, Time: r.GetTime()})
	if err != nil {
		t.Skipf("%s: proto.Marshal: %v", name, err)
	}
	if !withWires && len(got) != len(want) {
		t.Errorf("%s: %d bytes, proto.Marshal writes %d", name, len(got), len(want))
	}
	var g, w qdrant.QueryBatchResponse
	if err := proto.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: the encoding does not decode: %v", name, err)
	}
	if err := proto.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if diff := cmp.Diff(&w, &g, protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("%s: decodes differently (-proto.Marshal +EncodeBatchWire):\n%s", name, diff)
	}
	// SearchBatchResponse has the same fields: the same bytes decode to it.
	var s qdrant.SearchBatchResponse
	if err := proto.Unmarshal(got, &s); err != nil || len(s.GetResult()) != len(r.GetResult()) {
		t.Errorf("%s: as a SearchBatchResponse: %d results, %v", name, len(s.GetResult()), err)
	}
}

func batchSeeds() map[string]*qdrant.QueryBatchResponse {
	seeds := scoredSeeds()
	var all []*qdrant.BatchResult
	for _, name := range []string{"full", "empty", "nil", "unknown", "named", "negative"} {
		all = append(all, &qdrant.BatchResult{Result: seeds[name].GetResult()})
	}
	return map[string]*qdrant.QueryBatchResponse{
		"none":         {},
		"time only":    {Time: 0.25},
		"one":          {Result: []*qdrant.BatchResult{{Result: seeds["full"].GetResult()}}, Time: 1e-3},
		"empty result": {Result: []*qdrant.BatchResult{{}, {}}},
		"nil result":   {Result: []*qdrant.BatchResult{nil, {Result: seeds["full"].GetResult()}}},
		"all":          {Result: all, Time: math.Copysign(0, -1)},
	}
}

func TestEncodeBatch(t *testing.T) {
	for name, r := range batchSeeds() {
		t.Run(name, func(t *testing.T) { sameBatch(t, name, r, false) })
		t.Run(name+" with payload wires", func(t *testing.T) { sameBatch(t, name, r, true) })
	}
}

// FuzzEncodeBatch: any batch reply that decodes is encoded to the message
// proto.Marshal writes, with and without payload bytes.
func FuzzEncodeBatch(f *testing.F) {
	for _, r := range batchSeeds() {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r qdrant.QueryBatchResponse
		if proto.Unmarshal(b, &r) != nil {
			return
		}
		sameBatch(t, "fuzzed", &r, false)
		sameBatch(t, "fuzzed, payload wires", &r, true)
	})
}

// BenchmarkEncodeBatch: a batch reply of four sub-results of ten points,
// each with a 20-key payload, by proto.Marshal, by EncodeBatchWire from
// the maps, and by EncodeBatchWire copying the payloads' bytes.
func BenchmarkEncodeBatch(b *testing.B) {
	payload := map[string]any{}
	for i := range 20 {
		payload[fmt.Sprintf("key_%d", i)] = fmt.Sprintf("value number %d of the payload", i)
	}
	results := make([][]*qdrant.ScoredPoint, 4)
	wires := make([][][]byte, 4)
	batch := &qdrant.QueryBatchResponse{Time: 1e-3}
	for i := range results {
		for j := range 10 {
			results[i] = append(results[i], &qdrant.ScoredPoint{Id: qdrant.NewIDNum(uint64(i*10 + j)), Score: 0.5, Version: 7, Payload: qdrant.NewValueMap(payload)})
		}
		enc, err := proto.Marshal(&qdrant.QueryResponse{Result: results[i]})
		if err != nil {
			b.Fatal(err)
		}
		if wires[i], err = PayloadWires(enc); err != nil {
			b.Fatal(err)
		}
		batch.Result = append(batch.Result, &qdrant.BatchResult{Result: results[i]})
	}
	b.Run("proto.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name  string
		wires [][][]byte
	}{{"maps", nil}, {"payload bytes", wires}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeBatchWire(results, tc.wires, 1e-3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
