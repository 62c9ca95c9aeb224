// Package observebench measures the write path: observe latency on a
// collection that already holds many memories, and how often a mixed stream
// of observations reaches the LLM judge. `memrank bench observe` and its
// tests run it; the README records its figures.
package observebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
)

// Options configures a run. The zero value of each field means its default.
type Options struct {
	Memories     int // memories loaded before timing; default 10000
	Observations int // timed observations; default 1000
	MixSize      int // observations of the judge-rate fixture; default 1000
	Dimensions   int // local embedder dimensions; default 384
	// Embedder is the local driver: embed.DriverSemantic (the default) or
	// embed.DriverLocal (lexical).
	Embedder   string
	Collection string // default "bench_memories"
	Seed       uint64 // fixture seed; default 1
	// ObservationIDs sends each timed observation with an observation_id,
	// as callers that retry do: the write path then also looks up whether it
	// was seen before.
	ObservationIDs bool
	// Writers is how many writers observe at once in the throughput phase,
	// after the one-writer timed phase; default 8; negative: no such phase.
	Writers int
	// Progress, when set, is called as the preload advances.
	Progress func(done, total int)
	// Floor, when set, measures the disk's single-commit floor; it is
	// called just before and just after the timed phase, so that the goal
	// line compares against the disk as it was during the run.
	Floor func(ctx context.Context) ([]time.Duration, error)
	// Commits, when set, reads the store's commit totals; it is called
	// just before and just after the timed phase, whose commits the result
	// then describes.
	Commits func() store.CommitStats
}

func (o Options) withDefaults() Options {
	if o.Memories == 0 {
		o.Memories = 10000
	}
	if o.Observations == 0 {
		o.Observations = 1000
	}
	if o.MixSize == 0 {
		o.MixSize = 1000
	}
	if o.Dimensions == 0 {
		o.Dimensions = 384
	}
	if o.Collection == "" {
		o.Collection = "bench_memories"
	}
	if o.Embedder == "" {
		o.Embedder = embed.DriverSemantic
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Writers == 0 {
		o.Writers = 8
	}
	return o
}

// Result is what a run measured.
type Result struct {
	Model        string // the embedder's
	Memories     int
	Observations int
	// ObservationIDs: each observation carried an observation_id.
	ObservationIDs bool
	P50, P99       time.Duration // observe latency without the judge
	Mean           time.Duration
	Decisions      map[dedup.Decision]int // of the timed observations
	// Calls are the upstream calls the timed observations made, by kind:
	// where an observation's time goes.
	Calls []Call

	// Floor is the p50 of a tiny fsync'd commit in the store's directory
	// (zero when not measured); StoreFloor that of a one-point upsert
	// through the same client, a write's floor through the gRPC path.
	Floor, StoreFloor time.Duration
	Synced            bool // the store fsyncs its commits
	// Commits are the store's commits during the timed phase (zero when
	// not read): how many, and what they wrote and took.
	Commits store.CommitStats

	// The throughput phase: Writers writers at once on the same collection.
	Writers                int
	Throughput             float64 // observations per second
	WritersP50, WritersP99 time.Duration

	Mix          Mix                    // the judge-rate fixture's make-up
	MixDecisions map[dedup.Decision]int // its decisions
	JudgeCalls   int                    // judge calls over the fixture
	JudgedByKind Mix                    // observations that reached the judge, by kind
	JudgeRate    float64                // JudgeCalls / fixture observations
	CacheHits    int64
}

// Mix counts the kinds of observation in the judge-rate fixture.
type Mix struct {
	New, Repeats, Paraphrases, NearMisses, Contradictions int
}

// Run loads opts.Memories memories into a fresh collection through st,
// times opts.Observations observations against it with opts.Embedder
// and no judge, then runs the mixed fixture on another fresh collection
// with a counting judge.
func Run(ctx context.Context, st dedup.Store, codec *memory.Codec, opts Options) (Result, error) {
	opts = opts.withDefaults()
	var emb embed.Embedder
	var err error
	switch opts.Embedder {
	case embed.DriverSemantic:
		emb, err = embed.NewSemantic(opts.Dimensions)
	case embed.DriverLocal:
		emb, err = embed.NewLocal(opts.Dimensions)
	default:
		err = fmt.Errorf("observebench: embedder %q is not a local driver (%s or %s)", opts.Embedder, embed.DriverSemantic, embed.DriverLocal)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Model: emb.Model(), Memories: opts.Memories, Observations: opts.Observations,
		ObservationIDs: opts.ObservationIDs, Decisions: map[dedup.Decision]int{}}
	calls := newTiming(st, opts.Collection)
	eng, err := dedup.New(calls, dedup.Config{Codec: codec, Embedder: emb, RequireSurfaceChange: true})
	if err != nil {
		return res, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 2))
	if err := preload(ctx, st, codec, emb, opts, rng); err != nil {
		return res, err
	}
	// The write path's first observation on a collection creates its
	// payload indexes (seconds at 10k memories), which a deployment did
	// long ago: one observation outside the timing does it.
	if opts.Memories > 0 {
		if _, err := eng.Observe(ctx, dedup.Observation{Collection: opts.Collection, Source: "direct", ExtractorModel: "gpt-4o",
			SessionID: "warm-up", Text: fact(0)}); err != nil {
			return res, fmt.Errorf("observebench: warm-up observation: %w", err)
		}
	}
	var floors []time.Duration
	if opts.Floor != nil {
		if floors, err = opts.Floor(ctx); err != nil {
			return res, fmt.Errorf("observebench: commit floor: %w", err)
		}
	}
	var commits store.CommitStats
	if opts.Commits != nil {
		commits = opts.Commits()
	}
	calls.setOn(true)
	err = timed(ctx, eng, opts, rng, &res)
	calls.setOn(false)
	if err != nil {
		return res, err
	}
	if opts.Commits != nil {
		after := opts.Commits()
		res.Commits = store.CommitStats{Commits: after.Commits - commits.Commits, Pages: after.Pages - commits.Pages,
			Writes: after.Writes - commits.Writes, Time: after.Time - commits.Time}
	}
	res.Calls = calls.report(opts.Observations)
	if opts.Floor != nil {
		after, err := opts.Floor(ctx)
		if err != nil {
			return res, fmt.Errorf("observebench: commit floor: %w", err)
		}
		res.Floor = median(append(floors, after...))
	}
	if res.StoreFloor, err = storeFloor(ctx, st, opts.Collection+"_floor"); err != nil {
		return res, err
	}
	if opts.Writers > 0 {
		if err := concurrent(ctx, eng, opts, &res); err != nil {
			return res, err
		}
	}
	if err := judgeRate(ctx, st, codec, emb, opts, &res); err != nil {
		return res, err
	}
	return res, nil
}

