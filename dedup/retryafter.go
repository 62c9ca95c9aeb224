package dedup

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/memrank/memrank/embed"
)

// maxRetryAfter caps how long one Retry-After keeps the judge from calling:
// a provider's hour-long quota reset is honoured for ten minutes, then one
// call asks again (and learns the rest), so a wrong or hostile header
// cannot switch the judge off for long.
const maxRetryAfter = 10 * time.Minute

// providerPause is when the provider said, with Retry-After on a 429 or a
// 503, that it may be called again. It is shared by every call of one
// judge: once a provider sheds load, the observations that need a verdict
// meanwhile get their fallback (no merge) without calling it again, instead
// of each spending its attempts on certain refusals and adding to the
// provider's overload.
type providerPause struct {
	until atomic.Int64 // unix nanoseconds; zero or past: no pause
}

// extend moves the end of the pause to t, if that is later.
func (p *providerPause) extend(t time.Time) {
	n := t.UnixNano()
	for {
		old := p.until.Load()
		if old >= n || p.until.CompareAndSwap(old, n) {
			return
		}
	}
}

// remaining is how long the pause still lasts at now (zero when over).
func (p *providerPause) remaining(now time.Time) time.Duration {
	return max(time.Duration(p.until.Load()-now.UnixNano()), 0)
}

// observe records the pause a response asks for: Retry-After (or OpenAI's
// retry-after-ms) on a 429 or a 503, capped at maxRetryAfter. Any other
// response, or a header that says nothing readable, changes nothing.
func (p *providerPause) observe(resp *http.Response, now time.Time) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return
	}
	if d := embed.RetryAfter(resp.Header, now); d > 0 {
		p.extend(now.Add(min(d, maxRetryAfter)))
	}
}

// canWait says whether a pause of d ends while ctx still leaves time for
// the call: before ctx's deadline or, without one, within one attempt's
// timeout.
func (j *LLMJudge) canWait(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok {
		return d < time.Until(deadline)
	}
	return d <= j.timeout
}

// pausedError is the failure of a call the provider's Retry-After forbids
// for longer than the call can wait (canWait): it is not sent.
func pausedError(d time.Duration) *judgeError {
	return &judgeError{msg: fmt.Sprintf("dedup: llm judge: the provider asked (Retry-After) for no calls for another %v, longer than this call can wait",
		d.Round(time.Millisecond)), errType: "retry_after"}
}

// waitPause waits out the provider's pause before a call, or fails at once
// when the pause outlasts ctx.
func (j *LLMJudge) waitPause(ctx context.Context) error {
	d := j.pause.remaining(time.Now())
	if d <= 0 {
		return nil
	}
	if !j.canWait(ctx, d) {
		return pausedError(d)
	}
	if err := sleep(ctx, d); err != nil {
		return j.failure(err)
	}
	return nil
}

// pausedBackOff waits between attempts at least until the provider's pause
// ends.
type pausedBackOff struct {
	next  backoff.BackOff
	pause *providerPause
}

var _ backoff.BackOff = (*pausedBackOff)(nil)

func (b *pausedBackOff) NextBackOff() time.Duration {
	d := b.next.NextBackOff()
	if d == backoff.Stop {
		return d
	}
	return max(d, b.pause.remaining(time.Now()))
}

func (b *pausedBackOff) Reset() { b.next.Reset() }
