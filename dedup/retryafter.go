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
	// logged is the end of the last pause logged: one line per pause.
	logged atomic.Int64
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
// retry-after-ms) on a 429 or a 503, capped at maxRetryAfter, and returns
// it. Any other response, or a header that says nothing readable, changes
// nothing (zero).
func (p *providerPause) observe(resp *http.Response, now time.Time) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	d := min(embed.RetryAfter(resp.Header, now), maxRetryAfter)
	if d <= 0 {
		return 0
	}
	p.extend(now.Add(d))
	return d
}

// shouldLog says whether a pause of d learnt at now deserves a log line:
// one of at least a second (not the sub-second ones OpenAI's
// retry-after-ms gives under steady load) while no logged pause lasts.
func (p *providerPause) shouldLog(d time.Duration, now time.Time) bool {
	if d < time.Second {
		return false
	}
	for {
		old := p.logged.Load()
		if old > now.UnixNano() {
			return false
		}
		if p.logged.CompareAndSwap(old, now.Add(d).UnixNano()) {
			return true
		}
	}
}

// ErrProviderPaused is wrapped by the error of a judge call that was never
// sent: the provider had asked (Retry-After) for no calls for longer than
// the call could wait.
var ErrProviderPaused = errors.New("dedup: the judge's provider asked for a pause (Retry-After)")

// waitLimit is when a call with ctx must stop waiting for a pause: its
// deadline or, without one, one attempt's timeout from now.
func (j *LLMJudge) waitLimit(ctx context.Context) time.Time {
	if deadline, ok := ctx.Deadline(); ok {
		return deadline
	}
	return time.Now().Add(j.timeout)
}

// slack is how much time a call that must stop waiting at limit has to
// spare after a pause of d, keeping half an attempt's timeout for the call
// itself (a call that waits until its last moment only times out). A call
// waits out the pause only when the slack is not negative.
func (j *LLMJudge) slack(limit time.Time, d time.Duration) time.Duration {
	left := time.Until(limit)
	return left - d - min(j.timeout, left)/2
}

// jittered is d plus up to a tenth of it, within slack: the calls that
// waited out one pause do not all reach the provider at the instant it
// ends, and none waits past its slack.
func jittered(d, slack time.Duration) time.Duration {
	if m := min(d/10, slack); m > 0 {
		return d + rand.N(m)
	}
	return d
}

// Paused reports whether the provider's pause outlasts what a call with
// ctx could wait: such a call would fail unsent. Judging asks before it
// spends a call of the collection's budget.
func (j *LLMJudge) Paused(ctx context.Context) bool {
	d := j.pause.remaining(time.Now())
	return d > 0 && j.slack(j.waitLimit(ctx), d) < 0
}

// sentBefore turns the error of a wait that gave up before a retry into
// a plain failure: an earlier attempt of the call was sent, so the call is
// not an unsent one (ErrProviderPaused).
func sentBefore(err error) error {
	var je *judgeError
	if !errors.As(err, &je) || !errors.Is(err, ErrProviderPaused) {
		return err
	}
	return &judgeError{msg: je.msg, errType: je.errType}
}

func pausedError(d time.Duration) *judgeError {
	return &judgeError{msg: fmt.Sprintf("dedup: llm judge: not sent: the provider asked (Retry-After) for no calls for another %v, longer than this call can wait",
		d.Round(time.Millisecond)), kinds: []error{ErrProviderPaused}, errType: "retry_after"}
}

// waitPause waits out the provider's pause before a call, or fails at once
// when the pause outlasts what ctx allows. A pause extended while it waits
// is waited out too, within the same limit, so it never waits past it.
func (j *LLMJudge) waitPause(ctx context.Context) error {
	limit := j.waitLimit(ctx)
	for {
		d := j.pause.remaining(time.Now())
		if d <= 0 {
			return nil
		}
		s := j.slack(limit, d)
		if s < 0 {
			return pausedError(d)
		}
		if err := sleep(ctx, jittered(d, s)); err != nil {
			return j.failure(err)
		}
	}
}

// pausedBackOff waits between attempts at least until the provider's pause
// ends (with waitPause's jitter), and stops the attempts when the pause
// outlasts what the call allows, whatever made the last attempt fail.
type pausedBackOff struct {
	next  backoff.BackOff
	j     *LLMJudge
	limit time.Time // the call's waitLimit
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
	if p <= 0 {
		return d
	}
	s := b.j.slack(b.limit, p)
	if s < 0 {
		b.gaveUp = p
		return backoff.Stop
	}
	return max(d, jittered(p, s))
}

func (b *pausedBackOff) Reset() { b.next.Reset() }
