package consolidate

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

// Review queue bounds.
const (
	DefaultReviewLimit = 50
	MaxReviewLimit     = 1000
)

// ReviewRequest asks for a collection's stale-review queue.
type ReviewRequest struct {
	Collection string
	// Tenant scopes the queue to one tenant's memories when tenancy is on.
	Tenant string
	// Operator allows, with tenancy on, a queue of every tenant's memories
	// (no Tenant); without it such a request is refused.
	Operator bool
	Limit    int // 0: DefaultReviewLimit
	// DormantIdle, when positive, adds dormant memories unused for at least
	// this long.
	DormantIdle time.Duration
}

// ReviewItem is one memory waiting for review, with why it is there.
type ReviewItem struct {
	ID             string    `json:"id"`
	Text           string    `json:"text"`
	MemoryType     string    `json:"memory_type"`
	Source         string    `json:"source"`
	Tier           string    `json:"tier"`
	Confidence     float64   `json:"confidence"`
	Freshness      float64   `json:"freshness"`
	LastObservedAt time.Time `json:"last_observed_at"`
	LastAccessedAt time.Time `json:"last_accessed_at,omitzero"`
	IdleDays       float64   `json:"idle_days"`
	Why            string    `json:"why"`
}

// ReviewQueue is the queue, oldest first (least recently used first).
type ReviewQueue struct {
	Collection string       `json:"collection"`
	Total      int          `json:"total"` // memories in the queue; Items holds the first Limit
	Items      []ReviewItem `json:"items"`
	// ConsolidatedAt is when the tiers the queue reads were computed (the
	// last run); zero when the collection was never consolidated.
	ConsolidatedAt time.Time `json:"consolidated_at,omitzero"`
}

// Review lists the memories whose stored tier is stale (and, with
// DormantIdle, dormant ones unused that long): the stale facts seed 003
// batches for a weekly human review. It reads the tiers the last
// consolidation stored, so a collection never consolidated has an empty
// queue.
func (j *Job) Review(ctx context.Context, req ReviewRequest) (ReviewQueue, error) {
	if req.Collection == "" || memory.IsCompanion(req.Collection) {
		return ReviewQueue{}, fmt.Errorf("%w: %q is not a memory collection", ErrInput, req.Collection)
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultReviewLimit
	}
	if limit < 1 || limit > MaxReviewLimit {
		return ReviewQueue{}, fmt.Errorf("%w: limit %d is outside 1 to %d", ErrInput, req.Limit, MaxReviewLimit)
	}
	tiers := []string{scoring.TierStale.String()}
	if req.DormantIdle > 0 {
		tiers = append(tiers, scoring.TierDormant.String())
	}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(j.codec.Key(memory.FieldTier), tiers...)}}
	s, err := j.scope(req.Tenant, req.Operator)
	if err != nil {
		return ReviewQueue{}, err
	}
	if s != nil {
		f.Must = append(f.Must, s.Must...)
	}
	now := j.now().UTC()
	q := ReviewQueue{Collection: req.Collection}
	// Only the first limit items are kept while scrolling: a queue of a
	// million stale memories costs limit items of memory, not a million.
	kept := &oldest{limit: limit}
	var offset *qdrant.PointId
	for {
		lim := uint32(j.cfg.BatchSize)
		pts, next, err := j.scroll(ctx, &qdrant.ScrollPoints{CollectionName: req.Collection, Filter: f,
			Limit: &lim, Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if status.Code(err) == codes.NotFound {
				return ReviewQueue{}, fmt.Errorf("%w: collection %s", ErrNotFound, req.Collection)
			}
			return ReviewQueue{}, storeError("read "+req.Collection, err)
		}
		for _, p := range pts {
			if it, ok := j.reviewItem(p, now, req.DormantIdle); ok {
				q.Total++
				kept.offer(it)
			}
		}
		if next == nil {
			break
		}
		offset = next
	}
	q.Items = kept.sorted()
	q.ConsolidatedAt = j.consolidatedAt(ctx, req.Collection, req.Tenant)
	return q, nil
}

