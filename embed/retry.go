package embed

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// retryWaits is the wait before each retry, for backoff.Retry: the
// library's exponential backoff from RetryBaseDelay, doubling, with its
// jitter (so the retries of many writers spread out), then at least the
// server's Retry-After and at most RetryMaxDelay. When the caller's deadline
// would pass before the wait ends it says backoff.Stop: the server's answer
// says more than a deadline error would.
type retryWaits struct {
	exp        backoff.ExponentialBackOff
	max        time.Duration
	deadline   time.Time     // zero: none
	retryAfter time.Duration // the last answer's Retry-After, 0 when absent
}

func (o *OpenAI) retryWaits(ctx context.Context) *retryWaits {
	w := &retryWaits{
		exp: backoff.ExponentialBackOff{
			InitialInterval:     o.cfg.RetryBaseDelay,
			RandomizationFactor: 0.5,
			Multiplier:          2,
			MaxInterval:         o.cfg.RetryMaxDelay,
		},
		max: o.cfg.RetryMaxDelay,
	}
	w.deadline, _ = ctx.Deadline()
	return w
}

func (w *retryWaits) Reset() { w.exp.Reset() }

func (w *retryWaits) NextBackOff() time.Duration {
	// The library's MaxInterval caps the interval before jitter, not the
	// wait: hence the second min.
	d := min(max(w.exp.NextBackOff(), w.retryAfter), w.max)
	if !w.deadline.IsZero() && time.Until(w.deadline) < d {
		return backoff.Stop
	}
	return d
}

// RetryAfter reads how long an OpenAI-compatible server asked its clients
// to wait: OpenAI's "retry-after-ms", else the standard Retry-After in
// seconds or as an HTTP date. Absent, unreadable or past values give 0;
// none gives more than a day. The LLM judge reads it too.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return durationOf(ms, time.Millisecond)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return durationOf(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// maxRetryAfter bounds what RetryAfter reports; RetryMaxDelay caps the
// actual wait far below it.
const maxRetryAfter = 24 * time.Hour

// durationOf converts n units to a Duration without overflow: negative and
// NaN give 0, anything past maxRetryAfter gives maxRetryAfter.
func durationOf(n float64, unit time.Duration) time.Duration {
	if !(n > 0) {
		return 0
	}
	if n >= float64(maxRetryAfter/unit) || math.IsInf(n, 0) {
		return maxRetryAfter
	}
	return time.Duration(n * float64(unit))
}
