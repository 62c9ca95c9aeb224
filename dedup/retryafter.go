package dedup

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// extend moves the end of the pause to t, if that is later, and reports
// whether a pause began (none was on at now).
func (p *providerPause) extend(t, now time.Time) bool {
	n := t.UnixNano()
	for {
		old := p.until.Load()
		if old >= n {
			return false
		}
		if p.until.CompareAndSwap(old, n) {
			return old <= now.UnixNano()
		}
	}
}

// remaining is how long the pause still lasts at now (zero when over).
func (p *providerPause) remaining(now time.Time) time.Duration {
	return max(time.Duration(p.until.Load()-now.UnixNano()), 0)
}

// observe records the pause a response asks for: Retry-After (or OpenAI's
// retry-after-ms) on a 429 or a 503, capped at maxRetryAfter. Any other
// response, or a header that says nothing readable, changes nothing. It
// returns the pause when one began.
func (p *providerPause) observe(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	d := min(embed.RetryAfter(resp.Header, now), maxRetryAfter)
	if d <= 0 {
		return 0, false
	}
	return d, p.extend(now.Add(d), now)
}

// ErrProviderPaused is wrapped by the error of a judge call that was never
// sent: the provider had asked (Retry-After) for no calls for longer than
// the call could wait.
var ErrProviderPaused = errors.New("dedup: the judge's provider asked for a pause (Retry-After)")

// canWait says whether a pause of d ends while ctx still leaves time for
// the call: before ctx's deadline with at least half an attempt's timeout
// to spare (a call that waits until its last moment only times out) or,
// without a deadline, within one attempt's timeout.
func (j *LLMJudge) canWait(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	if !ok {
		return d <= j.timeout
	}
	left := time.Until(deadline)
	return d+min(j.timeout, left)/2 <= left
}

// Paused reports whether the provider's pause outlasts what a call with
// ctx could wait: such a call would fail unsent. Judging asks before it
// spends a call of the collection's budget.
func (j *LLMJudge) Paused(ctx context.Context) bool {
	d := j.pause.remaining(time.Now())
	return d > 0 && !j.canWait(ctx, d)
}

func pausedError(d time.Duration) *judgeError {
	return &judgeError{msg: fmt.Sprintf("dedup: llm judge: not sent: the provider asked (Retry-After) for no calls for another %v, longer than this call can wait",
		d.Round(time.Millisecond)), kinds: []error{ErrProviderPaused}, errType: "retry_after"}
}

// waitPause waits out the provider's pause before a call, or fails at once
// when the pause outlasts what ctx allows. A pause learnt while waiting is
// waited out too.
func (j *LLMJudge) waitPause(ctx context.Context) error {
	for {
		d := j.pause.remaining(time.Now())
		if d <= 0 {
			return nil
		}
		if !j.canWait(ctx, d) {
			return pausedError(d)
		}
		// Up to a tenth more, so that the calls that waited do not all
		// reach the provider at the instant the pause ends.
		if err := sleep(ctx, d+rand.N(d/10+time.Millisecond)); err != nil {
			return j.failure(err)
		}
	}
}

// pausedBackOff waits between attempts at least until the provider's pause
// ends, and stops the attempts when the pause outlasts what ctx allows,
// whatever made the last attempt fail.
type pausedBackOff struct {
	next backoff.BackOff
	j    *LLMJudge
	ctx  context.Context
	// gaveUp is the pause that stopped the attempts, zero if none did.
	gaveUp time.Duration
}

var _ backoff.BackOff = (*pausedBackOff)(nil)

func (b *pausedBackOff) NextBackOff() time.Duration {
	d := b.next.NextBackOff()
	if d == backoff.Stop {
		return d
	}
	p := b.j.pause.remaining(time.Now())
	if p > 0 && !b.j.canWait(b.ctx, p) {
		b.gaveUp = p
		return backoff.Stop
	}
	return max(d, p)
}

func (b *pausedBackOff) Reset() { b.next.Reset() }