func (j *Job) reviewItem(p *qdrant.RetrievedPoint, now time.Time, dormantIdle time.Duration) (ReviewItem, bool) {
	m := j.codec.DecodeQdrant(p.GetPayload())
	if m.SupersededBy != "" || !m.Retrievable || m.Unscored() {
		return ReviewItem{}, false
	}
	in := j.codec.Inputs(&m)
	s := j.params.Evaluate(&in, 1, now)
	last := m.LastObserved()
	if m.LastAccessedAt.After(last) {
		last = m.LastAccessedAt
	}
	idle := scoring.AgeDays(last, now)
	if m.Tier == scoring.TierDormant && idle < dormantIdle.Hours()/24 {
		return ReviewItem{}, false
	}
	it := ReviewItem{ID: idString(p.GetId()), Text: m.Text, MemoryType: m.MemoryType, Source: m.Source,
		Tier: m.Tier.String(), Confidence: memory.RoundConfidence(s.Confidence), Freshness: round3(s.Freshness),
		LastObservedAt: m.LastObserved(), LastAccessedAt: m.LastAccessedAt, IdleDays: round3(idle)}
	accessed := "never read"
	if !m.LastAccessedAt.IsZero() {
		accessed = "last read " + m.LastAccessedAt.UTC().Format(time.DateOnly)
	}
	it.Why = fmt.Sprintf("%s: confidence %.3f; unused for %.0f days (last observed %s, %s)",
		m.Tier, s.Confidence, idle, m.LastObserved().UTC().Format(time.DateOnly), accessed)
	return it, true
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// ArchiveOutcome is the answer to a review's archive.
type ArchiveOutcome struct {
	MemoryID string `json:"memory_id"`
	From     string `json:"from"` // the tier before
	// Archived is false when the memory was archived already: nothing
	// changed (the answer is idempotent).
	Archived bool `json:"archived"`
}

// ArchiveRequest is a reviewer's archive of one memory.
type ArchiveRequest struct {
	Collection string
	ID         string
	// Tenant scopes the memory to one tenant's when tenancy is on.
	Tenant string
	// Operator allows, with tenancy on, an archive without a Tenant (any
	// tenant's memory); without it such a request is refused.
	Operator bool
}

// Archive archives one memory on a reviewer's word: tier archived,
// retrievable false, audited (reason "archive"). The memory stays
// readable (GET /v1/memories/{id}, include_archived) and a new
// observation of the fact revives it. A memory archived already is left
// as it is (Archived false), except one an earlier version archived for
// age: the archive is audited, so the run's lift leaves it archived.
func (j *Job) Archive(ctx context.Context, req ArchiveRequest) (ArchiveOutcome, error) {
	coll, id := req.Collection, req.ID
	if coll == "" || memory.IsCompanion(coll) {
		return ArchiveOutcome{}, fmt.Errorf("%w: %q is not a memory collection", ErrInput, coll)
	}
	pid, err := parseID(id)
	if err != nil {
		return ArchiveOutcome{}, err
	}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(pid)}}
	s, err := j.scope(req.Tenant, req.Operator)
	if err != nil {
		return ArchiveOutcome{}, err
	}
	if s != nil {
		f.Must = append(f.Must, s.Must...)
	}
	for range archiveAttempts {
		one := uint32(1)
		pts, _, err := j.scroll(ctx, &qdrant.ScrollPoints{CollectionName: coll, Filter: f, Limit: &one,
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if status.Code(err) == codes.NotFound {
				return ArchiveOutcome{}, fmt.Errorf("%w: collection %s", ErrNotFound, coll)
			}
			return ArchiveOutcome{}, storeError(fmt.Sprintf("read %s in %s", id, coll), err)
		}
		if len(pts) == 0 {
			return ArchiveOutcome{}, fmt.Errorf("%w: memory %s in %s", ErrNotFound, id, coll)
		}
		c, ok := j.decide(pts[0], j.now().UTC())
		if !ok {
			return ArchiveOutcome{}, fmt.Errorf("%w: memory %s is superseded or not a memory record", ErrInput, id)
		}
		out := ArchiveOutcome{MemoryID: c.sid, From: c.from.tier.String()}
		if c.from == excluded {
			// Archived already, by a reviewer or another writer: nothing
			// changes. An earlier version's age archive, which the next
			// run would lift, becomes the reviewer's archive: audited, so
			// it stays.
			lifts, err := j.ageArchives(ctx, coll, s, []change{c})
			if err != nil {
				return ArchiveOutcome{}, err
			}
			if c.lifts = lifts[c.sid]; c.lifts == "" {
				return out, nil
			}
			c.adopt = true
		}
		// The archive is audited: a collection written through Qdrant's
		// API gets its companion first.
		if _, err := j.ensureCompanion(ctx, coll); err != nil {
			return ArchiveOutcome{}, err
		}
		c.to, c.reason = excluded, reasonArchive
		var rep Report
		rep.Transitions = map[string]int{}
		if err := j.apply(ctx, coll, []change{c}, &rep); err != nil {
			return ArchiveOutcome{}, err
		}
		if rep.Conflicts == 0 {
			out.Archived = true
			return out, nil
		}
		// The memory changed between the read and the write: decide again.
	}
	return ArchiveOutcome{}, fmt.Errorf("%w: memory %s, after %d attempts; archive it again", ErrBusy, id, archiveAttempts)
}

// archiveAttempts bounds Archive's read-decide-write rounds when other
// writers keep changing the memory in between.
const archiveAttempts = 3

// parseID reads a point id: an unsigned integer or a UUID.
func parseID(s string) (*qdrant.PointId, error) {
	if id, ok := qdrantjson.ParsePointID(s); ok {
		return id, nil
	}
	return nil, fmt.Errorf("%w: id %.80q is neither an unsigned integer nor a UUID", ErrInput, s)
}

// consolidatedAt is when the tiers a tenant sees were computed
// (ReadLastRun); zero when no run covered them, or the record cannot be
// read: the queue is still answered.
func (j *Job) consolidatedAt(ctx context.Context, coll, tenant string) time.Time {
	if run, ok, err := j.LastRun(ctx, coll, tenant); err == nil && ok {
		return run.ComputedAt
	}
	return time.Time{}
}
