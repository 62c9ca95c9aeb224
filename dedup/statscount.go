package dedup

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// The counted stats answer from payload indexes: every figure is one exact
// Count of a filter the indexes resolve (tier, confidence, memory_type,
// retrievable and the tenancy key), so the cost does not grow with the
// payloads, only with the number of counts. Confidence is counted at
// cumulative edges 0.01 apart; the histogram and the buckets are
// differences of those counts, and the average is taken at the middle of
// each 0.01 bin, so it is within 0.005 of the exact mean.

// histogramSteps is the number of 0.01 edges the confidence is counted at.
const histogramSteps = 100

// countWorkers bounds the counts in flight at once: enough to overlap the
// round trips, few enough not to crowd out the requests being served.
const countWorkers = 4

// countJob is one Count: the filter, and where its answer goes.
type countJob struct {
	filter *qdrant.Filter
	out    *uint64
}

// countedStats fills st from indexed counts.
func (e *Engine) countedStats(ctx context.Context, collection, tenant string, base []*qdrant.Condition, st *Stats) error {
	k := func(f memory.Field) string { return e.codec.Key(f) }
	// A memory is out of answers when it is stored as not retrievable: the
	// write path sets that when it supersedes one, a person or a review
	// when it archives one (tier archived too). The tier alone is a label:
	// age never takes a memory out of answers.
	archived := qdrant.NewMatchKeywords(k(memory.FieldTier), "archived", "archive")
	notRetrievable := qdrant.NewMatchBool(k(memory.FieldRetrievable), false)
	// kept: the memories answers draw from, the population of the average,
	// the buckets, the histogram, the tiers and the types.
	kept := func(must ...*qdrant.Condition) *qdrant.Filter {
		return &qdrant.Filter{Must: append(slices.Clone(base), must...), MustNot: []*qdrant.Condition{notRetrievable}}
	}
	var total, keptN, arch, scored uint64
	jobs := []countJob{
		{&qdrant.Filter{Must: base}, &total},
		{kept(), &keptN},
		{&qdrant.Filter{Must: append(slices.Clone(base), archived, notRetrievable)}, &arch},
	}
	tierNames := []string{"dormant", "stale", "archived"}
	tiers := make([]uint64, len(tierNames))
	for i, name := range tierNames {
		match := qdrant.NewMatchKeyword(k(memory.FieldTier), name)
		if name == "archived" {
			match = archived
		}
		jobs = append(jobs, countJob{kept(match), &tiers[i]})
	}
	// A memory is counted as scored when it has a stored confidence: the
	// write path and backfill always store one. Points of other tools
	// without one are "unscored" here; the scan computes theirs.
	hasConf := func(t float64) *qdrant.Condition {
		return qdrant.NewRange(k(memory.FieldConfidence), &qdrant.Range{Gte: &t})
	}
	jobs = append(jobs, countJob{kept(hasConf(0)), &scored})
	typeNames := slices.Sorted(maps.Keys(e.params.TypePriors))
	types := make([]uint64, len(typeNames))
	for i, name := range typeNames {
		jobs = append(jobs, countJob{kept(hasConf(0), qdrant.NewMatchKeyword(k(memory.FieldMemoryType), name)), &types[i]})
	}
	// atLeast[i]: kept memories with confidence >= edges[i].
	edges := confidenceEdges(e.params.StatsMedium, e.params.StatsHigh)
	atLeast := make([]uint64, len(edges))
	for i, edge := range edges {
		jobs = append(jobs, countJob{kept(hasConf(edge)), &atLeast[i]})
	}
	if err := e.runCounts(ctx, collection, jobs); err != nil {
		return err
	}

	st.Method = "counted"
	st.Memories = int(keptN)
	st.Archived = int(arch)
	st.Superseded = max(int(total)-st.Memories-st.Archived, 0)
	active := st.Memories
	for i, name := range tierNames {
		st.Tiers[name] = int(tiers[i])
		active -= int(tiers[i])
	}
	st.Tiers["active"] = max(active, 0)
	other := int(scored)
	for i, name := range typeNames {
		if types[i] > 0 {
			st.Types[name] = int(types[i])
			other -= int(types[i])
		}
	}
	if other > 0 {
		// Types written by other tools in another spelling: the scan
		// (?exact=true) reads them as the decoder does.
		st.Types["other"] = other
	}
	if unscored := st.Memories - int(scored); unscored > 0 {
		st.Buckets["unscored"] = unscored
		st.Types["unscored"] = unscored
	}
	st.fromEdges(scored, edges, atLeast, e.params.StatsMedium, e.params.StatsHigh)
	if e.cfg.TiersAsOf != nil {
		at, ok, err := e.cfg.TiersAsOf(ctx, collection, tenant)
		if err != nil {
			return fmt.Errorf("dedup: when the tiers of %s were computed: %w", collection, err)
		}
		if ok {
			st.TiersAsOf = at
		}
	}
	return nil
}

