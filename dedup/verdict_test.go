package dedup

import (
	"fmt"
	"sync"
	"testing"
)

func TestVerdictNames(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		name string
	}{
		{VerdictUnknown, ""},
		{VerdictSame, "same"},
		{VerdictDifferent, "different"},
		{VerdictContradicts, "contradicts"},
		{Verdict(42), ""},
	} {
		t.Run(fmt.Sprint(uint8(tc.v)), func(t *testing.T) {
			if got := tc.v.String(); got != tc.name {
				t.Errorf("String() = %q, want %q", got, tc.name)
			}
			v, ok := ParseVerdict(tc.name)
			if wantOK := tc.name != ""; ok != wantOK || (ok && v != tc.v) {
				t.Errorf("ParseVerdict(%q) = %v, %v", tc.name, v, ok)
			}
		})
	}
	for _, s := range []string{"Same", "SAME", " same", "same ", "none", "unknown", "contradict"} {
		if v, ok := ParseVerdict(s); ok || v != VerdictUnknown {
			t.Errorf("ParseVerdict(%q) = %v, %v; want no verdict", s, v, ok)
		}
	}
}

func TestVerdictCache(t *testing.T) {
	c := NewVerdictCache(2)
	c.Put("a", "b", VerdictSame)
	for _, tc := range []struct {
		name   string
		a, b   string
		want   Verdict
		wantOK bool
	}{
		{"as put", "a", "b", VerdictSame, true},
		{"reversed", "b", "a", VerdictSame, true},
		{"other pair", "a", "c", VerdictUnknown, false},
		{"empty hash", "", "b", VerdictUnknown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, ok := c.Get(tc.a, tc.b); v != tc.want || ok != tc.wantOK {
				t.Errorf("Get(%q, %q) = %v, %v; want %v, %v", tc.a, tc.b, v, ok, tc.want, tc.wantOK)
			}
		})
	}

	c.Put("b", "a", VerdictContradicts) // one key: replaces
	if v, _ := c.Get("a", "b"); v != VerdictContradicts || c.Len() != 1 {
		t.Errorf("after re-put in reverse: %v, len %d; want contradicts, 1", v, c.Len())
	}
	c.Put("a", "c", VerdictUnknown)
	c.Put("a", "c", Verdict(9))
	c.Put("", "c", VerdictSame)
	if c.Len() != 1 {
		t.Errorf("len %d after putting non-verdicts and empty hashes, want 1", c.Len())
	}
	c.Put("x", "y", VerdictDifferent)
	c.Put("y", "z", VerdictDifferent) // evicts (a, b), the least recently used
	if _, ok := c.Get("a", "b"); ok || c.Len() != 2 {
		t.Errorf("len %d, (a, b) present %v; want 2 and evicted", c.Len(), ok)
	}
}

func TestVerdictCacheHoldsNothing(t *testing.T) {
	for name, c := range map[string]*VerdictCache{"nil": nil, "size 0": NewVerdictCache(0), "size -1": NewVerdictCache(-1)} {
		t.Run(name, func(t *testing.T) {
			c.Put("a", "b", VerdictSame)
			if v, ok := c.Get("a", "b"); ok || c.Len() != 0 {
				t.Errorf("Get = %v, %v, len %d; want nothing held", v, ok, c.Len())
			}
		})
	}
}

func TestVerdictCacheConcurrent(t *testing.T) {
	c := NewVerdictCache(64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				a, b := fmt.Sprint(i%100), fmt.Sprint(g)
				c.Put(a, b, VerdictDifferent)
				if v, ok := c.Get(b, a); ok && v != VerdictDifferent {
					t.Errorf("Get = %v", v)
				}
			}
		})
	}
	wg.Wait()
	if n := c.Len(); n > 64 {
		t.Errorf("len %d above the bound 64", n)
	}
}

func BenchmarkVerdictCacheGet(b *testing.B) {
	c := NewVerdictCache(10000)
	hashes := make([]string, 1000)
	for i := range hashes {
		hashes[i] = fmt.Sprintf("%032x", i*7919)
	}
	for i := 1; i < len(hashes); i++ {
		c.Put(hashes[i-1], hashes[i], VerdictSame)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = (i + 1) % (len(hashes) - 1)
		if _, ok := c.Get(hashes[i+1], hashes[i]); !ok {
			b.Fatal("miss")
		}
	}
}
