package candcache

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func entry(text string, dim int) *Entry {
	v := make([]float32, dim)
	return &Entry{
		Payload: map[string]*qdrant.Value{"text": qdrant.NewValueString(text)},
		Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: v}}}}},
		Dense:   v,
	}
}

func key(id uint64, version uint64) Key {
	return Key{Collection: "mem", ID: PointKey{Num: id}, Version: version}
}

func TestGetKeys(t *testing.T) {
	tests := []struct {
		name string
		add  Key
		get  Key
		ok   bool
	}{
		{name: "same key", add: key(1, 3), get: key(1, 3), ok: true},
		{name: "other version", add: key(1, 3), get: key(1, 4)},
		{name: "other id", add: key(1, 3), get: key(2, 3)},
		{name: "uuid is not num", add: Key{Collection: "mem", ID: PointKey{UUID: "1"}}, get: Key{Collection: "mem", ID: PointKey{Num: 1}}},
		{name: "other collection", add: key(1, 3), get: Key{Collection: "alias", ID: PointKey{Num: 1}, Version: 3}},
		{name: "other vector", add: key(1, 3), get: Key{Collection: "mem", Vector: "v", ID: PointKey{Num: 1}, Version: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{MaxBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			e := entry("a", 4)
			c.Add(tc.add, e)
			got, ok := c.Get(tc.get)
			if ok != tc.ok || (ok && got != e) {
				t.Errorf("Get = %v, %v; want ok %v", got, ok, tc.ok)
			}
		})
	}
}

func TestEpochAndRemove(t *testing.T) {
	c, err := New(Config{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	k := key(1, 1)
	k.Epoch = c.Epoch()
	c.Add(k, entry("a", 4))
	c.Invalidate()
	k2 := k
	k2.Epoch = c.Epoch()
	if _, ok := c.Get(k2); ok {
		t.Error("an entry of the previous epoch was found under the new one")
	}
	if _, ok := c.Get(k); !ok {
		t.Fatal("the old epoch's key no longer finds its entry (it should only be unreachable to new requests)")
	}
	c.Remove(k)
	if _, ok := c.Get(k); ok || c.Bytes() != 0 {
		t.Errorf("after Remove: found %v, bytes %d", ok, c.Bytes())
	}
}

func TestTTL(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := New(Config{MaxBytes: 1 << 20, TTL: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	c.Add(key(1, 1), entry("a", 4))
	now = now.Add(59 * time.Second)
	if _, ok := c.Get(key(1, 1)); !ok {
		t.Fatal("expired before its TTL")
	}
	now = now.Add(time.Second)
	if _, ok := c.Get(key(1, 1)); ok {
		t.Fatal("served at its TTL")
	}
	if c.Bytes() != 0 {
		t.Errorf("bytes %d after the expired entry was dropped", c.Bytes())
	}
}

// TestBound: however many entries are added, the bytes held never exceed
// the bound, evictions are counted, and the most recently used survive.
func TestBound(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	const bound = 64 << 10
	c, err := New(Config{MaxBytes: bound, Meter: mp.Meter("test")})
	if err != nil {
		t.Fatal(err)
	}
	one := entry("x", 96).Size(&Key{Collection: "mem"})
	evicted := 0
	for i := range 2000 {
		evicted += c.Add(key(uint64(i), 1), entry("memory "+strconv.Itoa(i), 96))
		if b := c.Bytes(); b > bound {
			t.Fatalf("after %d adds: %d bytes held, bound %d", i+1, b, bound)
		}
	}
	if evicted == 0 {
		t.Fatal("no evictions past the bound")
	}
	if held := c.Bytes(); held < bound/2 {
		t.Errorf("only %d of %d bytes held (entries of %d bytes)", held, bound, one)
	}
	if _, ok := c.Get(key(1999, 1)); !ok {
		t.Error("the last entry added was evicted")
	}
	if _, ok := c.Get(key(0, 1)); ok {
		t.Error("the first entry added survived 2000 adds")
	}
	c.Count(context.Background(), Round{Hits: 3, Absent: 2, Mismatched: 1, Evicted: evicted})
	c.CountOff(context.Background())
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					name := m.Name
					if r, ok := dp.Attributes.Value("reason"); ok {
						name += " " + r.AsString()
					}
					got[name] = dp.Value
				}
			case metricdata.Gauge[int64]:
				got[m.Name] = d.DataPoints[0].Value
			}
		}
	}
	want := map[string]int64{
		"memrank.rank.candidate_cache.hits":                  3,
		"memrank.rank.candidate_cache.misses absent":         2,
		"memrank.rank.candidate_cache.misses score_mismatch": 1,
		"memrank.rank.candidate_cache.evictions":             int64(evicted),
		"memrank.rank.candidate_cache.off":                   1,
		"memrank.rank.candidate_cache.bytes":                 c.Bytes(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestOff(t *testing.T) {
	for _, max := range []int64{0, -1} {
		c, err := New(Config{MaxBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		c.Add(key(1, 1), entry("a", 4))
		if _, ok := c.Get(key(1, 1)); ok || c.Bytes() != 0 {
			t.Errorf("MaxBytes %d: the cache held an entry", max)
		}
	}
}

// TestUnsettle: after an unsettled change the cache is off for every
// collection for the TTL (a minute without one), in a new epoch; a second
// one extends the window.
func TestUnsettle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ttl    time.Duration
		window time.Duration
	}{
		{name: "the TTL", ttl: 2 * time.Minute, window: 2 * time.Minute},
		{name: "no expiry: a minute", window: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			c, err := New(Config{MaxBytes: 1 << 20, TTL: tc.ttl, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			k := key(1, 1)
			k.Epoch = c.Epoch()
			c.Add(k, entry("a", 4))
			if c.Off("a", "") {
				t.Fatal("off before any change")
			}
			if !c.Unsettle() {
				t.Error("the first change did not start a window")
			}
			if c.Epoch() == k.Epoch {
				t.Error("the epoch did not move")
			}
			if !c.Off("a", "") || !c.Off("b", "v") {
				t.Error("not off for every collection after an unsettled change")
			}
			now = now.Add(tc.window / 2)
			if c.Unsettle() { // a second change half-way through
				t.Error("a change within the window started another")
			}
			now = now.Add(tc.window/2 + time.Second)
			if !c.Off("a", "") {
				t.Error("the second change did not extend the window")
			}
			now = now.Add(tc.window / 2)
			if c.Off("a", "") {
				t.Error("still off after the window")
			}
		})
	}
}

// TestTrust: the cache turns itself off for a collection's vector once
// more than half of a window of the upstream's scores failed the check,
// for the TTL; other collections, and a collection where half or fewer
// failed, keep it.
func TestTrust(t *testing.T) {
	now := time.Unix(1000, 0)
	c, err := New(Config{MaxBytes: 1 << 20, TTL: 2 * time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	// Half of a window failing is not enough.
	for range trustWindow / 8 {
		if c.Checked("mixed", "", 8, 4) {
			t.Fatal("turned off at half of the checks failing")
		}
	}
	if c.Off("mixed", "") {
		t.Fatal("off at half of the checks failing")
	}
	var turned bool
	for i := 0; i < trustWindow/8 && !turned; i++ {
		if c.Off("quantized", "") {
			t.Fatalf("off after %d checks, before a window", i*8)
		}
		turned = c.Checked("quantized", "", 8, 7)
	}
	if !turned || !c.Off("quantized", "") {
		t.Fatal("not off after a window of failing checks")
	}
	if c.Off("quantized", "other") || c.Off("mixed", "") {
		t.Error("off for another collection or vector")
	}
	if c.Checked("quantized", "", 0, 0) {
		t.Error("a query without found entries decided something")
	}
	now = now.Add(2*time.Minute - time.Second)
	if !c.Off("quantized", "") {
		t.Error("back on before the TTL")
	}
	now = now.Add(time.Second)
	if c.Off("quantized", "") {
		t.Error("still off after the TTL")
	}
	// The tracking is bounded: past the bound it starts over.
	for i := range trustMaxCollections + 10 {
		c.Checked(strconv.Itoa(i), "", 1, 1)
	}
	if n := len(c.trust.m); n > trustMaxCollections {
		t.Errorf("%d collections tracked, bound %d", n, trustMaxCollections)
	}
}

// TestSizeCountsPayloadWire: an entry's payload bytes count toward the
// cache's bound.
func TestSizeCountsPayloadWire(t *testing.T) {
	k := &Key{Collection: "mem"}
	e := entry("x", 96)
	before := e.Size(k)
	e.PayloadWire = make([]byte, 1000)
	if got := e.Size(k) - before; got != 1000 {
		t.Errorf("1000 payload bytes add %d to the size", got)
	}
}