// timed observes opts.Observations facts one at a time, half repeats of
// stored memories and half new texts (other qualifiers of the stored
// facts: the lexical embedder keeps them apart, the semantic one mostly
// folds them into the stored memories as re-observations).
func timed(ctx context.Context, eng *dedup.Engine, opts Options, rng *rand.Rand, res *Result) error {
	lat := make([]time.Duration, 0, opts.Observations)
	start := time.Now()
	for i := range opts.Observations {
		obs := dedup.Observation{Collection: opts.Collection, Source: "direct", ExtractorModel: "gpt-4o",
			SessionID: fmt.Sprint("timed-", i%50), TurnID: fmt.Sprint(i)}
		if opts.ObservationIDs {
			obs.ObservationID = fmt.Sprint("timed-", i)
		}
		if i%2 == 0 {
			obs.Text = fact(rng.IntN(opts.Memories)) // a repeat of a stored memory
		} else {
			obs.Text = fact(opts.Memories + i) // a new memory
		}
		t := time.Now()
		out, err := eng.Observe(ctx, obs)
		if err != nil {
			return fmt.Errorf("observe %d: %w", i, err)
		}
		lat = append(lat, time.Since(t))
		res.Decisions[out.Decision]++
	}
	if len(lat) == 0 {
		return nil
	}
	res.Mean = time.Since(start) / time.Duration(len(lat))
	res.P50, res.P99 = percentiles(lat)
	return nil
}

