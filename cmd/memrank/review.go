package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/scoring"
)

type reviewOptions struct {
	collection, tenant string
	limit              int
	dormantDays        float64
	confirm, archive   []string
	correct, text      string
}

func newReviewCmd(e *env) *cobra.Command {
	var o reviewOptions
	cmd := &cobra.Command{
		Use:   "review",
		Short: "List the stale memories waiting for review, or answer them: confirm, correct or archive",
		Long: `Without an answer flag, print the collection's stale-review queue: memories whose stored tier
is stale (written by memrank consolidate), least recently used first, with why each is there.
With --dormant-idle-days, dormant memories unused that long are listed too.

Answer a memory with --confirm ID (the write path's confirmation: confidence up, decay reset),
--correct ID --text "the right fact" (the write path's correction: the new fact supersedes it)
or --archive ID (tier archived, retrievable false, audited; the memory stays readable and a new
observation of the fact brings it back). --confirm and --archive may be repeated. It runs in
process on the configured upstream (--upstream, or the embedded store in --data). The same
queue is GET /v1/review?collection=C on a running memrank, answered by POST /v1/review/{id}.`,
		Example: `  memrank review --collection memories
  memrank review --collection memories --confirm 3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34
  memrank review --collection memories --correct 42 --text "Dana moved to Lisbon"
  memrank review --collection memories --archive 42 --archive 43`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReview(cmd, e, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.collection, "collection", "", "the memory collection (required)")
	f.StringVar(&o.tenant, "tenant", "", "the tenant, when tenancy is on (listing: default every tenant; answers: required)")
	f.IntVar(&o.limit, "limit", consolidate.DefaultReviewLimit, "memories listed")
	f.Float64Var(&o.dormantDays, "dormant-idle-days", 0, "also list dormant memories unused for this many days (0: stale only)")
	f.StringSliceVar(&o.confirm, "confirm", nil, "confirm this memory (repeatable)")
	f.StringSliceVar(&o.archive, "archive", nil, "archive this memory (repeatable)")
	f.StringVar(&o.correct, "correct", "", "correct this memory with --text")
	f.StringVar(&o.text, "text", "", "the corrected fact, with --correct")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("data", defaultConfig().Store.DataDir, "data directory of the embedded store")
	return cmd
}

func runReview(cmd *cobra.Command, e *env, o *reviewOptions) error {
	if o.collection == "" {
		return usageError{errors.New("--collection is required")}
	}
	if (o.correct == "") != (o.text == "") {
		return usageError{errors.New("--correct and --text go together")}
	}
	if o.limit < 1 || o.limit > consolidate.MaxReviewLimit {
		return usageError{fmt.Errorf("--limit %d: want 1 to %d", o.limit, consolidate.MaxReviewLimit)}
	}
	c, err := e.loadConfig(cmd.Flags(), writeFlagKeys)
	if err != nil {
		return err
	}
	answering := len(o.confirm)+len(o.archive) > 0 || o.correct != ""
	if answering && c.Tenancy.Key != "" && o.tenant == "" {
		return usageError{errors.New("--tenant is required to answer when tenancy is on")}
	}
	ctx := cmd.Context()
	s, err := e.openLocal(ctx, c, io.Discard, false, stopHint("GET /v1/review and POST /v1/review/{id} on it do the same"))
	if err != nil {
		return err
	}
	defer s.close(context.Background())
	ctx = s.cfg.Upstream.OwnContext(ctx)
	if !answering {
		// The command line is the operator's: without --tenant the queue
		// spans every tenant.
		q, err := s.upkeep.Review(ctx, consolidate.ReviewRequest{Collection: o.collection, Tenant: o.tenant, Operator: o.tenant == "", Limit: o.limit,
			DormantIdle: time.Duration(o.dormantDays * 24 * float64(time.Hour))})
		if err != nil {
			return err
		}
		return printQueue(e.stdout, q)
	}
	return answerReview(ctx, e.stdout, s, o)
}

func answerReview(ctx context.Context, w io.Writer, s *stack, o *reviewOptions) error {
	for _, id := range o.confirm {
		out, err := s.engine.Confirm(ctx, dedup.Confirmation{Collection: o.collection, Tenant: o.tenant, MemoryID: id})
		if err != nil {
			return fmt.Errorf("confirm %s: %w", id, err)
		}
		if out.AlreadyCounted {
			// The review queue sends no session: its confirmations count once together.
			fmt.Fprintf(w, "confirmed %s again, not counted (%s): confidence %.3f, n=%d\n", out.MemoryID, out.Reason, out.Confidence, out.Observations)
			continue
		}
		fmt.Fprintf(w, "confirmed %s: confidence %.3f, n=%d\n", out.MemoryID, out.Confidence, out.Observations)
	}
	if o.correct != "" {
		out, err := s.engine.Correct(ctx, dedup.Observation{Collection: o.collection, Tenant: o.tenant, Text: o.text,
			Source: scoring.SourceDirect, Corrects: o.correct})
		if err != nil {
			return fmt.Errorf("correct %s: %w", o.correct, err)
		}
		fmt.Fprintf(w, "corrected %s: now %s (confidence %.3f)\n", o.correct, out.MemoryID, out.Confidence)
	}
	for _, id := range o.archive {
		out, err := s.upkeep.Archive(ctx, consolidate.ArchiveRequest{Collection: o.collection, Tenant: o.tenant, ID: id,
			Operator: o.tenant == ""})
		if err != nil {
			return fmt.Errorf("archive %s: %w", id, err)
		}
		if out.Archived {
			fmt.Fprintf(w, "archived %s (was %s)\n", out.MemoryID, out.From)
		} else {
			fmt.Fprintf(w, "%s was archived already\n", out.MemoryID)
		}
	}
	return nil
}

func printQueue(w io.Writer, q consolidate.ReviewQueue) error {
	when := "never consolidated: run memrank consolidate first"
	if !q.ConsolidatedAt.IsZero() {
		when = "tiers as of " + q.ConsolidatedAt.Format(time.RFC3339)
	}
	fmt.Fprintf(w, "%s: %d to review (%s)\n", q.Collection, q.Total, when)
	if len(q.Items) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIER\tCONF\tFRESH\tIDLE DAYS\tTEXT")
	for _, it := range q.Items {
		text := it.Text
		if len(text) > 60 {
			text = strings.ToValidUTF8(text[:57], "") + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.0f\t%s\n", it.ID, it.Tier, it.Confidence, it.Freshness, it.IdleDays, text)
	}
	return tw.Flush()
}
