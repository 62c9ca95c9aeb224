package embed

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff is the wait after the given number of failed attempts (1 or
// more): exponential from RetryBaseDelay with "equal jitter" (half fixed,
// half random, so retries of many writers spread out but never come back
// at once), at least the server's Retry-After, at most RetryMaxDelay.
func (o *OpenAI) backoff(attempts int, retryAfter time.Duration) time.Duration {
	d := o.cfg.RetryBaseDelay
	for i := 1; i < attempts && d < o.cfg.RetryMaxDelay; i++ {
		d *= 2
	}
	d = min(d, o.cfg.RetryMaxDelay)
	if half := d / 2; half > 0 {
		d = half + rand.N(half+1)
	}
	return min(max(d, retryAfter), o.cfg.RetryMaxDelay)
}

// retryAfter reads how long the server asked us to wait: OpenAI's
// "retry-after-ms", else the standard Retry-After in seconds or as an HTTP
// date. Absent, unreadable or past values give 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
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

// maxRetryAfter bounds what retryAfter reports; RetryMaxDelay caps the
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

// sleep waits d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
