package consolidate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memrank/memrank/memory"
)

// Lister lists the upstream's collections; *qdrant.Client satisfies it.
type Lister interface {
	ListCollections(ctx context.Context) ([]string, error)
}

// Scheduler runs the job every Interval over the configured collections
// (or every memory collection: one with an audit companion), each under
// the collection's lease. Start and Shutdown are its lifecycle; it owns one
// goroutine.
type Scheduler struct {
	job  *Job
	list Lister
	// OnRun, when set, is called with each run's report (logging, tests).
	onRun func(Report, error)

	startOnce, stopOnce sync.Once
	stop                chan struct{}
	wg                  sync.WaitGroup
}

// Schedule returns the job's scheduler. onRun may be nil.
func (j *Job) Schedule(list Lister, onRun func(Report, error)) *Scheduler {
	return &Scheduler{job: j, list: list, onRun: onRun, stop: make(chan struct{})}
}

// checkEvery bounds how long a due collection waits: the loop wakes this
// often (or every Interval, if shorter) and runs the collections whose
// last run is an Interval old.
const checkEvery = 10 * time.Minute

// Start runs the loop until Shutdown; ctx lends it its values. A collection
// is due when its last completed run (any replica's, read from its
// companion) is an Interval old, or it never ran: so a fleet that restarts
// more often than every Interval still consolidates, and replicas that
// wake together skip what one of them has just done (the lease keeps two
// from running at once).
func (s *Scheduler) Start(ctx context.Context) error {
	s.startOnce.Do(func() {
		ctx := context.WithoutCancel(ctx)
		s.wg.Go(func() {
			t := time.NewTicker(min(s.job.cfg.Interval, checkEvery))
			defer t.Stop()
			for {
				select {
				case <-s.stop:
					return
				case <-t.C:
				}
				rctx, cancel := context.WithCancel(ctx)
				go func() {
					select {
					case <-s.stop:
					case <-rctx.Done():
					}
					cancel()
				}()
				s.run(rctx, true)
				cancel()
			}
		})
	})
	return nil
}

// Shutdown stops the loop, cancelling a run in progress (the next run
// resumes it), and waits for it within ctx. Safe to call twice.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stop) })
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("consolidate: shutdown: %w", ctx.Err())
	}
}

// RunOnce consolidates every scheduled collection whose lease it gets.
func (s *Scheduler) RunOnce(ctx context.Context) { s.run(ctx, false) }

// run consolidates the scheduled collections (only the due ones when
// onlyDue is set) whose lease it gets.
func (s *Scheduler) run(ctx context.Context, onlyDue bool) {
	colls, err := s.collections(ctx)
	if err != nil {
		s.report(Report{}, err)
		return
	}
	for _, c := range colls {
		if ctx.Err() != nil {
			return
		}
		if onlyDue {
			due, err := s.due(ctx, c)
			if err != nil {
				s.report(Report{Collection: c}, err)
				continue
			}
			if !due {
				continue
			}
		}
		ok, err := s.job.acquire(ctx, c)
		if err != nil {
			s.report(Report{Collection: c}, err)
			continue
		}
		if !ok {
			s.job.log.InfoContext(ctx, "consolidation: another replica holds the lease", "collection", c)
			continue
		}
		rep, err := s.job.Run(ctx, Request{Collection: c, Operator: true})
		s.report(rep, err)
	}
}

// due reports whether c's last completed run is an Interval old (or it
// never ran).
func (s *Scheduler) due(ctx context.Context, c string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.job.cfg.Timeout)
	defer cancel()
	last, ok, err := ReadLastRun(ctx, s.job.store, c, "")
	if err != nil || !ok {
		return err == nil, err
	}
	return time.Since(last.FinishedAt) >= s.job.cfg.Interval, nil
}

func (s *Scheduler) report(rep Report, err error) {
	if err != nil {
		s.job.log.Error("consolidation failed", "collection", rep.Collection, "error", err)
	} else {
		s.job.log.Info("consolidation done", "collection", rep.Collection, "memories", rep.Memories,
			"transitions", rep.Transitions, "archived", rep.Archived, "lifted", rep.Lifted, "review_queue", rep.ReviewQueue,
			"compacted_keys", rep.CompactedKeys, "took", rep.Duration.String())
	}
	if s.onRun != nil {
		s.onRun(rep, err)
	}
}

// collections are the configured ones, or every collection with a
// companion.
func (s *Scheduler) collections(ctx context.Context) ([]string, error) {
	if len(s.job.cfg.Collections) > 0 {
		return s.job.cfg.Collections, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.job.cfg.Timeout)
	defer cancel()
	names, err := s.list.ListCollections(ctx)
	if err != nil {
		return nil, fmt.Errorf("consolidate: list collections: %w", err)
	}
	var out []string
	for _, n := range names {
		if !memory.IsCompanion(n) && slices.Contains(names, memory.AuditCollection(n)) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}
