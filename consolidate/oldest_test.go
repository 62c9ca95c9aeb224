package consolidate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oldest keeps what sorting everything and cutting would, in at most
// limit items, whatever the order the items come in.
func TestOldestKeepsTheFirstLimitInQueueOrder(t *testing.T) {
	tests := []struct {
		name         string
		n, limit     int
		distinctIdle int // idle days drawn from this many values: ties by id
	}{
		{"fewer than the limit", 5, 10, 100},
		{"exactly the limit", 10, 10, 100},
		{"many more", 500, 7, 1000},
		{"ties on idle days", 300, 20, 3},
		{"limit one", 50, 1, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
			all := make([]ReviewItem, tc.n)
			for i := range all {
				all[i] = ReviewItem{ID: fmt.Sprintf("m%04d", r.IntN(10*tc.n)), IdleDays: float64(r.IntN(tc.distinctIdle))}
			}
			o := &oldest{limit: tc.limit}
			for _, it := range all {
				o.offer(it)
				if len(o.items) > tc.limit {
					t.Fatalf("%d items kept, the limit is %d", len(o.items), tc.limit)
				}
			}
			want := slices.Clone(all)
			slices.SortStableFunc(want, queueOrder)
			want = want[:min(tc.limit, len(want))]
			if diff := cmp.Diff(want, o.sorted()); diff != "" {
				t.Errorf("kept (-sorted and cut +kept):\n%s", diff)
			}
		})
	}
	if got := (&oldest{limit: 3}).sorted(); got == nil || len(got) != 0 {
		t.Errorf("empty: %#v, want an empty list", got)
	}
}
