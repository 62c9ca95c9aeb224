package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memrank/memrank/internal/eval/evalfmt"
	"github.com/memrank/memrank/scoring"
)

// Report is everything an evaluation measured.
type Report struct {
	Set        SetInfo `json:"set"`
	Split      string  `json:"split"`
	SplitSeed  int64   `json:"split_seed"`
	Limit      int     `json:"limit"` // 0: each query's own, which differ
	Where      string  `json:"where"`
	Collection string  `json:"collection"`
	// Memrank is the memrank row's configuration (nil for a running
	// memrank, whose configuration is its own).
	Memrank  *MemrankInfo `json:"memrank,omitempty"`
	Rows     []Row        `json:"variants"`
	PerQuery []QueryRow   `json:"per_query"`
	Fit      *FitReport   `json:"fit,omitempty"`
	Notes    []string     `json:"notes,omitempty"`
}

// SetInfo describes the set.
type SetInfo struct {
	File     string    `json:"file"`
	Name     string    `json:"name"`
	Version  int       `json:"version"`
	Seed     int64     `json:"seed"`
	Now      time.Time `json:"now"`
	Dim      int       `json:"dim"`
	Embedder string    `json:"embedder,omitempty"`
	Memories int       `json:"memories"`
	Queries  int       `json:"queries"`
}

// MemrankInfo is the configuration of the memrank row.
type MemrankInfo struct {
	Setting Setting `json:"setting"`
	Weights Weights `json:"weights"`
}

// Weights are the confidence formula's weights, as JSON.
type Weights struct {
	Source     float64 `json:"source"`
	Repetition float64 `json:"repetition"`
	Extractor  float64 `json:"extractor"`
	Type       float64 `json:"type"`
}

func newWeights(w scoring.Weights) Weights {
	return Weights{Source: w.Source, Repetition: w.Repetition, Extractor: w.Extractor, Type: w.Type}
}

func (w Weights) String() string {
	return fmt.Sprintf("source %s, repetition %s, extractor %s, type %s", fmtF(w.Source), fmtF(w.Repetition), fmtF(w.Extractor), fmtF(w.Type))
}

// MarshalJSON writes the setting with named guard fields.
func (s Setting) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		GuardOff          bool    `json:"guard_off"`
		GuardBand         float64 `json:"guard_band"`
		GuardFloor        float64 `json:"guard_floor"`
		GuardRelativeBand float64 `json:"guard_relative_band"`
		ConfidenceWeight  float64 `json:"confidence_weight"`
		FreshnessWeight   float64 `json:"freshness_weight"`
		AccessWeight      float64 `json:"access_weight"`
		FocusFloor        float64 `json:"focus_floor"`
		GateOff           bool    `json:"gate_off,omitempty"`
	}{s.Guard.Off, s.Guard.Band, s.Guard.Floor, s.Guard.RelativeBand, s.ConfidenceWeight, s.FreshnessWeight, s.AccessWeight, s.FocusFloor, s.GateOff})
}

// Row is one variant's numbers.
type Row struct {
	Variant
	Summary
	// PassedThrough counts the queries a memrank ranker answered in the
	// store's order, and PassThroughReason says why (the first reason).
	PassedThrough     int    `json:"passed_through"`
	PassThroughReason string `json:"pass_through_reason,omitempty"`
}

// QueryRow is one query's numbers, by variant name.
type QueryRow struct {
	ID            string                  `json:"id"`
	Topic         string                  `json:"topic,omitempty"`
	RelevantFacts int                     `json:"relevant_facts"`
	Metrics       map[string]QueryMetrics `json:"metrics"`
}

// FitReport is the weight fit and its held-out comparison.
type FitReport struct {
	Collection string `json:"collection"`
	Candidates int    `json:"candidates"`
	// TrainPairs and TestPairs are the (correct, incorrect) pairs of each
	// split.
	TrainPairs  int      `json:"train_pairs"`
	TestPairs   int      `json:"test_pairs"`
	TestQueries int      `json:"test_queries"`
	Rows        []FitRow `json:"rows"` // the configured weights, then the fitted ones
	Notes       []string `json:"notes,omitempty"`
}

