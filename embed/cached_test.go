package embed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeInner is an Embedder that records its calls and answers with Local's
// vectors. Its knobs are set before it is shared.
type fakeInner struct {
	local *Local
	// gate, when set, holds every call until it is closed or the call's
	// context is done (then the call fails with the context's error).
	gate chan struct{}
	// failFirst fails that many calls first.
	failFirst int
	// answer replaces the vectors when set (to return wrong ones).
	answer func(texts []string) [][]float32

	mu        sync.Mutex
	calls     [][]string
	deadlines []time.Duration // each call's time left, -1 without deadline
	ctxErrs   []error         // each call's ctx.Err() when it finished
}

var _ Embedder = (*fakeInner)(nil)

func newFakeInner(t testing.TB) *fakeInner { return &fakeInner{local: mustLocal(t, 16)} }

func (f *fakeInner) Dimensions() int { return f.local.Dimensions() }
func (f *fakeInner) Model() string   { return "fake:16" }

func (f *fakeInner) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, append([]string(nil), texts...))
	n := len(f.calls)
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	f.deadlines = append(f.deadlines, left)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.ctxErrs = append(f.ctxErrs, ctx.Err())
		f.mu.Unlock()
	}()

	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if n <= f.failFirst {
		return nil, fmt.Errorf("fake: call %d fails", n)
	}
	if f.answer != nil {
		return f.answer(texts), nil
	}
	return f.local.Embed(ctx, texts)
}

func (f *fakeInner) callList() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.calls...)
}

func TestCachedEmbedsEachTextOnce(t *testing.T) {
	inner := newFakeInner(t)
	c := NewCached(inner, 100)
	steps := []struct {
		texts     []string
		wantCall  []string // the inner call it makes; nil: none
		wantStats CacheStats
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, CacheStats{Misses: 2}},
		{[]string{"b", "c", "c", "a"}, []string{"c"}, CacheStats{Hits: 2, Misses: 4}},
		{[]string{"a"}, nil, CacheStats{Hits: 3, Misses: 4}},
		{[]string{"d", "d", "d"}, []string{"d"}, CacheStats{Hits: 3, Misses: 7}},
		{nil, nil, CacheStats{Hits: 3, Misses: 7}},
	}
	var wantCalls [][]string
	for i, st := range steps {
		got, err := c.Embed(t.Context(), st.texts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(embedAll(t, inner.local, st.texts...), got); diff != "" {
			t.Errorf("step %d: vectors (-want +got):\n%s", i, diff)
		}
		if st.wantCall != nil {
			wantCalls = append(wantCalls, st.wantCall)
		}
		if diff := cmp.Diff(wantCalls, inner.callList()); diff != "" {
			t.Errorf("step %d: inner calls (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(st.wantStats, c.Stats()); diff != "" {
			t.Errorf("step %d: stats (-want +got):\n%s", i, diff)
		}
	}
	if c.Len() != 4 || c.Model() != "fake:16" || c.Dimensions() != 16 {
		t.Errorf("Len %d, Model %q, Dimensions %d", c.Len(), c.Model(), c.Dimensions())
	}
}

func TestCachedEvictsLeastRecentlyUsed(t *testing.T) {
	inner := newFakeInner(t)
	c := NewCached(inner, 2)
	for _, texts := range [][]string{{"a"}, {"b"}, {"a"}, {"c"}, {"a"}, {"b"}} {
		if _, err := c.Embed(t.Context(), texts); err != nil {
			t.Fatal(err)
		}
	}
	// "a" stays (used again before "c" came); "b" was evicted by "c".
	want := [][]string{{"a"}, {"b"}, {"c"}, {"b"}}
	if diff := cmp.Diff(want, inner.callList()); diff != "" {
		t.Errorf("inner calls (-want +got):\n%s", diff)
	}
}

func TestCachedWithoutCacheStillEmbeds(t *testing.T) {
	for _, size := range []int{0, -1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			inner := newFakeInner(t)
			c := NewCached(inner, size)
			for range 2 {
				got, err := c.Embed(t.Context(), []string{"a", "b", "a"})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(embedAll(t, inner.local, "a", "b", "a"), got); diff != "" {
					t.Errorf("vectors (-want +got):\n%s", diff)
				}
			}
			if n := len(inner.callList()); n != 2 {
				t.Errorf("%d inner calls, want 2: nothing is cached", n)
			}
			if c.Len() != 0 || c.Stats().Hits != 0 {
				t.Errorf("Len %d, stats %+v", c.Len(), c.Stats())
			}
		})
	}
}

