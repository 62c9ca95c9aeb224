package dedup

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestProviderPauseObserve(t *testing.T) {
	now := time.Now().Truncate(time.Second) // HTTP dates have whole seconds
	tests := []struct {
		name   string
		status int
		header string
		want   time.Duration
	}{
		{name: "429 seconds", status: 429, header: "20", want: 20 * time.Second},
		{name: "503 seconds", status: 503, header: "3", want: 3 * time.Second},
		{name: "capped", status: 429, header: "86400", want: maxRetryAfter},
		{name: "500 ignored", status: 500, header: "20"},
		{name: "400 ignored", status: 400, header: "20"},
		{name: "200 ignored", status: 200, header: "20"},
		{name: "unparsable", status: 429, header: "later"},
		{name: "HTTP date", status: 503, header: now.Add(90 * time.Second).UTC().Format(http.TimeFormat), want: 90 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p providerPause
			p.observe(&http.Response{StatusCode: tc.status, Header: http.Header{"Retry-After": {tc.header}}}, now)
			if got := p.remaining(now); got != tc.want {
				t.Errorf("pause %v, want %v", got, tc.want)
			}
		})
	}
	// A shorter Retry-After never shortens a longer pause already learned.
	var p providerPause
	for _, h := range []string{"60", "1"} {
		p.observe(&http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {h}}}, now)
	}
	if got := p.remaining(now); got != time.Minute {
		t.Errorf("pause %v after 60 s then 1 s, want 1m", got)
	}
}

func TestProviderPauseShouldLog(t *testing.T) {
	now := time.Now()
	var p providerPause
	steps := []struct {
		at   time.Duration // after now
		d    time.Duration
		want bool
	}{
		{0, 200 * time.Millisecond, false}, // sub-second: never
		{100 * time.Millisecond, 2 * time.Second, true},
		{time.Second, 5 * time.Second, false}, // the logged pause still lasts
		{3 * time.Second, 2 * time.Second, true},
	}
	for i, st := range steps {
		if got := p.shouldLog(st.d, now.Add(st.at)); got != st.want {
			t.Errorf("step %d: shouldLog(%v at +%v) = %v, want %v", i, st.d, st.at, got, st.want)
		}
	}
}

