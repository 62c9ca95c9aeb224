package eval

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/scoring"
)

// Config is one evaluation. Exactly one of Store (memrank's rankers built
// here, over a store) and Remote (a running memrank) is set.
type Config struct {
	Set *Set
	// Part is the side of the split whose queries are asked, split with
	// Seed.
	Part Part
	Seed int64
	// Limit replaces every query's limit when positive.
	Limit      int
	Collection string
	// Where says where the queries went, for the report ("the embedded
	// store in /tmp/x", "Qdrant at host:6334", "memrank at http://...").
	Where string

	// Store holds the collection (created and loaded from the set when it
	// does not exist); Embedder embeds the texts of items without a vector.
	Store    Store
	Embedder embed.Embedder
	// Rankers is the configured read path; Base the memrank row's guard and
	// confidence weight, which the other variants change.
	Rankers RankerConfig
	Base    Setting
	// Fit fits the confidence weights on the train split and compares them
	// with the configured ones on the test split (Store only).
	Fit bool

	// Remote is a running memrank: the rows are raw (mode off) and memrank
	// as configured on the server.
	Remote Retriever

	// Concurrency is the queries in flight (default GOMAXPROCS, at most 8).
	Concurrency int
	// Progress, when not nil, is told of the work done in each stage
	// ("loading", "ranking", "fitting"...). Calls are serialised.
	Progress func(stage string, done, total int)
}

// FitSuffix ends the name of the collection the weight fit loads: the
// memories without their stored confidence, so that each ranker computes
// confidence from the fields with its own weights.
const FitSuffix = "_fit"