// Concurrent callers missing the same text share one inner call, with a
// cache and without one.
func TestCachedCoalescesConcurrentCallers(t *testing.T) {
	for _, size := range []int{0, 100} {
		t.Run(fmt.Sprintf("size %d", size), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := newFakeInner(t)
				inner.gate = make(chan struct{})
				c := NewCached(inner, size)
				const callers = 8
				results := make([][][]float32, callers)
				errs := make([]error, callers)
				var wg sync.WaitGroup
				for g := range callers {
					wg.Go(func() { results[g], errs[g] = c.Embed(context.Background(), []string{"Dana uses Neovim"}) })
				}
				synctest.Wait() // all 8 are waiting: one in the inner call, 7 on it
				if n := len(inner.callList()); n != 1 {
					t.Fatalf("%d inner calls in flight, want 1", n)
				}
				close(inner.gate)
				wg.Wait()
				want := embedAll(t, inner.local, "Dana uses Neovim")
				for g := range callers {
					if errs[g] != nil {
						t.Fatalf("caller %d: %v", g, errs[g])
					}
					if diff := cmp.Diff(want, results[g]); diff != "" {
						t.Errorf("caller %d (-want +got):\n%s", g, diff)
					}
				}
				if n := len(inner.callList()); n != 1 {
					t.Errorf("%d inner calls, want 1", n)
				}
				if diff := cmp.Diff(CacheStats{Misses: callers, Coalesced: callers - 1}, c.Stats()); diff != "" {
					t.Errorf("stats (-want +got):\n%s", diff)
				}
				// The callers' vectors are theirs, not one shared slice.
				results[0][0][0] = 42
				if results[1][0][0] == 42 {
					t.Error("two callers got the same slice")
				}
			})
		})
	}
}

// One set of missing texts in two orders is one piece of work.
func TestCachedCoalescesSetsInAnyOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newFakeInner(t)
		inner.gate = make(chan struct{})
		c := NewCached(inner, 0)
		var wg sync.WaitGroup
		var got [2][][]float32
		wg.Go(func() { got[0], _ = c.Embed(context.Background(), []string{"x", "y"}) })
		wg.Go(func() { got[1], _ = c.Embed(context.Background(), []string{"y", "x", "y"}) })
		synctest.Wait()
		close(inner.gate)
		wg.Wait()
		if n := len(inner.callList()); n != 1 {
			t.Errorf("%d inner calls, want 1", n)
		}
		if diff := cmp.Diff(embedAll(t, inner.local, "y", "x", "y"), got[1]); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// A waiting caller that gives up returns at once; the others still get the