// statsIndexed reports whether the collection has every payload index the
// counts filter on.
func (e *Engine) statsIndexed(ctx context.Context, collection string) (bool, error) {
	info, err := e.store.GetCollectionInfo(ctx, collection)
	if err != nil {
		if isNotFound(err) {
			return false, fmt.Errorf("%w: collection %s", ErrNotFound, collection)
		}
		return false, fmt.Errorf("dedup: read %s: %w", collection, err)
	}
	schema := info.GetPayloadSchema()
	for _, x := range e.memoryIndexes() {
		if x.key == e.codec.Key(memory.FieldTextHash) || x.key == e.codec.Key(memory.FieldSessionIDs) {
			continue // the write path's look-ups, not the counts
		}
		if _, ok := schema[x.key]; !ok {
			return false, nil
		}
	}
	return true, nil
}

// confidenceEdges are the cumulative edges: 0.01 apart from 0.01 to 1, and
// the two bucket thresholds when they fall between.
func confidenceEdges(medium, high float64) []float64 {
	edges := make([]float64, 0, histogramSteps+2)
	for i := 1; i <= histogramSteps; i++ {
		edges = append(edges, float64(i)/histogramSteps)
	}
	for _, t := range []float64{medium, high} {
		if t > 0 && t <= 1 && !slices.ContainsFunc(edges, func(e float64) bool { return math.Abs(e-t) < 1e-12 }) {
			edges = append(edges, t)
		}
	}
	slices.Sort(edges)
	return edges
}

// fromEdges turns the cumulative counts into buckets, the ten-bin histogram
// and the average; scored is the count at 0.
func (st *Stats) fromEdges(scored uint64, edges []float64, atLeast []uint64, medium, high float64) {
	at := func(t float64) uint64 {
		if t <= 0 {
			return scored
		}
		i := slices.IndexFunc(edges, func(e float64) bool { return math.Abs(e-t) < 1e-12 })
		if i < 0 {
			return 0
		}
		return atLeast[i]
	}
	st.Buckets["high"] = int(at(high))
	st.Buckets["medium"] = int(at(medium) - at(high))
	st.Buckets["low"] = int(scored - at(medium))
	st.Histogram = make([]int, 10)
	for b := range st.Histogram {
		lo := at(float64(b) / 10)
		hi := uint64(0)
		if b < 9 {
			hi = at(float64(b+1) / 10)
		}
		st.Histogram[b] = int(lo - hi)
	}
	if scored == 0 {
		st.Average = math.NaN()
		return
	}
	var sum float64
	prev := scored
	for i := 1; i <= histogramSteps; i++ {
		next := uint64(0)
		if i < histogramSteps {
			next = at(float64(i) / histogramSteps)
		}
		sum += float64(prev-next) * (float64(i) - 0.5) / histogramSteps
		prev = next
	}
	st.Average = sum / float64(scored)
}

// runCounts runs the counts, countWorkers at a time; the first error
// cancels the rest.
func (e *Engine) runCounts(ctx context.Context, collection string, jobs []countJob) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan countJob)
	var wg sync.WaitGroup
	exact := true
	for range min(countWorkers, len(jobs)) {
		wg.Go(func() {
			for j := range next {
				n, err := e.store.Count(ctx, &qdrant.CountPoints{CollectionName: collection, Filter: j.filter, Exact: &exact})
				if err != nil {
					cancel(err)
					continue
				}
				*j.out = n
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("%w: collection %s", ErrNotFound, collection)
		}
		return fmt.Errorf("dedup: count %s: %w", collection, err)
	}
	return nil
}