// concurrent has opts.Writers writers observe opts.Observations facts
// between them into the same collection (writes to one collection are
// serialised by the engine; what they can share is everything outside that
// lock, and the store's commits), and measures the throughput.
func concurrent(ctx context.Context, eng *dedup.Engine, opts Options, res *Result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := opts.Writers
	lats := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(opts.Seed, uint64(10+w)))
			for i := w; i < opts.Observations; i += n {
				obs := dedup.Observation{Collection: opts.Collection, Source: "direct", ExtractorModel: "gpt-4o",
					SessionID: fmt.Sprint("writer-", w, "-", i%50), TurnID: fmt.Sprint(i)}
				if opts.ObservationIDs {
					obs.ObservationID = fmt.Sprint("writer-", i)
				}
				if i%2 == 0 {
					obs.Text = fact(rng.IntN(opts.Memories))
				} else {
					obs.Text = fact(opts.Memories + opts.Observations + i)
				}
				t := time.Now()
				if _, err := eng.Observe(ctx, obs); err != nil {
					errs[w] = fmt.Errorf("writer %d, observation %d: %w", w, i, err)
					cancel()
					return
				}
				lats[w] = append(lats[w], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	all := slices.Concat(lats...)
	if len(all) == 0 {
		return nil
	}
	res.Writers = n
	res.Throughput = float64(len(all)) / elapsed.Seconds()
	res.WritersP50, res.WritersP99 = percentiles(all)
	return nil
}

// storeFloor is the p50 of floorCommits one-point upserts into a scratch
// collection: the cheapest durable write through the write path's client.
func storeFloor(ctx context.Context, store dedup.Store, coll string) (time.Duration, error) {
	if err := store.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: coll,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 1, Distance: qdrant.Distance_Cosine})}); err != nil {
		return 0, fmt.Errorf("observebench: floor collection: %w", err)
	}
	wait := true
	lat := make([]time.Duration, 0, floorCommits)
	for i := range floorCommits {
		t := time.Now()
		if _, err := store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: []*qdrant.PointStruct{{
			Id: qdrant.NewIDNum(uint64(i % 8)), Vectors: qdrant.NewVectorsDense([]float32{1}),
			Payload: map[string]*qdrant.Value{"n": qdrant.NewValueInt(int64(i))}}}}); err != nil {
			return 0, fmt.Errorf("observebench: floor upsert: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	return median(lat), nil
}

// floorCommits is how many commits each floor measurement times.
const floorCommits = 200

func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lat)
	return lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	p50, _ := percentiles(slices.Clone(d))
	return p50
}

// Facts are generated from tables, so that 10k memories are distinct and
// lexically varied.
var (
	subjects = []string{"Dana", "Omar", "Priya", "Lena", "Tomas", "Aiko", "Femi", "Rosa", "Ivan", "Mei",
		"Kofi", "Sara", "Jonas", "Nadia", "Pablo", "Yuki", "Amara", "Erik", "Leila", "Hugo"}
	attrs = []struct{ verb, obj string }{
		{"works at", "company"}, {"lives in", "city"}, {"prefers", "drink"}, {"plays", "sport"},
		{"drives a", "car"}, {"reads", "genre"}, {"studies", "subject"}, {"listens to", "music"},
		{"cooks", "dish"}, {"collects", "thing"},
	}
	values = map[string][]string{
		"company": {"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Enterprises", "Cyberdyne", "Tyrell", "Soylent"},
		"city":    {"Lisbon", "Porto", "Berlin", "Osaka", "Lagos", "Lima", "Oslo", "Quito", "Hanoi", "Perth"},
		"drink":   {"green tea", "espresso", "oat lattes", "mint tea", "black coffee", "matcha", "chai", "cocoa", "kombucha", "lemonade"},
		"sport":   {"tennis", "chess", "squash", "padel", "football", "badminton", "golf", "rugby", "hockey", "volleyball"},
		"car":     {"Volvo", "Tesla", "Fiat", "Toyota", "Skoda", "Honda", "Mazda", "Kia", "Renault", "Subaru"},
		"genre":   {"science fiction", "crime novels", "poetry", "history books", "manga", "biographies", "fantasy", "philosophy", "travel writing", "thrillers"},
		"subject": {"linguistics", "statistics", "botany", "economics", "astronomy", "law", "medicine", "architecture", "geology", "music theory"},
		"music":   {"jazz", "techno", "opera", "afrobeat", "bossa nova", "metal", "folk", "hip hop", "ambient", "blues"},
		"dish":    {"ramen", "paella", "jollof rice", "moussaka", "pho", "risotto", "tagine", "dumplings", "curry", "ceviche"},
		"thing":   {"stamps", "vinyl records", "coins", "postcards", "fountain pens", "comics", "seashells", "maps", "teapots", "cameras"},
	}
	qualifiers = []string{"", " these days", " on weekends", " since last year", " mostly", " at home",
		" with friends", " every week", " for fun", " in winter"}
)

