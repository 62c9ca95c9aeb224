package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memrank/memrank/batchjob"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/internal/bench/backfillbench"
)

type backfillOptions struct {
	collection, mapping, embedder, extractor, assumeTime, output string
	dryRun, leaveUnscored, merge, rollback, quiet                bool
	batch                                                        int
}

func newBackfillCmd(e *env) *cobra.Command {
	var o backfillOptions
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Make a collection written by another tool (mem0, LangChain, ...) a memrank memory collection",
		Long: `Compute the memory fields of every point of a collection that another tool wrote (confidence,
source, type, extractor, times, text_hash, tier) from its payload, as the write path would for an
observation made when the point was created, and write them next to the point's own keys: every
original key stays as it was. The embedder that made the vectors is recorded, so later writes
and queries embed with it; memrank does not guess it (--embedder-model).

--mapping says how to read the payloads: mem0, langchain, or a mapping file (YAML or JSON) for
anything else; docs/backfill.md lists each mapping's assumptions. A point without a text or a
time stops the run unless --leave-unscored leaves such points as they are (or --assume-time
gives the missing time). --dry-run reads everything, writes nothing, and prints the report:
memories by computed tier and confidence bucket, how many would be gated, decayed or archived,
and problems by kind.

The run keeps a checkpoint and each point's original payload in <collection>_memrank_backfill:
an interrupted run resumes where it stopped when run again with the same flags, and
--rollback writes every original payload back and removes what the backfill added. It runs in
process on the configured upstream (--upstream, or the embedded store in --data, which a
running serve holds locked).`,
		Example: `  memrank backfill --collection mem0 --mapping mem0 --embedder-model text-embedding-3-small --extractor-model gpt-4o-mini --dry-run
  memrank backfill --collection mem0 --mapping mem0 --embedder-model text-embedding-3-small --extractor-model gpt-4o-mini
  memrank backfill --collection docs --mapping ./notes-mapping.yaml --embedder-model all-MiniLM-L6-v2 --leave-unscored
  memrank backfill --collection mem0 --rollback`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBackfill(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "the collection to backfill (required)")
	f.StringVar(&o.mapping, "mapping", "", "how to read its payloads: mem0, langchain or a mapping file (required unless --rollback)")
	f.StringVar(&o.embedder, "embedder-model", "", "the model that made its vectors, e.g. text-embedding-3-small (required unless its audit companion records one)")
	f.StringVar(&o.extractor, "extractor-model", "", "the model that extracted its memories (default: the mapping's; none: unknown quality)")
	f.BoolVar(&o.dryRun, "dry-run", false, "read and report; write nothing")
	f.BoolVar(&o.leaveUnscored, "leave-unscored", false, "leave points without a text or a time as they are (counted) instead of stopping")
	f.StringVar(&o.assumeTime, "assume-time", "", "RFC 3339 time to take as created_at of points that have none")
	f.BoolVar(&o.merge, "merge-duplicates", false, "merge memories with the same text_hash (and mapping scope) as the write path merges")
	f.BoolVar(&o.rollback, "rollback", false, "undo a backfill: write every original payload back")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.IntVar(&o.batch, "batch", batchjob.DefaultBatchSize, "points read and written at a time")
	f.StringVarP(&o.output, "output", "o", "text", "report format: text or json")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("data", defaultConfig().Store.DataDir, "data directory of the embedded store")
	return cmd
}

// request checks the flags and builds the backfill they ask for.
func (o *backfillOptions) request() (dedup.Backfill, error) {
	b := dedup.Backfill{Collection: o.collection, EmbedderModel: o.embedder, ExtractorModel: o.extractor,
		DryRun: o.dryRun, LeaveUnscored: o.leaveUnscored, MergeDuplicates: o.merge, BatchSize: o.batch}
	switch {
	case o.collection == "":
		return b, usageError{errors.New("--collection is required")}
	case o.batch < 1 || o.batch > batchjob.MaxBatchSize:
		return b, usageError{fmt.Errorf("--batch %d: want 1 to %d", o.batch, batchjob.MaxBatchSize)}
	case o.output != "text" && o.output != "json":
		return b, usageError{fmt.Errorf("--output %q: want text or json", o.output)}
	case o.rollback:
		return b, nil
	case o.mapping == "":
		return b, usageError{errors.New("--mapping is required: mem0, langchain or a mapping file")}
	}
	if o.assumeTime != "" {
		t, err := time.Parse(time.RFC3339, o.assumeTime)
		if err != nil {
			return b, usageError{fmt.Errorf("--assume-time %q: want an RFC 3339 time", o.assumeTime)}
		}
		b.AssumeTime = t.UTC()
	}
	if m, ok := foreign.Builtin(o.mapping); ok {
		b.Mapping = m
		return b, nil
	}
	data, err := os.ReadFile(o.mapping)
	if err != nil {
		return b, usageError{fmt.Errorf("--mapping: not mem0 or langchain, and not a readable file: %w", err)}
	}
	if b.Mapping, err = foreign.Parse(data); err != nil {
		return b, usageError{fmt.Errorf("--mapping %s: %w", o.mapping, err)}
	}
	return b, nil
}