// Run evaluates the set and returns the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	set := cfg.Set
	switch {
	case set == nil:
		return nil, errors.New("eval: no set")
	case (cfg.Store == nil) == (cfg.Remote == nil):
		return nil, errors.New("eval: give a store or a running memrank, not both")
	case cfg.Fit && cfg.Store == nil:
		return nil, errors.New("eval: the weight fit needs a store (it loads its own collection and builds its own rankers)")
	case cfg.Limit < 0 || cfg.Limit > MaxLimit:
		return nil, fmt.Errorf("eval: limit %d is outside [1, %d]", cfg.Limit, MaxLimit)
	case cfg.Collection == "":
		return nil, errors.New("eval: no collection")
	}
	r := &runner{cfg: cfg, labels: NewLabels(set), split: set.Split(cfg.Seed)}
	r.progress = func(string, int, int) {}
	if cfg.Progress != nil {
		var mu sync.Mutex
		r.progress = func(stage string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			cfg.Progress(stage, done, total)
		}
	}
	queries := r.queries(cfg.Part)
	if len(queries) == 0 {
		return nil, fmt.Errorf("eval: the %s split has no query", cfg.Part)
	}
	rep := r.newReport(queries)

	var rows []row
	if cfg.Store != nil {
		if err := set.EmbedTexts(ctx, cfg.Embedder); err != nil {
			return nil, err
		}
		created, err := Load(ctx, cfg.Store, set, cfg.Collection, "", func(done, total int) { r.progress("loading", done, total) })
		if err != nil {
			return nil, err
		}
		if !created {
			rep.Notes = append(rep.Notes, fmt.Sprintf("collection %q existed: used as it is, nothing written", cfg.Collection))
		}
		for _, v := range Variants(cfg.Base) {
			if v.Raw {
				rows = append(rows, row{v, StoreRanker{Source: cfg.Store, Collection: cfg.Collection}})
				continue
			}
			rk, err := cfg.Rankers.New(cfg.Store, *v.Setting, nil, set.Header.Now)
			if err != nil {
				return nil, fmt.Errorf("eval: %s: %w", v.Label, err)
			}
			rows = append(rows, row{v, MemrankRanker{Ranker: rk, Collection: cfg.Collection}})
		}
	} else {
		rep.Notes = append(rep.Notes, "a running memrank ranks with its own clock, not the set's now: freshness differs from an in-process eval")
		rows = []row{
			{Variant{Name: "raw", Label: "raw similarity", Raw: true}, remoteRanker{r: cfg.Remote, collection: cfg.Collection, mode: "off"}},
			{Variant{Name: "memrank", Label: "memrank (as the server is configured)"}, remoteRanker{r: cfg.Remote, collection: cfg.Collection}},
		}
	}
	res, err := r.evaluate(ctx, "ranking", queries, rows, true)
	if err != nil {
		return nil, err
	}
	rep.Rows = res.rows
	rep.PerQuery = res.perQuery
	for _, rw := range rep.Rows {
		if rw.PassedThrough > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d of %d queries were answered in the store's order (%s)",
				rw.Label, rw.PassedThrough, rw.Queries, rw.PassThroughReason))
		}
	}
	if cfg.Fit {
		if rep.Fit, err = r.fit(ctx); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

type runner struct {
	cfg      Config
	labels   *Labels
	split    Split
	progress func(stage string, done, total int)
}

// row is a variant and the ranker behind it.
type row struct {
	v Variant
	r Ranker
}

// queries are the set's queries of part, in file order.
func (r *runner) queries(part Part) []*Query {
	var out []*Query
	for i := range r.cfg.Set.Queries {
		if q := &r.cfg.Set.Queries[i]; r.split.In(q.Unit(), part) {
			out = append(out, q)
		}
	}
	return out
}

func (r *runner) limit(q *Query) int {
	if r.cfg.Limit > 0 {
		return r.cfg.Limit
	}
	return q.Limit
}

type results struct {
	rows     []Row
	perQuery []QueryRow
}

// evaluate asks every query of every row, and scores the rankings. With
// raw, rows[0] is the raw ranking the others' added inversions are counted
// against.
func (r *runner) evaluate(ctx context.Context, stage string, queries []*Query, rows []row, raw bool) (results, error) {
	judgements := make([]Judgement, len(queries))
	for i, q := range queries {
		judgements[i] = r.labels.Judge(q)
	}
	metrics := make([][]QueryMetrics, len(rows)) // [row][query]
	counts := make([]bool, len(rows))            // the row's ranker reports its reads
	passed := make([][]string, len(rows))
	for i := range rows {
		metrics[i] = make([]QueryMetrics, len(queries))
		passed[i] = make([]string, len(queries))
	}
	total := len(queries) * len(rows)
	done := 0
	r.progress(stage, 0, total)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency())
	for qi, q := range queries {
		g.Go(func() error {
			var rawList Listing
			for ri, rw := range rows {
				ranking, err := rw.r.Rank(gctx, q, r.limit(q))
				if err != nil {
					return fmt.Errorf("eval: query %q, %s: %w", q.ID, rw.v.Label, err)
				}
				list := r.labels.List(ranking.IDs)
				if ri == 0 && raw {
					rawList = list
				}
				metrics[ri][qi] = judgements[qi].Score(r.labels, list, rawList)
				if ranking.Counted != nil {
					judgements[qi].Reads(r.labels, ranking.Counted, &metrics[ri][qi])
					mu.Lock()
					counts[ri] = true
					mu.Unlock()
				}
				passed[ri][qi] = ranking.PassThrough
			}
			mu.Lock()
			done += len(rows)
			r.progress(stage, done, total)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return results{}, err
	}
	var out results
	for ri, rw := range rows {
		sum := Row{Variant: rw.v, Summary: Summarise(judgements, metrics[ri])}
		sum.Reads = counts[ri]
		for _, why := range passed[ri] {
			if why != "" {
				sum.PassedThrough++
				if sum.PassThroughReason == "" {
					sum.PassThroughReason = why
				}
			}
		}
		out.rows = append(out.rows, sum)
	}
	for qi, q := range queries {
		qr := QueryRow{ID: q.ID, Topic: q.Topic, RelevantFacts: len(judgements[qi].Grades), Metrics: map[string]QueryMetrics{}}
		for ri, rw := range rows {
			qr.Metrics[rw.v.Name] = metrics[ri][qi]
		}
		out.perQuery = append(out.perQuery, qr)
	}
	return out, nil
}

func (r *runner) concurrency() int {
	if r.cfg.Concurrency > 0 {
		return r.cfg.Concurrency
	}
	return min(runtime.GOMAXPROCS(0), 8)
}

func (r *runner) newReport(queries []*Query) *Report {
	set := r.cfg.Set
	rep := &Report{
		Set: SetInfo{File: set.File, Name: set.Header.Name, Version: set.Header.Version, Seed: set.Header.Seed,
			Now: set.Header.Now, Dim: set.Header.Dim, Embedder: set.Header.Embedder,
			Memories: len(set.Memories), Queries: len(set.Queries)},
		Split:      r.cfg.Part.String(),
		SplitSeed:  r.cfg.Seed,
		Where:      r.cfg.Where,
		Collection: r.cfg.Collection,
		Limit:      r.cfg.Limit,
	}
	if rep.Limit == 0 {
		for i, q := range queries {
			if i == 0 {
				rep.Limit = q.Limit
			} else if q.Limit != rep.Limit {
				rep.Limit = 0 // each query's own
				break
			}
		}
	}
	if r.cfg.Remote == nil {
		rep.Memrank = &MemrankInfo{Setting: r.cfg.Base, Weights: newWeights(r.cfg.Rankers.params().Weights)}
	}
	return rep
}

// fit fits the confidence weights on the train split and compares them with
// the configured ones on the test split, over a copy of the collection
// without stored confidences.
func (r *runner) fit(ctx context.Context) (*FitReport, error) {
	cfg := r.cfg
	params := cfg.Rankers.params()
	codec, err := cfg.Rankers.codec(params)
	if err != nil {
		return nil, err
	}
	keys := codec.Keys()
	train := FitItems(cfg.Set, codec, r.split, PartTrain)
	test := FitItems(cfg.Set, codec, r.split, PartTest)
	r.progress("fitting", 0, 1)
	best, err := Fit(train, params.Weights, params.Grounding)
	if err != nil {
		return nil, fmt.Errorf("eval: fit on the train split: %w", err)
	}
	r.progress("fitting", 1, 1)

	collection := cfg.Collection + FitSuffix
	fr := &FitReport{Collection: collection, Candidates: best.Candidates}
	created, err := Load(ctx, cfg.Store, cfg.Set, collection, keys.Confidence, func(done, total int) { r.progress("loading the fit's copy", done, total) })
	if err != nil {
		return nil, err
	}
	if !created {
		fr.Notes = append(fr.Notes, fmt.Sprintf("collection %q existed: used as it is, nothing written (it must hold the memories without %q)", collection, keys.Confidence))
	}
	var rows []row
	for _, w := range []struct {
		name, label string
		w           scoring.Weights
	}{{"default", "configured weights", params.Weights}, {"fitted", "fitted weights", best.Weights}} {
		rk, err := cfg.Rankers.New(cfg.Store, cfg.Base, &w.w, cfg.Set.Header.Now)
		if err != nil {
			return nil, fmt.Errorf("eval: fit: %s: %w", w.label, err)
		}
		rows = append(rows, row{Variant{Name: w.name, Label: w.label}, MemrankRanker{Ranker: rk, Collection: collection}})
		frow := FitRow{Name: w.name, Label: w.label, Weights: newWeights(w.w)}
		var f float64
		f, fr.TrainPairs = InversionFraction(train, w.w, params.Grounding)
		frow.TrainInversions = jsonFloat(f)
		f, fr.TestPairs = InversionFraction(test, w.w, params.Grounding)
		frow.TestInversions = jsonFloat(f)
		fr.Rows = append(fr.Rows, frow)
	}
	queries := r.queries(PartTest)
	fr.TestQueries = len(queries)
	if len(queries) == 0 {
		fr.Notes = append(fr.Notes, "the test split has no query: no held-out metrics")
		return fr, nil
	}
	res, err := r.evaluate(ctx, "ranking held-out queries", queries, rows, false)
	if err != nil {
		return nil, err
	}
	for i := range fr.Rows {
		s := res.rows[i].Summary
		fr.Rows[i].Test = &TestMetrics{Queries: s.Queries, WithRelevant: s.WithRelevant, P5: s.P5, P10: s.P10, NDCG10: s.NDCG10}
	}
	return fr, nil
}
