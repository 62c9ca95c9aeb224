package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/memrank/memrank/dedup"
)

type reembedOptions struct {
	collection, to string
	dryRun, quiet  bool
	batch          int
	settle         time.Duration
}

func newReembedCmd(e *env) *cobra.Command {
	var o reembedOptions
	cmd := &cobra.Command{
		Use:   "reembed",
		Short: "Move a memory collection to another embedder: every vector made again from its text",
		Long: `Replace every vector of a memory collection with its text embedded by another model, then
record that model (and the similarity bands calibrated for it) in the collection's audit
companion. This is how a collection written with the lexical local embedder
(memrank-local-hash-v1) moves to the semantic one that is now the default
(memrank-local-sem-v1): until then memrank keeps embedding its texts with the model it records.

--to names the model (default: the configured embedder's); a built-in local model of any
dimension can be named, an external one only if it is the configured embedder. The dimension
must stay the same: a new dimension needs a new collection. Payloads are not touched. Points
without a text keep their vectors and are counted.

Every point needs a text: one without could not be made again, so the run refuses (nothing
changes) and says how many. Before any vector changes, the collection's record is marked as
moving; every memrank process then refuses writes and text queries for it (409), instead of
mixing models, until the run records the new model. Processes re-read the record within 10s:
the run waits --settle (12s) after marking; give --settle 0 when no memrank is running. A run
that stops half way leaves the mark: run it again with the same --to to finish. --dry-run
counts and writes nothing. It runs in process on the configured upstream (--upstream, or the
embedded store in --data, which a running serve holds locked).`,
		Example: `  memrank reembed --collection memories --dry-run
  memrank reembed --collection memories
  memrank reembed --upstream localhost:6334 --collection memories --to memrank-local-sem-v1:384`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReembed(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "the memory collection (required)")
	f.StringVar(&o.to, "to", "", "the model to move to, e.g. memrank-local-sem-v1:384 (default: the configured embedder's)")
	f.BoolVar(&o.dryRun, "dry-run", false, "count what would be re-embedded; write nothing")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.IntVar(&o.batch, "batch", 256, "points read, embedded and written at a time")
	f.DurationVar(&o.settle, "settle", dedup.DefaultReembedSettle, "wait after marking the collection, so running memrank processes see the mark (0: none is running)")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("data", defaultConfig().Store.DataDir, "data directory of the embedded store")
	return cmd
}

func runReembed(cmd *cobra.Command, e *env, o *reembedOptions) error {
	if o.collection == "" {
		return usageError{errors.New("--collection is required")}
	}
	if o.batch < 1 || o.batch > 10000 {
		return usageError{fmt.Errorf("--batch %d: want 1 to 10000", o.batch)}
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
	to, ok := s.embedder.For(o.to)
	if !ok {
		return usageError{fmt.Errorf("--to %s: not a built-in model, and not the configured embedder (%s)", o.to, s.embedder.Model())}
	}
	req := dedup.Reembed{Collection: o.collection, To: to, DryRun: o.dryRun, BatchSize: o.batch, Settle: o.settle}
	if o.settle <= 0 {
		req.Settle = -1 // none
	}
	progress, done := e.progress("re-embedding "+o.collection, o.quiet)
	defer done()
	req.Progress = progress
	rep, err := s.engine.Reembed(s.cfg.Upstream.OwnContext(ctx), req)
	if err != nil {
		return err
	}
	w := e.stdout
	switch {
	case rep.Already:
		fmt.Fprintf(w, "%s already records %s: nothing to do\n", rep.Collection, rep.To)
	case o.dryRun && rep.NoText > 0:
		fmt.Fprintf(w, "dry run: %s cannot move from %s to %s: %d of its %d points have no text\n",
			rep.Collection, rep.From, rep.To, rep.NoText, rep.Points)
	case o.dryRun:
		fmt.Fprintf(w, "dry run: %s would move from %s to %s: %d points to re-embed\n", rep.Collection, rep.From, rep.To, rep.Points)
	default:
		fmt.Fprintf(w, "%s moved from %s to %s: %d points re-embedded\n", rep.Collection, rep.From, rep.To, rep.Reembedded)
		if rep.Bands.Same > 0 {
			fmt.Fprintf(w, "recorded bands: same %.2f, judge %.2f\n", rep.Bands.Same, rep.Bands.Judge)
		}
	}
	return nil
}
