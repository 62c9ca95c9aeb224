package rank

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLRU: the bound evicts the least recently used entry, the TTL is read
// from the caller's clock, and a cache of size 0 holds nothing.
func TestLRU(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type op struct {
		add    bool
		remove bool
		key    string
		val    int
		at     time.Duration // since t0
	}
	type got struct {
		Val int
		OK  bool
	}
	tests := []struct {
		name    string
		max     int
		ttl     time.Duration
		ops     []op
		want    []got // one per get, in order
		wantLen int
	}{
		{
			name: "hit and miss",
			max:  2, ops: []op{{add: true, key: "a", val: 1}, {key: "a"}, {key: "b"}},
			want: []got{{1, true}, {0, false}}, wantLen: 1,
		},
		{
			name: "least recently used evicted",
			max:  2,
			ops: []op{
				{add: true, key: "a", val: 1}, {add: true, key: "b", val: 2},
				{key: "a"}, // a is now the most recent
				{add: true, key: "c", val: 3},
				{key: "a"}, {key: "b"}, {key: "c"},
			},
			want:    []got{{1, true}, {1, true}, {0, false}, {3, true}},
			wantLen: 2,
		},
		{
			name: "add replaces",
			max:  2, ops: []op{{add: true, key: "a", val: 1}, {add: true, key: "a", val: 2}, {key: "a"}},
			want: []got{{2, true}}, wantLen: 1,
		},
		{
			name: "expires at the TTL, by the caller's clock",
			max:  2, ttl: time.Minute,
			ops:  []op{{add: true, key: "a", val: 1}, {key: "a", at: time.Minute - 1}, {key: "a", at: time.Minute}, {key: "a"}},
			want: []got{{1, true}, {0, false}, {0, false}}, wantLen: 0,
		},
		{
			name: "add restarts the TTL",
			max:  2, ttl: time.Minute,
			ops:  []op{{add: true, key: "a", val: 1}, {add: true, key: "a", val: 2, at: 30 * time.Second}, {key: "a", at: 80 * time.Second}},
			want: []got{{2, true}}, wantLen: 1,
		},
		{
			name: "no TTL: never expires",
			max:  1, ops: []op{{add: true, key: "a", val: 1}, {key: "a", at: 1000 * time.Hour}},
			want: []got{{1, true}}, wantLen: 1,
		},
		{
			name: "remove",
			max:  2, ops: []op{{add: true, key: "a", val: 1}, {remove: true, key: "a"}, {remove: true, key: "b"}, {key: "a"}},
			want: []got{{0, false}}, wantLen: 0,
		},
		{
			name: "size 0 holds nothing",
			max:  0, ops: []op{{add: true, key: "a", val: 1}, {key: "a"}, {remove: true, key: "a"}},
			want: []got{{0, false}}, wantLen: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newLRU[string, int](tc.max, tc.ttl)
			var gets []got
			for _, o := range tc.ops {
				now := t0.Add(o.at)
				switch {
				case o.add:
					c.add(o.key, o.val, now)
				case o.remove:
					c.remove(o.key)
				default:
					v, ok := c.get(o.key, now)
					gets = append(gets, got{v, ok})
				}
			}
			if diff := cmp.Diff(tc.want, gets); diff != "" {
				t.Errorf("gets (-want +got):\n%s", diff)
			}
			if n := c.len(); n != tc.wantLen {
				t.Errorf("len %d, want %d", n, tc.wantLen)
			}
		})
	}
}

// BenchmarkLRU: a hit, as the read path takes one per query (collection
// info, detection).
func BenchmarkLRU(b *testing.B) {
	c := newLRU[string, int](1024, time.Minute)
	now := time.Now()
	c.add("mem", 1, now)
	for b.Loop() {
		if _, ok := c.get("mem", now); !ok {
			b.Fatal("miss")
		}
	}
}