// vector, and the cache keeps it.
func TestCachedCallerCancels(t *testing.T) {
	for _, who := range []string{"the caller that started the work", "a caller that joined it"} {
		t.Run(who, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := newFakeInner(t)
				inner.gate = make(chan struct{})
				c := NewCached(inner, 10)
				first, cancelFirst := context.WithCancel(context.Background())
				second, cancelSecond := context.WithCancel(context.Background())
				defer cancelSecond()
				var wg sync.WaitGroup
				var errFirst, errSecond error
				var gotSecond [][]float32
				wg.Go(func() { _, errFirst = c.Embed(first, []string{"t"}) })
				synctest.Wait() // the first caller leads the work
				wg.Go(func() { gotSecond, errSecond = c.Embed(second, []string{"t"}) })
				synctest.Wait()

				stay := &errSecond
				if who == "the caller that started the work" {
					cancelFirst()
				} else {
					cancelSecond()
					stay = &errFirst
				}
				synctest.Wait() // the one who gave up has returned; the work goes on
				if who == "the caller that started the work" && !errors.Is(errFirst, context.Canceled) {
					t.Errorf("cancelled caller: %v, want Canceled", errFirst)
				}
				close(inner.gate)
				wg.Wait()
				cancelFirst()
				if *stay != nil {
					t.Fatalf("the caller that stayed: %v", *stay)
				}
				if who == "a caller that joined it" && !errors.Is(errSecond, context.Canceled) {
					t.Errorf("cancelled caller: %v, want Canceled", errSecond)
				}
				if who == "the caller that started the work" && len(gotSecond) != 1 {
					t.Errorf("the joined caller got %d vectors", len(gotSecond))
				}
				inner.mu.Lock()
				if diff := cmp.Diff([]error{nil}, inner.ctxErrs, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
					t.Errorf("the inner call's context was cancelled (-want +got):\n%s", diff)
				}
				inner.mu.Unlock()
				if _, err := c.Embed(context.Background(), []string{"t"}); err != nil {
					t.Fatal(err)
				}
				if n := len(inner.callList()); n != 1 {
					t.Errorf("%d inner calls, want 1: the result was cached although its starter left", n)
				}
			})
		})
	}
}

// The shared work runs within its starter's deadline, or a bounded time.
func TestCachedWorkDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newFakeInner(t)
		c := NewCached(inner, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if _, err := c.Embed(ctx, []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
		inner.mu.Lock()
		defer inner.mu.Unlock()
		if diff := cmp.Diff([]time.Duration{3 * time.Second, flightTimeout}, inner.deadlines); diff != "" {
			t.Errorf("time left in the inner calls (-want +got):\n%s", diff)
		}
	})
}

// A caller that joined work whose starter's deadline ran out tries again
// under its own deadline instead of failing with someone else's.
func TestCachedJoinerOutlivesStarterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newFakeInner(t)
		inner.gate = make(chan struct{}) // never opened: calls end at their deadline
		c := NewCached(inner, 10)
		short, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		long, cancelLong := context.WithTimeout(context.Background(), time.Minute)
		defer cancelLong()
		var wg sync.WaitGroup
		var errShort, errLong error
		wg.Go(func() { _, errShort = c.Embed(short, []string{"t"}) })
		synctest.Wait()
		wg.Go(func() { _, errLong = c.Embed(long, []string{"t"}) })
		wg.Wait()
		if !errors.Is(errShort, context.DeadlineExceeded) || !errors.Is(errLong, context.DeadlineExceeded) {
			t.Fatalf("errors %v and %v, want DeadlineExceeded", errShort, errLong)
		}
		inner.mu.Lock()
		defer inner.mu.Unlock()
		if diff := cmp.Diff([]time.Duration{time.Second, 59 * time.Second}, inner.deadlines); diff != "" {
			t.Errorf("time left in the inner calls (-want +got):\n%s", diff)
		}
	})
}

func TestCachedDoesNotCacheErrors(t *testing.T) {
	inner := newFakeInner(t)
	inner.failFirst = 1
	c := NewCached(inner, 10)
	if _, err := c.Embed(t.Context(), []string{"a"}); err == nil {
		t.Fatal("the inner error was lost")
	}
	if c.Len() != 0 {
		t.Errorf("Len %d after an error", c.Len())
	}
	got, err := c.Embed(t.Context(), []string{"a"})
	if err != nil {
		t.Fatalf("the second call failed with the first's error: %v", err)
	}
	if diff := cmp.Diff(embedAll(t, inner.local, "a"), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := len(inner.callList()); n != 2 {
		t.Errorf("%d inner calls, want 2", n)
	}
}

func TestCachedReturnsCopies(t *testing.T) {
	inner := newFakeInner(t)
	c := NewCached(inner, 10)
	want := embedAll(t, inner.local, "a", "b")
	first, err := c.Embed(t.Context(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	first[0][0] = 99
	_ = append(first[0], 7) // must not spill into the next vector
	if first[1][0] != want[1][0] {
		t.Error("appending to one vector changed the next")
	}
	for range 2 { // a miss's copy and a hit's copy
		again, err := c.Embed(t.Context(), []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("changing a returned vector changed the cache (-want +got):\n%s", diff)
		}
		again[1][3] = -5
	}
}

func TestCachedRefusesBadInnerAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer func(texts []string) [][]float32
		want   error
	}{
		{"too few vectors", func([]string) [][]float32 { return [][]float32{make([]float32, 16)} }, ErrResponse},
		{"wrong length", func(texts []string) [][]float32 {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = make([]float32, 15)
			}
			return out
		}, ErrDimensions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := newFakeInner(t)
			inner.answer = tt.answer
			c := NewCached(inner, 10)
			got, err := c.Embed(t.Context(), []string{"a", "b"})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Embed = %v, %v; want %v", got, err, tt.want)
			}
			if c.Len() != 0 {
				t.Errorf("a bad answer was cached")
			}
		})
	}
}