func runBackfill(cmd *cobra.Command, e *env, o *backfillOptions) error {
	b, err := o.request()
	if err != nil {
		return err
	}
	c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	s, err := e.openLocal(ctx, c, io.Discard, false, stopHint(""))
	if err != nil {
		return err
	}
	defer s.close(context.Background())
	verb := "backfilling "
	if o.rollback {
		verb = "rolling back "
	}
	progress, done := e.progress(verb+o.collection, o.quiet)
	defer done()
	ctx = s.cfg.Upstream.OwnContext(ctx)
	if o.rollback {
		rep, err := s.engine.RollbackBackfill(ctx, dedup.BackfillRollback{Collection: o.collection, BatchSize: o.batch, Progress: progress})
		if err != nil {
			return err
		}
		if o.output == "json" {
			return json.NewEncoder(e.stdout).Encode(rep)
		}
		_, err = fmt.Fprintf(e.stdout, "%s rolled back: %d points have their original payloads again\n", rep.Collection, rep.Restored)
		return err
	}
	b.Progress = progress
	rep, err := s.engine.Backfill(ctx, b)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return json.NewEncoder(e.stdout).Encode(rep)
	}
	_, err = io.WriteString(e.stdout, backfillText(rep))
	return err
}

// backfillText is the report for people.
func backfillText(r dedup.BackfillReport) string {
	var b strings.Builder
	head := "backfilled"
	if r.DryRun {
		head = "dry run: would backfill"
	}
	fmt.Fprintf(&b, "%s %s with the %s mapping (embedder %s)", head, r.Collection, r.Mapping, orNone(r.Embedder))
	if r.Resumed {
		b.WriteString(", resuming an interrupted run")
	}
	fmt.Fprintf(&b, "\npoints %d of %d: %d memories, %d already memories (left as they are), %d left unscored, %d merged into a duplicate\n",
		r.Points, r.Total, r.Backfilled, r.Already, r.Unscored, r.Merged)
	fmt.Fprintf(&b, "tiers:    %s\n", counts(r.Tiers, []string{"active", "dormant", "stale", "archived"}))
	fmt.Fprintf(&b, "buckets:  %s\n", counts(r.Buckets, []string{"high", "medium", "low"}))
	fmt.Fprintf(&b, "gated %d (below the retrieval gate), decayed %d (past the decay floor), archived %d\n", r.Gated, r.Decayed, r.Archived)
	if len(r.Problems) == 0 {
		b.WriteString("problems: none\n")
	} else {
		b.WriteString("problems:\n")
		for _, k := range slices.Sorted(maps.Keys(r.Problems)) {
			fmt.Fprintf(&b, "  %-28s %d\n", k, r.Problems[k])
		}
	}
	if r.DryRun && r.Problems["no_text"]+r.Problems["no_time"] > 0 {
		b.WriteString("a run stops at the first point with no text or no time unless --leave-unscored (or --assume-time) is given\n")
	}
	if len(r.Assumptions) > 0 {
		b.WriteString("assumptions:\n")
		for _, a := range r.Assumptions {
			fmt.Fprintf(&b, "  - %s\n", a)
		}
	}
	return b.String()
}

func counts(m map[string]int, order []string) string {
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "not named: --embedder-model is required to run"
	}
	return s
}

func newBenchBackfillCmd(e *env) *cobra.Command {
	var o backfillbench.Options
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Backfill throughput: a generated mem0-shaped collection, dry run, run and rollback",
		Long: `Generate a mem0-shaped collection of --points points in a temporary embedded store (fsync on,
as in production, unless --no-sync) and time a dry run, a backfill with the mem0 mapping and a
rollback of it, each in points per second.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			res, err := backfillbench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			_, err = res.WriteTo(e.stdout)
			return err
		},
	}
	d := backfillbench.DefaultOptions()
	f := cmd.Flags()
	f.IntVar(&o.Points, "points", d.Points, "points of the generated collection")
	f.IntVar(&o.Dimensions, "dim", d.Dimensions, "vector dimensions")
	f.IntVar(&o.BatchSize, "batch", d.BatchSize, "points per page")
	f.BoolVar(&o.Merge, "merge-duplicates", false, "merge the repeated texts (a fifth of them)")
	f.BoolVar(&o.NoSync, "no-sync", false, "skip the fsync of each commit (not durable)")
	f.StringVar(&o.Dir, "dir", "", "data directory (default: a temporary one, removed afterwards)")
	return cmd
}