// fact i: a distinct statement for every i below 20 x 10 x 10 x 10 x 5.
func fact(i int) string {
	s := subjects[i%len(subjects)]
	i /= len(subjects)
	a := attrs[i%len(attrs)]
	i /= len(attrs)
	v := values[a.obj][i%10]
	i /= 10
	q := qualifiers[i%len(qualifiers)]
	i /= len(qualifiers)
	if i > 0 {
		q += [...]string{"", " apparently", " reportedly", " as she said", " as he said"}[i%5]
	}
	return s + " " + a.verb + " " + v + q
}

// preload writes opts.Memories memories with their vectors in batches, the
// way memrank would have stored them.
func preload(ctx context.Context, store dedup.Store, codec *memory.Codec, emb embed.Embedder, opts Options, rng *rand.Rand) error {
	if ok, err := store.CollectionExists(ctx, opts.Collection); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("observebench: collection %s exists; run on an empty store", opts.Collection)
	}
	if err := store.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: opts.Collection,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(opts.Dimensions), Distance: qdrant.Distance_Cosine})}); err != nil {
		return err
	}
	wait := true
	ft := qdrant.FieldType_FieldTypeKeyword
	if _, err := store.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: opts.Collection,
		FieldName: codec.Key(memory.FieldTextHash), FieldType: &ft, Wait: &wait}); err != nil {
		return err
	}
	now := time.Now().UTC()
	const batch = 500
	for lo := 0; lo < opts.Memories; lo += batch {
		hi := min(lo+batch, opts.Memories)
		texts := make([]string, 0, hi-lo)
		for i := lo; i < hi; i++ {
			texts = append(texts, fact(i))
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return err
		}
		pts := make([]*qdrant.PointStruct, len(texts))
		for j, text := range texts {
			at := now.Add(-time.Duration(rng.IntN(300*24)) * time.Hour)
			m := memory.Memory{Text: text, MemoryType: scoring.TypeFact, Source: scoring.SourceDirect,
				ExtractorModel: "gpt-4o", Observations: rng.IntN(4), CreatedAt: at, LastObservedAt: at,
				SessionIDs: []string{fmt.Sprint("load-", lo+j)}, Retrievable: true}
			m.Confidence, m.HasConfidence = 0.5+0.4*rng.Float64(), true
			pts[j] = &qdrant.PointStruct{Id: qdrant.NewID(dedup.MemoryID(opts.Collection, "", memory.TextHash(text))),
				Vectors: qdrant.NewVectorsDense(vecs[j]), Payload: codec.Encode(&m)}
		}
		if _, err := store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: opts.Collection, Wait: &wait, Points: pts}); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(hi, opts.Memories)
		}
	}
	return nil
}

// countingJudge answers from the fixture's ground truth and counts calls.
type countingJudge struct {
	calls atomic.Int64
	mu    sync.Mutex
	truth map[[2]string]dedup.Verdict
}

var _ dedup.Judge = (*countingJudge)(nil)

func (j *countingJudge) Judge(_ context.Context, a, b string) (dedup.Judgement, error) {
	j.calls.Add(1)
	j.mu.Lock()
	defer j.mu.Unlock()
	if v, ok := j.truth[[2]string{a, b}]; ok {
		return dedup.Judgement{Verdict: v, Reason: "fixture"}, nil
	}
	if v, ok := j.truth[[2]string{b, a}]; ok {
		return dedup.Judgement{Verdict: v, Reason: "fixture"}, nil
	}
	return dedup.Judgement{Verdict: dedup.VerdictDifferent, Reason: "fixture"}, nil
}

