package grpcfront

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEach: a batch's sub-requests run at most BatchConcurrency at once,
// all of them when none fails, and the first failure (or the caller going
// away) fails the batch and stops what has not started.
func TestEach(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		n, limit  int
		fail      int  // the index that fails; -1: none
		cancelled bool // the caller's context is done before the batch
		wantErr   error
		wantAll   bool // every index ran
	}{
		{name: "empty", n: 0, limit: 2, fail: -1},
		{name: "fewer than the limit", n: 3, limit: 4, fail: -1, wantAll: true},
		{name: "more than the limit", n: 20, limit: 3, fail: -1, wantAll: true},
		{name: "limit 1", n: 5, limit: 1, fail: -1, wantAll: true},
		{name: "first failure wins", n: 20, limit: 1, fail: 2, wantErr: errBoom},
		{name: "failure among many", n: 20, limit: 4, fail: 7, wantErr: errBoom},
		{name: "caller gone", n: 5, limit: 2, fail: -1, cancelled: true, wantErr: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			c := &call{f: &front{batch: tc.limit}, ctx: ctx}
			var (
				mu           sync.Mutex
				ran          = make([]bool, tc.n)
				running, top atomic.Int32
			)
			err := c.each(tc.n, func(ctx context.Context, i int) error {
				now := running.Add(1)
				defer running.Add(-1)
				for {
					old := top.Load()
					if now <= old || top.CompareAndSwap(old, now) {
						break
					}
				}
				mu.Lock()
				ran[i] = true
				mu.Unlock()
				if i == tc.fail {
					return errBoom
				}
				return ctx.Err()
			})
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("each: %v, want %v", err, tc.wantErr)
			}
			if got := int(top.Load()); got > tc.limit {
				t.Errorf("%d ran at once, limit %d", got, tc.limit)
			}
			if tc.wantAll {
				want := make([]bool, tc.n)
				for i := range want {
					want[i] = true
				}
				if diff := cmp.Diff(want, ran); diff != "" {
					t.Errorf("ran (-want +got):\n%s", diff)
				}
			}
			if tc.fail >= 0 && tc.limit == 1 {
				// One at a time, in order: nothing after the failure starts.
				for i := tc.fail + 1; i < tc.n; i++ {
					if ran[i] {
						t.Errorf("index %d ran after index %d failed", i, tc.fail)
					}
				}
			}
		})
	}
}
