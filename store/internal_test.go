package store

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/vecmath"
)

func TestBitsetEach(t *testing.T) {
	var b bitset
	want := []uint32{0, 1, 63, 64, 65, 127, 128, 1000}
	for _, i := range want {
		b.set(i)
	}
	b.set(5)
	b.clear(5)
	var got []uint32
	b.each(0, 2000, func(i uint32) { got = append(got, i) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	got = nil
	b.each(64, 128, func(i uint32) { got = append(got, i) })
	if diff := cmp.Diff([]uint32{64, 65, 127}, got); diff != "" {
		t.Fatalf("range (-want +got):\n%s", diff)
	}
	if b.count() != len(want) || b.has(5) || !b.has(1000) || b.has(5000) {
		t.Fatal("count/has disagree")
	}
}

func TestPostings(t *testing.T) {
	var p postings
	for _, s := range []uint32{5, 1, 9, 5, 3} {
		p = p.add(s)
	}
	p = p.remove(9).remove(42)
	if diff := cmp.Diff(postings{1, 3, 5}, p); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// The bounded heap keeps exactly what a full sort would keep, ties broken
// by id.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		n := r.IntN(300)
		k := r.IntN(40) + 1
		ids := make([]PointID, n)
		hits := make([]hit, n)
		for i := range hits {
			ids[i] = NumID(uint64(r.IntN(1000)))
			if r.IntN(4) == 0 {
				var u [16]byte
				u[0] = byte(r.IntN(256))
				ids[i] = UUIDID(u)
			}
			hits[i] = hit{rank: float32(r.IntN(10)), slot: uint32(i)}
		}
		h := newTopK(k, ids)
		for _, x := range hits {
			h.push(x)
		}
		got := h.sorted()
		sort.SliceStable(hits, func(i, j int) bool {
			if hits[i].rank != hits[j].rank {
				return hits[i].rank > hits[j].rank
			}
			return ids[hits[i].slot].Compare(ids[hits[j].slot]) < 0
		})
		want := hits[:min(k, n)]
		key := func(hs []hit) []string {
			var out []string
			for _, x := range hs {
				out = append(out, ids[x.slot].String()+"@"+string(rune('0'+int(x.rank))))
			}
			return out
		}
		if diff := cmp.Diff(key(want), key(got)); diff != "" {
			t.Fatalf("round %d (-want +got):\n%s", round, diff)
		}
	}
}

func TestPointIDOrder(t *testing.T) {
	var u1, u2 [16]byte
	u1[15] = 1
	u2[0] = 1
	sorted := []PointID{NumID(0), NumID(1), NumID(256), NumID(math.MaxUint64), UUIDID(u1), UUIDID(u2)}
	for i := range sorted {
		for j := range sorted {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := sorted[i].Compare(sorted[j]); got != want {
				t.Fatalf("Compare(%v, %v) = %d, want %d", sorted[i], sorted[j], got, want)
			}
			// The bbolt key order is the same order.
			ki, kj := sorted[i].key(), sorted[j].key()
			if got := slices.Compare(ki, kj); got != want {
				t.Fatalf("key order of %v, %v = %d, want %d", sorted[i], sorted[j], got, want)
			}
		}
		back, ok := idFromKey(sorted[i].key())
		if !ok || back != sorted[i] {
			t.Fatalf("key round trip of %v = %v", sorted[i], back)
		}
	}
}

func TestParseDatetime(t *testing.T) {
	ref := time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC).UnixMicro()
	for _, s := range []string{
		"2024-01-15T10:30:00Z", "2024-01-15T10:30:00.000Z", "2024-01-15T12:30:00+02:00", "2024-01-15 10:30:00Z",
		"2024-01-15T12:30:00+0200", "2024-01-15T10:30:00", "2024-01-15 10:30:00", "2024-01-15T10:30", "2024-01-15 10:30",
	} {
		got, ok := parseDatetime(s)
		if !ok || got != ref {
			t.Errorf("%q = %d %v, want %d", s, got, ok, ref)
		}
	}
	if got, ok := parseDatetime("2024-01-15"); !ok || got != time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC).UnixMicro() {
		t.Errorf("bare date = %d %v", got, ok)
	}
	for _, s := range []string{"", "yesterday", "2024-13-01", "15/01/2024", "2024-01-15T25:00:00Z"} {
		if _, ok := parseDatetime(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
}

func TestNormalize(t *testing.T) {
	if diff := cmp.Diff([]float32{0.6, 0.8}, normalize([]float32{3, 4})); diff != "" {
		t.Error(diff)
	}
	in := []float32{1e-5, 0} // squared norm below f32 epsilon: left alone
	if diff := cmp.Diff(in, normalize(in)); diff != "" {
		t.Error(diff)
	}
	in = []float32{3, 4}
	normalize(in)
	if in[0] != 3 {
		t.Error("normalize modified its input")
	}
}

// Conditions on indexed fields are answered from the index (no payload
// read), everything else from the payload.
func TestIndexedConditionsUseTheIndex(t *testing.T) {
	c, err := newCollection("c", &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{VectorsConfig: qdrant.NewVectorsConfig(
		&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}}, vecmath.ScanKernels())
	if err != nil {
		t.Fatal(err)
	}
	for field, typ := range map[string]qdrant.PayloadSchemaType{"k": qdrant.PayloadSchemaType_Keyword, "n": qdrant.PayloadSchemaType_Integer} {
		p, _ := mustPath(field)
		c.indexes[field] = newFieldIndex(p, &qdrant.PayloadSchemaInfo{DataType: typ})
	}
	c.putPoint(NumID(1), 1, []float32{1, 0}, qdrant.NewValueMap(map[string]any{"k": "a", "n": 1}), nil)
	c.putPoint(NumID(2), 1, []float32{1, 0}, qdrant.NewValueMap(map[string]any{"k": []any{"b", "a"}, "n": 2.0}), nil)
	tests := []struct {
		name    string
		cond    *qdrant.Condition
		indexed bool
		want    []bool
	}{
		{"keyword", qdrant.NewMatchKeyword("k", "a"), true, []bool{true, true}},
		{"keywords", qdrant.NewMatchKeywords("k", "b"), true, []bool{false, true}},
		{"integer", qdrant.NewMatchInt("n", 1), true, []bool{true, false}},
		{"range on integer index", qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(2.0)}), true, []bool{false, true}},
		{"text is not indexed", qdrant.NewMatchText("k", "a"), false, []bool{true, true}},
		{"unindexed field", qdrant.NewMatchKeyword("other", "a"), false, []bool{false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := filterCompiler{c: c}.compile(&qdrant.Filter{Must: []*qdrant.Condition{tc.cond}}, "filter")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := n.(bitsNode); ok != tc.indexed {
				t.Fatalf("compiled to %T, indexed = %v", n, tc.indexed)
			}
			payloads := map[uint32]map[string]*qdrant.Value{
				0: qdrant.NewValueMap(map[string]any{"k": "a", "n": 1}),
				1: qdrant.NewValueMap(map[string]any{"k": []any{"b", "a"}, "n": 2.0}),
			}
			var got []bool
			for slot := uint32(0); slot < 2; slot++ {
				loads := 0
				e := evalCtx{slot: slot, id: c.ids[slot], hasID: true, load: func() (map[string]*qdrant.Value, error) {
					loads++
					return payloads[slot], nil
				}}
				got = append(got, n.eval(&e))
				if tc.indexed && loads > 0 {
					t.Fatal("an indexed condition read the payload")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzRecord: the on-disk record decoder never panics on any bytes.
func FuzzRecord(f *testing.F) {
	good, _ := encodeRecord(7, vecBytes([]float32{1, 2}), qdrant.NewValueMap(map[string]any{"a": 1, "b": []any{"x", 2.5}}))
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{recordFormat})
	f.Add(append([]byte{2}, good[1:]...))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := parseRecord(b, 2)
		if err != nil {
			return
		}
		v := make([]float32, 2)
		rec.vector(v)
		if _, err := decodePayload(rec.payload); err != nil {
			return
		}
		idFromKey(b)
	})
}

// A range tested on the flat numbers gives inRange's answer, open bounds,
// infinities and NaN included.
func TestBoundsMatchInRange(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	inf := math.Inf(1)
	ranges := map[string]*qdrant.Range{
		"gte":            {Gte: f(0.5)},
		"gt":             {Gt: f(0.5)},
		"lte lt":         {Lte: f(1), Lt: f(1)},
		"gt gte tighter": {Gt: f(0.2), Gte: f(0.5)},
		"gt above +inf":  {Gt: f(inf)},
		"lt below -inf":  {Lt: f(-inf)},
		"lte +inf":       {Lte: f(inf)},
		"nan bound":      {Gte: f(math.NaN())},
		"none":           {},
	}
	xs := []float64{-inf, -1, 0, math.Nextafter(0.5, 0), 0.5, math.Nextafter(0.5, 1), 1, inf, math.NaN()}
	for name, r := range ranges {
		b := boundsOf(r)
		for _, x := range xs {
			got := b.all || x >= b.lo && x <= b.hi
			if want := inRange(r, x); got != want {
				t.Errorf("%s: %v: got %v, want %v", name, x, got, want)
			}
		}
	}
}
