// Package apiclient reaches memrank the way the CLI does. Observations go
// to the write path in process, on behalf of a caller's tenant and
// credentials (Local), or to a running memrank (Remote, which also asks
// POST /v1/retrieve for explain). InputFault tells an observation the write
// path refused from a write path that failed, and FormatOutcome is
// observe's one-line answer.
package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/memrank/memrank/client"
	"github.com/memrank/memrank/dedup"
)

// Observer is the write path: the dedup engine, Local or Remote.
type Observer interface {
	Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error)
}

// Local is the in-process engine with the caller's tenant and credentials.
type Local struct {
	Engine Observer
	// Tenant is set on every observation ("" with tenancy off).
	Tenant string
	// Auth adds the credentials the engine's upstream calls carry.
	Auth func(context.Context) context.Context
	// Timeout bounds each observation's write.
	Timeout time.Duration
}

// Observe offers obs to the engine as the caller's tenant, within Timeout.
func (l *Local) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	ctx, cancel := context.WithTimeout(l.Auth(ctx), l.Timeout)
	defer cancel()
	obs.Tenant = l.Tenant
	return l.Engine.Observe(ctx, obs)
}

// InputFault reports whether err refuses the observation itself (its
// fields, its size, the memory it corrects) rather than the write path
// failing: import skips such a line, observe exits with a usage error.
func InputFault(err error, obs dedup.Observation) bool {
	var ie *dedup.InputError
	if errors.As(err, &ie) {
		return true
	}
	// Not found is the line's fault only when it names a memory; otherwise
	// it is the collection, or a URL that is not memrank's.
	if errors.Is(err, dedup.ErrNotFound) {
		return obs.Corrects != ""
	}
	var he *client.Error
	if errors.As(err, &he) {
		switch he.Status {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			return true
		case http.StatusNotFound:
			return obs.Corrects != "" && strings.Contains(he.Message, "no such memory")
		}
	}
	return false
}

// FormatOutcome is observe's one-line answer: the decision, the memory it
// landed in, its confidence, n and tier, and how the judge, a supersession,
// merges or a replay played in.
func FormatOutcome(o dedup.Outcome) string {
	var b strings.Builder
	b.WriteString(string(o.Decision))
	if o.Decision == dedup.DecisionRejected {
		b.WriteString(" (not stored)")
		if o.Reason != "" {
			b.WriteString(": " + o.Reason)
		}
		return b.String()
	}
	fmt.Fprintf(&b, " %s confidence=%s observations=%d dedup_tier=%d", o.MemoryID,
		strconv.FormatFloat(o.Confidence, 'f', 3, 64), o.Observations, o.Tier)
	if o.CreatedCollection {
		b.WriteString(" created_collection")
	}
	if j := o.Judge; j != nil {
		switch {
		case j.Fallback != "":
			b.WriteString(" judge=fallback:" + j.Fallback)
		case j.Verdict != "":
			b.WriteString(" judge=" + j.Verdict)
			if j.Cached {
				b.WriteString("(cached)")
			}
		}
	}
	if o.Superseded != "" {
		b.WriteString(" superseded=" + o.Superseded)
	}
	if len(o.Merged) > 0 {
		b.WriteString(" merged=" + strings.Join(o.Merged, ","))
	}
	if o.Replayed {
		b.WriteString(" replayed")
	}
	if o.Reason != "" {
		b.WriteString(" reason=" + strconv.Quote(o.Reason))
	}
	return b.String()
}
