package main

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/memrank/memrank/internal/scoretable"
	"github.com/memrank/memrank/memory"
)

type scoreOptions struct {
	now       string
	baseScore float64
	focus     float64
	limit     int
	json      bool
}

func newScoreCmd(e *env) *cobra.Command {
	var o scoreOptions
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Score memories read as JSON lines on stdin and explain every factor",
		Long: `Read memories as JSON lines on stdin, one payload object per line with the keys of the
memory record (text, memory_type, source, extractor_model, confidence, created_at, ...; an
optional "id" labels the line), score them as one candidate set at --now against
--base-score, and print for each: confidence, freshness and its factor, access boost,
weight, the gate, render and tier decisions, whether the memory is within its decay floor,
and every component. Results come best first.

--focus is the query's focus on recent memories the weights are computed with (0 to 1,
default 1: age takes all that scoring.freshness_weight allows). A real query measures it
from its candidates (docs/scoring.md); one base score for all cannot.

A line that is not a JSON object is reported with its line number and skipped; the
others are still scored, and memrank exits with status 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.loadConfig(nil, nil)
			if err != nil {
				return err
			}
			codec, err := c.codec()
			if err != nil {
				return usageError{err}
			}
			now := time.Now().UTC()
			if o.now != "" {
				t, ok := memory.ParseTime(o.now)
				if !ok {
					return usageError{fmt.Errorf("--now %q is not an RFC 3339 time", o.now)}
				}
				now = t
			}
			if math.IsNaN(o.baseScore) || o.baseScore < 0 || math.IsInf(o.baseScore, 0) {
				return usageError{fmt.Errorf("--base-score %v must be a finite number >= 0", o.baseScore)}
			}
			if !(o.focus >= 0 && o.focus <= 1) {
				return usageError{fmt.Errorf("--focus %v is outside [0, 1]", o.focus)}
			}
			bad := 0
			items, err := scoretable.Read(e.stdin, codec, func(line int, err error) {
				fmt.Fprintf(e.stderr, "memrank: line %d: %v\n", line, err)
				bad++
			})
			if err != nil {
				return fmt.Errorf("reading stdin: %w", err)
			}
			results := scoretable.Score(codec, items, o.baseScore, o.focus, now, o.limit)
			if o.json {
				err = scoretable.WriteJSON(e.stdout, results)
			} else {
				err = scoretable.WriteTable(e.stdout, results)
			}
			if err != nil {
				return err
			}
			if bad > 0 {
				fmt.Fprintf(e.stderr, "memrank: %d line(s) could not be scored\n", bad)
				return exitError{exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.now, "now", "", "score as of this RFC 3339 time (default: the current time)")
	cmd.Flags().Float64Var(&o.baseScore, "base-score", 1, "the similarity score every memory is given as its base")
	cmd.Flags().Float64Var(&o.focus, "focus", 1, "the query's focus on recent memories, 0 to 1 (1: age takes all it may)")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "return at most this many results, as a query would (0: all)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object per memory instead of a table")
	return cmd
}