func TestCachedCancelledBeforeStart(t *testing.T) {
	inner := newFakeInner(t)
	c := NewCached(inner, 10)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want Canceled", err)
	}
	if n := len(inner.callList()); n != 0 {
		t.Errorf("%d inner calls", n)
	}
}

// The cache in front of the real driver: a repeated text makes no request.
func TestCachedOverOpenAI(t *testing.T) {
	f := newFakeOpenAI(t, 0, nil)
	c := NewCached(newTestOpenAI(t, f, nil), 100)
	if c.Model() != "test-embed:32" {
		t.Errorf("Model %q", c.Model())
	}
	for range 3 {
		got, err := c.Embed(t.Context(), []string{"Dana uses Neovim", "Dana lives in Lisbon"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(embedAll(t, f.local, "Dana uses Neovim", "Dana lives in Lisbon"), got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	if _, err := c.Embed(t.Context(), []string{"Dana lives in Lisbon", "new text"}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"Dana lives in Lisbon", "Dana uses Neovim"}, {"new text"}}
	if diff := cmp.Diff(want, f.calls()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestFlightKeyIsUnambiguous(t *testing.T) {
	sets := [][]string{{"ab"}, {"a", "b"}, {"1:a"}, {"1:a", ""}, {"", "1:a"}, {"a:b"}, {}, {""}}
	seen := map[string]int{}
	for i, s := range sets {
		k := flightKey(s)
		if j, ok := seen[k]; ok {
			t.Errorf("sets %q and %q share the key %q", sets[j], s, k)
		}
		seen[k] = i
	}
}

func BenchmarkCachedHit(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("%d texts", n), func(b *testing.B) {
			c := NewCached(mustLocal(b, 384), 1000)
			in := make([]string, n)
			for i := range in {
				in[i] = fmt.Sprintf("Dana switched from VS Code to Neovim in March (%d)", i)
			}
			ctx := context.Background()
			if _, err := c.Embed(ctx, in); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Embed(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCachedShutdown: Shutdown ends a shared call that outlived the caller
// who started it, waits for it, and later misses fail with ErrClosed while
// cached texts are still answered.
func TestCachedShutdown(t *testing.T) {
	inner := newFakeInner(t)
	c := NewCached(inner, 100)
	if _, err := c.Embed(context.Background(), []string{"kept"}); err != nil {
		t.Fatal(err)
	}
	inner.gate = make(chan struct{}) // never opened: only Shutdown ends the call
	caller, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Embed(caller, []string{"held"})
		errc <- err
	}()
	for range 2000 {
		if len(inner.callList()) == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel() // the caller gives up; the shared call goes on
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("caller: %v, want Canceled", err)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	inner.mu.Lock()
	ended := len(inner.ctxErrs)
	inner.mu.Unlock()
	if ended != 2 {
		t.Errorf("%d inner calls returned by Shutdown's end, want 2", ended)
	}
	if _, err := c.Embed(context.Background(), []string{"new"}); !errors.Is(err, ErrClosed) {
		t.Errorf("a miss after Shutdown: %v, want ErrClosed", err)
	}
	if _, err := c.Embed(context.Background(), []string{"kept"}); err != nil {
		t.Errorf("a cached text after Shutdown: %v", err)
	}
}