// FitRow is one set of weights: its inversion fractions and its metrics on
// the held-out queries.
type FitRow struct {
	Name            string       `json:"name"`
	Label           string       `json:"label"`
	Weights         Weights      `json:"weights"`
	TrainInversions jsonFloat    `json:"train_inversion_fraction"`
	TestInversions  jsonFloat    `json:"test_inversion_fraction"`
	Test            *TestMetrics `json:"test,omitempty"`
}

// TestMetrics are a ranker's metrics over the held-out queries.
type TestMetrics struct {
	Queries      int     `json:"queries"`
	WithRelevant int     `json:"queries_with_relevant"`
	P5           float64 `json:"p_at_5"`
	P10          float64 `json:"p_at_10"`
	NDCG10       float64 `json:"ndcg_at_10"`
}

// jsonFloat is a float64 written as null when it is not a number (no pair
// to count).
type jsonFloat = evalfmt.Float

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteTable writes the report as aligned text.
func (r *Report) WriteTable(w io.Writer) error {
	split := "split " + r.Split
	if r.Split != PartAll.String() {
		split += fmt.Sprintf(" (split seed %d)", r.SplitSeed)
	}
	limit := "limit per query"
	if r.Limit > 0 {
		limit = fmt.Sprintf("limit %d", r.Limit)
	}
	queries, with := 0, 0
	if len(r.Rows) > 0 {
		queries, with = r.Rows[0].Queries, r.Rows[0].WithRelevant
	}
	fmt.Fprintf(w, "set %s (seed %d), %s: %s (%d with relevant memories), %s, now %s\n",
		r.Set.Name, r.Set.Seed, split, evalfmt.Plural(queries, "query", "queries"), with, limit, r.Set.Now.UTC().Format(time.RFC3339))
	if r.Memrank != nil {
		fmt.Fprintf(w, "memrank: %s; weights %s\n", r.Memrank.Setting, r.Memrank.Weights)
	}
	fmt.Fprintf(w, "asked: %s, collection %q\n", r.Where, r.Collection)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tP@5\tP@10\tnDCG@10\tMRR\tinversions\toff-topic\tlifted\twithheld\treads rel/irr")
	for _, row := range r.Rows {
		withheld, reads := "-", "-"
		if !row.Raw {
			withheld = strconv.Itoa(row.Withheld)
		}
		if row.Reads {
			reads = strconv.Itoa(row.ReadsRelevant) + "/" + strconv.Itoa(row.ReadsIrrelevant)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", row.Label, evalfmt.F3(row.P5), evalfmt.F3(row.P10), evalfmt.F3(row.NDCG10), evalfmt.F3(row.MRR),
			row.Inversions, row.OffTopic, row.Lifted, withheld, reads)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Fit != nil {
		if err := r.Fit.writeTable(w, r.SplitSeed); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func (f *FitReport) writeTable(w io.Writer, seed int64) error {
	with := 0
	if len(f.Rows) > 0 && f.Rows[0].Test != nil {
		with = f.Rows[0].Test.WithRelevant
	}
	fmt.Fprintf(w, "\nconfidence weights fitted on the train split (split seed %d): %s (correct, incorrect), %d weight vectors tried\n",
		seed, evalfmt.Plural(f.TrainPairs, "pair", "pairs"), f.Candidates)
	fmt.Fprintf(w, "held out (test split): %s, %s (%d with relevant memories), asked on collection %q (no stored confidences)\n",
		evalfmt.Plural(f.TestPairs, "pair", "pairs"), evalfmt.Plural(f.TestQueries, "query", "queries"), with, f.Collection)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "weights\tsource\trepetition\textractor\ttype\ttrain inversions\ttest inversions\tP@5\tP@10\tnDCG@10")
	for _, row := range f.Rows {
		p5, p10, ndcg := "-", "-", "-"
		if t := row.Test; t != nil {
			p5, p10, ndcg = evalfmt.F3(t.P5), evalfmt.F3(t.P10), evalfmt.F3(t.NDCG10)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\n", strings.TrimSuffix(row.Label, " weights"),
			row.Weights.Source, row.Weights.Repetition, row.Weights.Extractor, row.Weights.Type,
			evalfmt.F3(float64(row.TrainInversions)), evalfmt.F3(float64(row.TestInversions)), p5, p10, ndcg)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range f.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}
