package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/internal/bench/consolidatebench"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/telemetry/settings"
)

// newUpkeep builds the consolidation job on the stack's upstream.
func (s *stack) newUpkeep(codec *memory.Codec, tel settings.Settings) (*consolidate.Job, error) {
	// A run or an archive on a collection written through Qdrant's API
	// creates its audit companion as the write path's first write would.
	o := consolidate.Options{Config: s.cfg.Consolidation, Codec: codec, Replica: s.replicaID, Logger: tel.Logger,
		EnsureCompanion: s.engine.EnsureAudit}
	if s.policy.Enabled() {
		o.Tenancy = s.policy
	}
	return consolidate.New(s.source, o)
}

// startUpkeep runs the consolidation schedule inside serve, when enabled.
func (s *stack) startUpkeep(ctx context.Context) error {
	if !s.cfg.Consolidation.Enabled {
		return nil
	}
	sched := s.upkeep.Schedule(s.source, nil)
	return s.life.start(s.cfg.Upstream.OwnContext(ctx), "consolidation", sched)
}

type consolidateOptions struct {
	collection, tenant string
	dryRun, quiet      bool
}

func newConsolidateCmd(e *env) *cobra.Command {
	var o consolidateOptions
	cmd := &cobra.Command{
		Use:   "consolidate",
		Short: "Write back every memory's tier label, lift earlier age archives, fold old access counts",
		Long: `Walk a memory collection and store each memory's tier (active, dormant, stale, archived) as
computed now, so that Qdrant filters on tier and the stale-review queue read true values. The
tier is a label: age lowers a memory's weight but never takes it out of answers, so a memory past
its decay floor is labelled archived and stays retrievable. Only a reviewer's archive (memrank
review --archive) or another writer takes a memory out (retrievable false), and the run leaves
those out. A memory an earlier version took out for age (its audit record says so) is made
retrievable again. Every change of tier and every lift is audited in the collection's companion,
<collection>_memrank_audit. A collection written through Qdrant's API has none yet: the run
creates it (the output says so), which makes the collection a memory collection from then on:
memrank re-ranks its queries and serve consolidates it on schedule.
Access counts of replicas that wrote none for consolidation.compact_replicas_after are folded
into one key.

A run is idempotent (run it again: nothing changes) and resumable (an interrupted run is
finished by running it again). It runs in process on the configured upstream (--upstream, or
the embedded store in --data); serve runs it on a schedule (consolidation.enabled, on by default).
--dry-run reports and writes nothing.`,
		Example: `  memrank consolidate --collection memories --dry-run
  memrank consolidate --collection memories`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runConsolidate(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "the memory collection (required)")
	f.StringVar(&o.tenant, "tenant", "", "only this tenant's memories, when tenancy is on (default: every tenant)")
	f.BoolVar(&o.dryRun, "dry-run", false, "report what would change; write nothing")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("data", defaultConfig().Store.DataDir, "data directory of the embedded store")
	return cmd
}

func runConsolidate(cmd *cobra.Command, e *env, o *consolidateOptions) error {
	if o.collection == "" {
		return usageError{errors.New("--collection is required")}
	}
	c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	s, err := e.openLocal(ctx, c, io.Discard, false, stopHint("it consolidates on its own schedule (consolidation.enabled)"))
	if err != nil {
		return err
	}
	defer s.close(context.Background())
	// The command line is the operator's: without --tenant it spans every tenant.
	req := consolidate.Request{Collection: o.collection, Tenant: o.tenant, Operator: o.tenant == "", DryRun: o.dryRun}
	progress, done := e.progress("consolidating "+o.collection, o.quiet)
	defer done()
	req.Progress = progress
	rep, err := s.upkeep.Run(s.cfg.Upstream.OwnContext(ctx), req)
	if err != nil {
		return err
	}
	printReport(e.stdout, rep)
	return nil
}

// printReport writes a run's report: transitions by tier, archived (the
// label), earlier age archives lifted, the review queue, compacted keys,
// writes.
func printReport(w io.Writer, rep consolidate.Report) {
	verb := "consolidated"
	if rep.DryRun {
		verb = "dry run: would consolidate"
	}
	fmt.Fprintf(w, "%s %s at %s: %d points, %d memories\n", verb, rep.Collection, rep.At.Format(time.RFC3339), rep.Examined, rep.Memories)
	if rep.CompanionCreated {
		fmt.Fprintf(w, "created the audit companion %s: memrank now treats %s as a memory collection (re-ranks its queries, consolidates it on schedule)\n",
			memory.AuditCollection(rep.Collection), rep.Collection)
	}
	if len(rep.Transitions) == 0 {
		fmt.Fprintln(w, "transitions: none")
	} else {
		fmt.Fprintln(w, "transitions:")
		for _, k := range slices.Sorted(maps.Keys(rep.Transitions)) {
			fmt.Fprintf(w, "  %-22s %d\n", strings.Replace(k, "->", " -> ", 1), rep.Transitions[k])
		}
	}
	var tiers []string
	for _, t := range []string{"active", "dormant", "stale", "archived"} {
		tiers = append(tiers, fmt.Sprintf("%s %d", t, rep.Tiers[t]))
	}
	fmt.Fprintf(w, "tiers now: %s\n", strings.Join(tiers, ", "))
	fmt.Fprintf(w, "labelled archived: %d (still retrievable)\n", rep.Archived)
	fmt.Fprintf(w, "age archives lifted: %d\n", rep.Lifted)
	fmt.Fprintf(w, "review queue: %d stale\n", rep.ReviewQueue)
	fmt.Fprintf(w, "compacted access keys: %d\n", rep.CompactedKeys)
	if !rep.DryRun {
		fmt.Fprintf(w, "writes: %d, audit records: %d, conflicts (left for the next run): %d\n", rep.Written, rep.Audited, rep.Conflicts)
	}
}

func newBenchConsolidateCmd(e *env) *cobra.Command {
	var o consolidatebench.Options
	var where consolidatebench.Embedded
	cmd := &cobra.Command{
		Use:   "consolidate",
		Short: "Time the consolidation job over generated memories of realistic ages",
		Long: `Load --memories memories (ages over two years, a mix of sources and types, a fifth read in the
last month) into a temporary embedded store (fsync on, as in production), consolidate them once
(the first run writes every transition and its audit record) and again at the same clock (the
idempotent re-run writes nothing), and report time and writes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := consolidatebench.RunEmbedded(cmd.Context(), where, o)
			if err != nil {
				return err
			}
			_, err = res.WriteTo(e.stdout)
			return err
		},
	}
	cmd.Flags().IntVar(&o.Memories, "memories", 50000, "memories to consolidate")
	cmd.Flags().IntVar(&o.BatchSize, "batch", consolidate.DefaultBatchSize, "points per page and per write batch")
	cmd.Flags().StringVar(&where.Dir, "dir", "", "data directory (default: a temporary one, removed afterwards)")
	cmd.Flags().BoolVar(&where.NoSync, "no-sync", false, "skip fsync on each commit (not durable)")
	return cmd
}