// TestLLMJudgeRetryAfter: the provider's Retry-After is waited out when the
// call's deadline allows, and otherwise ends the call at once; either way
// no attempt is sent before it ends, by this call or any other.
func TestLLMJudgeRetryAfter(t *testing.T) {
	good := chatCompletion(`{"verdict":"same","reason":"x"}`, "stop")
	busy := `{"error":{"message":"slow down","type":"rate_limit"}}`
	firstRefused := func(status int) func(int, *http.Request) (int, string) {
		return func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return status, busy
			}
			return http.StatusOK, good
		}
	}
	t.Run("waited out within the deadline", func(t *testing.T) {
		f := newFakeLLM(t, testPair, firstRefused(http.StatusTooManyRequests))
		f.retryAfter = func(n int) string { return map[int]string{1: "1"}[n] }
		j := f.judge(t, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := j.Judge(ctx, testPair[0], testPair[1]); err != nil {
			t.Fatalf("Judge: %v", err)
		}
		// The backoff alone is a millisecond: the second attempt waited for
		// the header's second.
		if took := time.Since(start); took < 900*time.Millisecond {
			t.Errorf("answered after %v, before the provider's Retry-After of 1s", took)
		}
		if n := f.calls.Load(); n != 2 {
			t.Errorf("%d calls, want 2", n)
		}
	})
	for _, tc := range []struct {
		name   string
		status int
		header func(time.Time) string
	}{
		{name: "429, seconds past the deadline", status: http.StatusTooManyRequests, header: func(time.Time) string { return "30" }},
		{name: "503, date past the deadline", status: http.StatusServiceUnavailable,
			header: func(now time.Time) string { return now.Add(time.Minute).UTC().Format(http.TimeFormat) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLLM(t, testPair, firstRefused(tc.status))
			now := time.Now()
			f.retryAfter = func(int) string { return tc.header(now) }
			j := f.judge(t, nil)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			start := time.Now()
			_, err := j.Judge(ctx, testPair[0], testPair[1])
			if err == nil || !strings.Contains(err.Error(), "Retry-After") {
				t.Fatalf("Judge error %v, want one naming the provider's Retry-After", err)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v reads as a timeout; the call gave up before its deadline", err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("failed after %v: it waited instead of giving up at once", took)
			}
			// The next call, even a fresh one, is not sent until the pause ends.
			ctx2, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel2()
			if _, err := j.Judge(ctx2, testPair[0], testPair[1]); err == nil || !strings.Contains(err.Error(), "Retry-After") {
				t.Errorf("second Judge error %v, want the pause's", err)
			}
			if n := f.calls.Load(); n != 1 {
				t.Errorf("%d calls reached the provider, want 1", n)
			}
		})
	}
	t.Run("no deadline waits at most one attempt's timeout", func(t *testing.T) {
		f := newFakeLLM(t, testPair, firstRefused(http.StatusTooManyRequests))
		f.retryAfter = func(int) string { return "30" }
		j := f.judge(t, nil) // Timeout 2s
		done := make(chan error, 1)
		go func() {
			_, err := j.Judge(context.Background(), testPair[0], testPair[1])
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "Retry-After") {
				t.Errorf("Judge error %v, want the pause's", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Judge without a deadline waited for a 30 s Retry-After")
		}
	})
	t.Run("a later call waits out the pause", func(t *testing.T) {
		f := newFakeLLM(t, testPair, firstRefused(http.StatusTooManyRequests))
		f.retryAfter = func(n int) string { return map[int]string{1: "1"}[n] }
		j := f.judge(t, func(c *LLMJudgeConfig) { c.MaxRetries = -1 })
		if _, err := j.Judge(t.Context(), testPair[0], testPair[1]); err == nil {
			t.Fatal("the refused call succeeded")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := j.Judge(ctx, testPair[0], testPair[1]); err != nil {
			t.Fatalf("Judge after the pause: %v", err)
		}
		if took := time.Since(start); took < 900*time.Millisecond {
			t.Errorf("the next call was sent after %v, inside the provider's 1s pause", took)
		}
	})
	t.Run("a pause that leaves too little of the deadline", func(t *testing.T) {
		f := newFakeLLM(t, testPair, firstRefused(http.StatusTooManyRequests))
		f.retryAfter = func(int) string { return "2" }
		j := f.judge(t, func(c *LLMJudgeConfig) { c.MaxRetries = -1 }) // Timeout 2s
		_, _ = j.Judge(t.Context(), testPair[0], testPair[1])
		// 2s of pause and half an attempt's timeout need 3s: 2.8s is short.
		ctx, cancel := context.WithTimeout(t.Context(), 2800*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := j.Judge(ctx, testPair[0], testPair[1]); !errors.Is(err, ErrProviderPaused) {
			t.Errorf("Judge error %v, want ErrProviderPaused", err)
		}
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("gave up after %v, want at once", took)
		}
		if n := f.calls.Load(); n != 1 {
			t.Errorf("%d calls, want 1", n)
		}
	})
	t.Run("a pause learnt during a failed attempt stops the retries", func(t *testing.T) {
		var j *LLMJudge
		f := newFakeLLM(t, testPair, func(int, *http.Request) (int, string) {
			j.pause.extend(time.Now().Add(time.Minute)) // another call's 429, say
			return http.StatusInternalServerError, `{"error":{"message":"boom","type":"server_error"}}`
		})
		j = f.judge(t, func(c *LLMJudgeConfig) { c.MaxRetries = 3 })
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := j.Judge(ctx, testPair[0], testPair[1])
		if err == nil || !strings.Contains(err.Error(), "not retried") || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Judge error %v, want the 500 and the pause that stopped the retries", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("failed after %v: it waited instead of stopping", took)
		}
		if n := f.calls.Load(); n != 1 {
			t.Errorf("%d calls, want 1", n)
		}
	})
	t.Run("ignored on other statuses", func(t *testing.T) {
		f := newFakeLLM(t, testPair, firstRefused(http.StatusInternalServerError))
		f.retryAfter = func(int) string { return "30" }
		j := f.judge(t, nil)
		if _, err := j.Judge(t.Context(), testPair[0], testPair[1]); err != nil {
			t.Fatalf("Judge: %v (a 500's Retry-After must not pause the judge)", err)
		}
	})
}

// TestJudgingRetryAfterFallback: while the provider's pause lasts, pairs in
// the judge band get the paused fallback (never a merge) without a call,
// and spend none of the collection's budget.
func TestJudgingRetryAfterFallback(t *testing.T) {
	f := newFakeLLM(t, testPair, func(int, *http.Request) (int, string) {
		return http.StatusTooManyRequests, `{"error":{"message":"slow down","type":"rate_limit"}}`
	})
	f.retryAfter = func(int) string { return "60" }
	jg, err := NewJudging(JudgingConfig{Judge: f.judge(t, nil), Timeout: 3 * time.Second, CallsPerMinute: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{FallbackError, FallbackPaused, FallbackPaused} {
		r := jg.call(t.Context(), "c", PairText{Hash: "a", Text: testPair[0]}, PairText{Hash: "b", Text: testPair[1]})
		if r.fallback != want || r.verdict.valid() {
			t.Errorf("call %d: %+v, want fallback %q", i, r, want)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d calls reached the provider, want 1", n)
	}
	if st := jg.Stats(); st.Calls != 1 {
		t.Errorf("Stats().Calls = %d, want 1 (unsent calls are not calls)", st.Calls)
	}
}

// TestWaitPauseExtended: a pause extended while a call waits is waited out
// too, but never past the call's limit, however often it is extended.
func TestWaitPauseExtended(t *testing.T) {
	f := newFakeLLM(t, testPair, func(int, *http.Request) (int, string) { return http.StatusOK, "" })
	j := f.judge(t, nil) // Timeout 2s
	t.Run("extended once, within the deadline", func(t *testing.T) {
		j.pause.extend(time.Now().Add(300 * time.Millisecond))
		time.AfterFunc(150*time.Millisecond, func() { j.pause.extend(time.Now().Add(300 * time.Millisecond)) })
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := j.waitPause(ctx); err != nil {
			t.Fatalf("waitPause: %v", err)
		}
		if took := time.Since(start); took < 420*time.Millisecond {
			t.Errorf("waited %v: the extension (to 450ms) was not waited out", took)
		}
	})
	t.Run("extended forever, no deadline", func(t *testing.T) {
		stop := make(chan struct{})
		done := make(chan struct{})
		j.pause.extend(time.Now().Add(400 * time.Millisecond))
		go func() {
			defer close(done)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				j.pause.extend(time.Now().Add(400 * time.Millisecond))
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		defer func() { close(stop); <-done }()
		start := time.Now()
		err := j.waitPause(context.Background())
		if !errors.Is(err, ErrProviderPaused) {
			t.Errorf("waitPause = %v, want ErrProviderPaused", err)
		}
		if took := time.Since(start); took > 2500*time.Millisecond {
			t.Errorf("waited %v without a deadline, past one attempt's timeout", took)
		}
	})
}

// pausedStub is a judge that is not pausable and reports ErrProviderPaused
// for its first call, as an LLMJudge does when a pause begins between
// Paused and the call.
type pausedStub struct{ n int }

func (s *pausedStub) Judge(context.Context, string, string) (Judgement, error) {
	s.n++
	if s.n == 1 {
		return Judgement{}, pausedError(time.Minute)
	}
	return Judgement{Verdict: VerdictSame, Reason: "x"}, nil
}

// TestJudgingPausedUnsent: a call the judge reports unsent is no call.
func TestJudgingPausedUnsent(t *testing.T) {
	jg, err := NewJudging(JudgingConfig{Judge: &pausedStub{}})
	if err != nil {
		t.Fatal(err)
	}
	r := jg.call(t.Context(), "c", PairText{Hash: "a", Text: "x"}, PairText{Hash: "b", Text: "y"})
	if r.fallback != FallbackPaused {
		t.Errorf("first call: %+v, want the paused fallback", r)
	}
	r = jg.call(t.Context(), "c", PairText{Hash: "a", Text: "x"}, PairText{Hash: "b", Text: "y"})
	if r.fallback != "" || r.verdict != VerdictSame {
		t.Errorf("second call: %+v, want a verdict", r)
	}
	if st := jg.Stats(); st.Calls != 1 {
		t.Errorf("Stats().Calls = %d, want 1 (the unsent call is no call)", st.Calls)
	}
}

// TestJudgeDoerLogsPause: a pause is logged once when it begins, and not
// at all when it is shorter than a second.
func TestJudgeDoerLogsPause(t *testing.T) {
	var header atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := header.Load().([2]string)
		w.Header().Set(h[0], h[1])
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var logs strings.Builder
	var mu sync.Mutex
	d := &judgeDoer{next: srv.Client(), pause: &providerPause{},
		log: slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))}
	send := func() {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, nil)
		resp, err := d.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	header.Store([2]string{"Retry-After-Ms", "200"})
	send()
	header.Store([2]string{"Retry-After", "2"})
	send()
	send()
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "asked for a pause"); n != 1 {
		t.Errorf("%d pause lines, want 1 (the 2s pause, once):\n%s", n, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestLLMJudgePausedNoSpan: a call the pause keeps unsent opens no client
// span.
func TestLLMJudgePausedNoSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f := newFakeLLM(t, testPair, func(int, *http.Request) (int, string) {
		return http.StatusTooManyRequests, `{"error":{"message":"slow down","type":"rate_limit"}}`
	})
	f.retryAfter = func(int) string { return "30" }
	j := f.judge(t, func(c *LLMJudgeConfig) { c.Telemetry.TracerProvider = tp; c.MaxRetries = -1 })
	_, _ = j.Judge(t.Context(), testPair[0], testPair[1])
	if _, err := j.Judge(t.Context(), testPair[0], testPair[1]); !errors.Is(err, ErrProviderPaused) {
		t.Fatalf("second Judge: %v, want ErrProviderPaused", err)
	}
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans, want 1 (the sent call's)", n)
	}
}