// judgeRate runs the mixed fixture: a stream of observations about 150
// facts, in sessions an hour apart, of five kinds:
//   - new: a fact seen for the first time;
//   - repeats: a fact seen before, in the same words (or differing only in
//     case and punctuation);
//   - paraphrases: a fact seen before, with a qualifier added or dropped;
//   - near misses: the same subject and attribute with another value
//     ("lives in Lisbon" / "lives in Porto"), or another number;
//   - contradictions: a negation of a fact seen before.
//
// Proportions follow what an agent's memory stream looks like: most
// observations restate what is known; conflicting ones are rare.
func judgeRate(ctx context.Context, store dedup.Store, codec *memory.Codec, emb embed.Embedder, opts Options, res *Result) error {
	judge := &countingJudge{truth: map[[2]string]dedup.Verdict{}}
	judging, err := dedup.NewJudging(dedup.JudgingConfig{Judge: judge, CacheSize: 10000, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	clock := time.Now().UTC().Add(-time.Duration(opts.MixSize) * time.Hour)
	var now atomic.Int64
	now.Store(clock.UnixNano())
	eng, err := dedup.New(store, dedup.Config{Codec: codec, Embedder: emb, Judging: judging, RequireSurfaceChange: true,
		Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	if err != nil {
		return err
	}
	coll := opts.Collection + "_mix"
	rng := rand.New(rand.NewPCG(opts.Seed, 3))
	var seen []int
	res.MixDecisions = map[dedup.Decision]int{}
	const facts = 150
	for i := range opts.MixSize {
		now.Add(int64(time.Hour))
		r := rng.IntN(100)
		var text string
		var kind *int
		switch {
		case len(seen) == 0 || r < 20 && len(seen) < facts:
			f := len(seen) * 7 // spread over subjects and attributes
			seen = append(seen, f)
			text = fact(f)
			res.Mix.New++
			kind = &res.JudgedByKind.New
		case r < 62:
			f := seen[rng.IntN(len(seen))]
			text = fact(f)
			if rng.IntN(2) == 0 {
				text = strings.ToUpper(text[:1]) + strings.ToLower(text[1:]) + "."
			}
			res.Mix.Repeats++
			kind = &res.JudgedByKind.Repeats
		case r < 92:
			f := seen[rng.IntN(len(seen))]
			text = fact(f) + qualifiers[1+rng.IntN(len(qualifiers)-1)]
			judge.mu.Lock()
			judge.truth[[2]string{fact(f), text}] = dedup.VerdictSame
			judge.mu.Unlock()
			res.Mix.Paraphrases++
			kind = &res.JudgedByKind.Paraphrases
		case r < 96:
			f := seen[rng.IntN(len(seen))]
			text = fact(f + len(subjects)*len(attrs)) // the next value of the same attribute
			judge.mu.Lock()
			judge.truth[[2]string{fact(f), text}] = dedup.VerdictContradicts
			judge.mu.Unlock()
			res.Mix.NearMisses++
			kind = &res.JudgedByKind.NearMisses
		default:
			f := seen[rng.IntN(len(seen))]
			base := fact(f)
			sp := strings.IndexByte(base, ' ')
			text = base[:sp] + " no longer" + base[sp:]
			judge.mu.Lock()
			judge.truth[[2]string{base, text}] = dedup.VerdictContradicts
			judge.mu.Unlock()
			res.Mix.Contradictions++
			kind = &res.JudgedByKind.Contradictions
		}
		out, err := eng.Observe(ctx, dedup.Observation{Collection: coll, Text: text, Source: "direct",
			ExtractorModel: "gpt-4o", SessionID: fmt.Sprint("mix-", i)})
		if err != nil {
			return fmt.Errorf("mix observation %d: %w", i, err)
		}
		res.MixDecisions[out.Decision]++
		if j := out.Judge; j != nil && !j.Cached && j.Fallback == "" {
			*kind++
		}
	}
	res.JudgeCalls = int(judge.calls.Load())
	res.JudgeRate = float64(res.JudgeCalls) / float64(opts.MixSize)
	res.CacheHits = judging.Stats().CacheHits
	if res.JudgeCalls == 0 && res.Mix.Contradictions > 0 {
		return errors.New("observebench: no judge call over a fixture with contradictions: the judge is not wired")
	}
	return nil
}

// WriteTo prints the result as the README quotes it.
func (r Result) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	ids := ""
	if r.ObservationIDs {
		ids = ", each with an observation_id"
	}
	fmt.Fprintf(&b, "observe benchmark: %d memories stored, %d timed observations (half repeats of stored texts, half new texts%s), embedder %s, no judge\n",
		r.Memories, r.Observations, ids, r.Model)
	fmt.Fprintf(&b, "observe p50  %8.3f ms\n", ms(r.P50))
	fmt.Fprintf(&b, "observe p99  %8.3f ms\n", ms(r.P99))
	fmt.Fprintf(&b, "observe mean %8.3f ms\n", ms(r.Mean))
	fmt.Fprintf(&b, "decisions    %s\n", decisions(r.Decisions))
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "  %-15s %5d calls, p50 %.3f ms, %.3f ms per observation\n", c.Kind, c.Count, ms(c.P50), ms(c.PerObs))
	}
	if r.Floor > 0 {
		fmt.Fprintf(&b, "commit floor %8.3f ms p50 (a tiny fsync'd commit in the store's directory, before and after the timed phase)\n", ms(r.Floor))
	}
	fmt.Fprintf(&b, "store floor  %8.3f ms p50 (a one-point upsert through the same client)\n", ms(r.StoreFloor))
	if c := r.Commits; c.Commits > 0 && r.Observations > 0 {
		n := float64(c.Commits)
		each := c.Time / time.Duration(c.Commits)
		fmt.Fprintf(&b, "commits      %.2f per observation (the store's, timed phase): %.1f data pages and %.1f writes each, %.3f ms mean",
			n/float64(r.Observations), float64(c.Pages)/n, float64(c.Writes)/n, ms(each))
		if r.Floor > 0 {
			fmt.Fprintf(&b, " = %.1f x the commit floor's p50", float64(each)/float64(r.Floor))
		}
		b.WriteString("\n")
	}
	if r.Floor > 0 && r.Synced {
		goal := 2*r.Floor + 300*time.Microsecond
		verdict := "MET"
		if r.P50 > goal {
			verdict = "MISSED"
		}
		fmt.Fprintf(&b, "goal         p50 <= floor x 2 + 0.3 ms = %.3f ms: %s (p50 %.3f ms, %.2f x floor)\n",
			ms(goal), verdict, ms(r.P50), float64(r.P50)/float64(r.Floor))
		if bound, ok := r.callBound(); ok {
			fmt.Fprintf(&b, "bound        tier-1 look-up p50 + store floor x 2 = %.3f ms: the three calls every observation makes, at their medians, the writes at the smallest upsert's", ms(bound))
			if bound > goal {
				b.WriteString(" (above the goal)")
			}
			b.WriteString("\n")
		}
	} else if !r.Synced {
		b.WriteString("goal         not judged: commits are not fsync'd\n")
	}
	if r.Writers > 0 {
		fmt.Fprintf(&b, "%d writers    %8.0f observations/s, p50 %.3f ms, p99 %.3f ms\n", r.Writers, r.Throughput, ms(r.WritersP50), ms(r.WritersP99))
	}
	n := r.Mix.New + r.Mix.Repeats + r.Mix.Paraphrases + r.Mix.NearMisses + r.Mix.Contradictions
	fmt.Fprintf(&b, "judge fixture: %d observations: %d new, %d repeats, %d paraphrases, %d near misses, %d contradictions\n",
		n, r.Mix.New, r.Mix.Repeats, r.Mix.Paraphrases, r.Mix.NearMisses, r.Mix.Contradictions)
	fmt.Fprintf(&b, "judge calls  %d (%.1f%% of observations; %d verdict cache hits)\n", r.JudgeCalls, 100*r.JudgeRate, r.CacheHits)
	j := r.JudgedByKind
	fmt.Fprintf(&b, "judged       %d new, %d repeats, %d paraphrases, %d near misses, %d contradictions\n",
		j.New, j.Repeats, j.Paraphrases, j.NearMisses, j.Contradictions)
	fmt.Fprintf(&b, "decisions    %s\n", decisions(r.MixDecisions))
	k, err := io.WriteString(w, b.String())
	return int64(k), err
}

// callBound is what the calls every observation makes typically cost
// before any work of the write path: the tier-1 look-up (its p50 in this
// run) and two writes, the memory and its audit record, each at the store
// floor (the p50 of the smallest upsert through the same client). A sum of
// medians, not a hard lower bound. ok is false when either was not
// measured.
func (r Result) callBound() (time.Duration, bool) {
	for _, c := range r.Calls {
		if c.Kind == kindTier1 && c.Count > 0 && r.StoreFloor > 0 {
			return c.P50 + 2*r.StoreFloor, true
		}
	}
	return 0, false
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func decisions(m map[dedup.Decision]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[dedup.Decision(k)])
	}
	return strings.Join(parts, ", ")
}
