package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/internal/apiclient"
	"github.com/memrank/memrank/internal/eval"
)

type evalOptions struct {
	split            string
	seed             int64
	limit            int
	asJSON           bool
	quiet            bool
	collection       string
	guardBand        float64
	guardFloor       float64
	confidenceWeight float64
	data             string
	upstream         string
	upstreamAPIKey   string
	url, apiKey      string
	fit              bool
	accessSignal     string
	locomo           locomoOptions
}

// evalLong is eval's help text.
const evalLong = `Ask every query of a labeled set and score the answers against its labels, for each
variant of the ranking (rows): raw similarity (the store's own order), memrank as configured,
and memrank with one factor changed: freshness weight 0, focus off (freshness weighed on every
query), access weight 0, confidence weight 0 and 1, the retrieval gate off. A variant
configured exactly like memrank is left out; two configured alike share a row. Every ranker
runs with its clock at the set's "now".

The set is JSON Lines (gzip when the name ends in .gz), one key per line, parsed strictly
(errors name FILE:N): first {"set": {"name", "version": 1, "seed", "now", "distance", "dim",
"embedder", "notes"}}, then {"memory": {"id", "vector" or "text", "payload", "topic", "fact",
"correct", "role"}} and {"query": {"id", "vector" or "text", "topic", "relevant": {"ID":
grade 1..3}, "limit"}} lines. Texts without a vector are embedded with the configured embedder.

Definitions. A ranking is the list of ids returned for a query (its top limit, default 10).
Each memory's fact (its "fact", else its own id) counts once: a result whose fact already
appeared higher in the list has gain 0 and does not count as relevant again; a fact's grade
is the best grade of its memories.
  P@k      distinct relevant facts (grade >= 1) in the top k, divided by k.
  nDCG@10  DCG@10 / ideal DCG@10, gain 2^grade - 1, discount log2(i+1) at position i; the
           ideal orders the query's distinct relevant facts by grade.
  MRR      1 / position of the first relevant result (0 if none).
Averages are over the queries with at least one relevant memory; the header says how many.
An inversion is a pair (irrelevant i, relevant r), both listed, with i above r:
"inversions" counts them, "off-topic" those where i's topic is not the query's, "lifted"
those where r is more similar to the query than i (memrank's factors, not the similarity,
put i above r), and "withheld" the relevant facts the raw ranking lists and this one does
not (superseded, gated, folded into another fact, or pushed out). Each variant row shows
what its factor costs or gains.

--split train|test evaluates one side of an 80/20 split of the topics (deterministic: a
hash of --seed, default the set's seed, and the topic; an item without a topic is its own
unit, by its id). --guard-band, --guard-floor and --confidence-weight change memrank's row
(and so every variant built from it), to tune and compare; so does every scoring.* key of
the configuration (MEMRANK_SCORING__FRESHNESS_WEIGHT=0.5).

--access-signal says which reads feed the access boost: returned (the set's access counts,
as memrank counts reads), used (outcome feedback only) or both. A set records reads, not
uses, so used and both draw them: each past read of a memory is a use with probability
0.7 when the memory is correct, 0.15 when its role is "popular" (read by unrelated
queries), 0.05 when it is wrong (the user corrects it), 0.5 without a label; the draws
are deterministic for the split's seed.

Where it runs:
  default     a fresh embedded store in a temporary directory (or --data DIR), the set's
              memories loaded into --collection, queried in process through go-client.
  --upstream  a running Qdrant (or memrank qdrant-compat) over gRPC. A --collection that
              does not exist is created and loaded from the set; one that exists is used as
              it is (its point ids must be the set's ids) and nothing is written.
  --url       a running memrank, through POST /v1/retrieve: two rows only, raw ("mode":
              "off") and memrank as the server is configured, with the server's own clock.
              The collection must already hold the set's memories.

--fit fits the confidence weights (source, repetition, extractor, type; each in [0, 1],
summing to 1) by minimising, over the train split's pairs (correct memory, incorrect
memory), the fraction where the correct one's confidence is not higher: a grid over the
simplex in steps of 0.05, refined in steps of 0.01. It then compares the configured and the
fitted weights on the test split (P@5, P@10, nDCG@10, and both inversion fractions), over a
copy of the collection without stored confidences (--collection + "_fit"), so that each
ranker computes confidence from the fields with its own weights.

--locomo FILE measures instead on the public LoCoMo benchmark (locomo10.json, not shipped:
CC BY-NC): every turn of each conversation is one memory (its own collection, written straight
to a fresh embedded store, dated by its session); every question of categories 1-4 (multi-hop,
temporal, open-domain, single-hop) is asked, for 25 results, of raw (the store's order),
/v1/retrieve (memrank's native API, with the text) and qdrant query (POST
/collections/{c}/points/query through memrank's REST front), in process. Both memrank systems
count accesses, each on its own copy of the collections, flushed between questions. It reports
R@5, R@10, R@25 (the share of the evidence turns returned), hit@10, MRR and empty answers, for
all conversations, the dev five and the held-out five, by category and for the recent questions
(evidence in the last 30 days). Each conversation's dates are shifted so that its latest
session lies a day before --at (the rankers' clock), unless --real-dates. --conversations
restricts the samples; --json adds every question's answers (per_question). It takes no SET,
and the set's flags (--split, --fit, --upstream, --url...) do not apply; the ranking is the
configuration's (--config, MEMRANK_RANK__..., MEMRANK_SCORING__...).

--write-path observes every turn through the write path instead (POST /v1/observe in process,
in conversation order: the turn's text, source direct, its session and turn ids, its time as
observed_at; --speaker adds its speaker), which may fold it into an earlier memory. The turns
are observed into each conversation's /v1/retrieve copy, whose points and audit trail are then
copied to the qdrant query copy. The report adds, per group: observations, decisions by kind,
matches by dedup tier, memories, folds (turns that are no memory of their own),
cross-speaker folds (memories holding several speakers' turns; --json lists up to 20) and
evidence folds (evidence turns folded into another turn's memory); the write path is the
configuration's (dedup.*, judge.*), with its clock at --at.

A progress bar is shown on stderr when it is a terminal (not with -q or --json).`

func newEvalCmd(e *env) *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval SET.jsonl[.gz] | eval --locomo FILE",
		Short: "Measure ranking quality on a labeled set: P@5, P@10, nDCG@10, MRR and inversions per variant",
		Long:  evalLong,
		Example: `  memrank eval examples/eval/seed1.jsonl.gz
  memrank eval --split test --guard-band 0.10 --guard-floor 0.35 examples/eval/seed1.jsonl.gz
  memrank eval --fit --json examples/eval/seed1.jsonl.gz
  memrank eval --upstream localhost:6334 --collection eval_seed1 examples/eval/seed1.jsonl.gz
  memrank eval --url http://localhost:6333 --collection eval_seed1 examples/eval/seed1.jsonl.gz
  memrank eval --locomo locomo10.json -q
  memrank eval --locomo locomo10.json --conversations conv-26,conv-30 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("locomo") {
				return nil // runEvalLocomo refuses a SET in its own words
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("locomo") {
				return runEvalLocomo(cmd, e, &o, args)
			}
			if err := refuseLocomoFlags(cmd.Flags()); err != nil {
				return err
			}
			return runEval(cmd, e, &o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.split, "split", "all", "queries to evaluate: all, train or test")
	f.Int64Var(&o.seed, "seed", 0, "seed of the train/test split (default the set's seed)")
	f.IntVar(&o.limit, "limit", 0, "results per query, replacing each query's own limit (0: the query's, default 10)")
	f.BoolVar(&o.asJSON, "json", false, "print one JSON object with every number")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.StringVar(&o.collection, "collection", "eval", "collection holding the set's memories")
	f.Float64Var(&o.guardBand, "guard-band", 0, "memrank's relevance guard band (default: the configured guard's)")
	f.Float64Var(&o.guardFloor, "guard-floor", 0, "memrank's relevance guard floor (default: the configured guard's)")
	f.Float64Var(&o.confidenceWeight, "confidence-weight", 0, "memrank's confidence weight in [0, 1] (default: the configured one)")
	f.BoolVar(&o.fit, "fit", false, "fit the confidence weights on the train split and compare them on the test split")
	f.StringVar(&o.accessSignal, "access-signal", "returned", "reads that feed the access boost: returned (the set's), used (simulated uses only) or both")
	f.StringVar(&o.data, "data", "", "data directory of the embedded store (default: a temporary one, removed afterwards)")
	f.StringVar(&o.upstream, "upstream", "", "a running Qdrant's gRPC address HOST:PORT, instead of the embedded store")
	f.StringVar(&o.upstreamAPIKey, "upstream-api-key", "", "api-key sent to --upstream")
	f.StringVar(&o.url, "url", "", "a running memrank's HTTP address (e.g. http://localhost:6333), asked through /v1/retrieve")
	f.StringVar(&o.apiKey, "api-key", "", "api-key sent to --url")
	o.locomo.addFlags(f)
	return cmd
}

func runEval(cmd *cobra.Command, e *env, o *evalOptions, path string) (err error) {
	flags := cmd.Flags()
	part, err := eval.ParsePart(o.split)
	if err != nil {
		return usageError{fmt.Errorf("--split %w", err)}
	}
	if o.limit < 0 || o.limit > eval.MaxLimit {
		return usageError{fmt.Errorf("--limit %d is outside [1, %d] (0: each query's own)", o.limit, eval.MaxLimit)}
	}
	if o.url != "" {
		for _, name := range []string{"data", "upstream", "upstream-api-key", "fit", "guard-band", "guard-floor", "confidence-weight", "access-signal"} {
			if flags.Changed(name) {
				return usageError{fmt.Errorf("--%s does not go with --url: a running memrank ranks as it is configured", name)}
			}
		}
	} else if flags.Changed("api-key") {
		return usageError{errors.New("--api-key goes with --url (for --upstream, give --upstream-api-key)")}
	}
	if o.upstream != "" && o.data != "" {
		return usageError{errors.New("--data and --upstream: give one store")}
	}
	if flags.Changed("upstream-api-key") && o.upstream == "" {
		return usageError{errors.New("--upstream-api-key goes with --upstream")}
	}
	signal, err := eval.ParseAccessSignal(o.accessSignal)
	if err != nil {
		return usageError{fmt.Errorf("--access-signal %w", err)}
	}
	if flags.Changed("confidence-weight") && !(o.confidenceWeight >= 0 && o.confidenceWeight <= 1) {
		return usageError{fmt.Errorf("--confidence-weight %v is outside [0, 1]", o.confidenceWeight)}
	}
	var remote *apiclient.Remote
	if o.url != "" {
		var err error
		if remote, err = apiclient.NewRemote(apiclient.RemoteConfig{URL: o.url, APIKey: o.apiKey, Timeout: time.Minute}); err != nil {
			return usageError{fmt.Errorf("--url: %w", err)}
		}
		defer remote.Close()
	}

	set, err := eval.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return usageError{err}
		}
		return err
	}
	cfg := eval.Config{Set: set, Part: part, Seed: set.Header.Seed, Limit: o.limit, Collection: o.collection, Fit: o.fit}
	if flags.Changed("seed") {
		cfg.Seed = o.seed
	}
	bar := &evalProgress{w: e.stderr}
	if !o.quiet && !o.asJSON && isTerminal(e.stderr) {
		cfg.Progress = bar.update
	}
	defer bar.clear()

	ctx := cmd.Context()
	if remote != nil {
		cfg.Remote = remote
		cfg.Where = "memrank at " + o.url
	} else {
		auth, closeStore, err := evalStore(ctx, e, cmd, o, &cfg)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, closeStore()) }()
		ctx = auth(ctx)
	}
	rep, err := eval.Run(ctx, cfg)
	bar.clear()
	if err != nil {
		return err
	}
	if signal != eval.SignalReturned {
		rep.Notes = append(rep.Notes, fmt.Sprintf("access signal %q: the access counts were replaced by simulated uses (%+v)",
			signal, eval.DefaultUseModel()))
	}
	if o.asJSON {
		return rep.WriteJSON(e.stdout)
	}
	return rep.WriteTable(e.stdout)
}

// evalStore builds the in-process read path on the store the flags name (a
// temporary embedded store by default: an eval must not write into the
// configured one unasked) and fills cfg's store, embedder, rankers and
// memrank setting from the configuration. auth adds the store's
// credentials to a context; the other func releases it all.
func evalStore(ctx context.Context, e *env, cmd *cobra.Command, o *evalOptions, cfg *eval.Config) (auth func(context.Context) context.Context, release func() error, err error) {
	c, err := e.loadConfig(cmd.Flags(), nil)
	if err != nil {
		return nil, nil, err
	}
	codec, err := c.codec()
	if err != nil {
		return nil, nil, usageError{err}
	}
	// The configured guard (rank.guard: the set's vectors come with no
	// embedder record), with the flags' overrides.
	guard := c.Rank.Guard
	if cmd.Flags().Changed("guard-band") {
		guard.Band = o.guardBand
	}
	if cmd.Flags().Changed("guard-floor") {
		guard.Floor = o.guardFloor
	}
	if err := guard.Validate(); err != nil {
		return nil, nil, usageError{fmt.Errorf("--guard-band/--guard-floor: %w", err)}
	}
	// Outcome feedback: which reads feed the boost (docs/scoring.md).
	signal, _ := eval.ParseAccessSignal(o.accessSignal) // checked by runEval
	eval.SimulateUse(cfg.Set, c.PayloadKeys, signal, eval.DefaultUseModel(), cfg.Seed)
	base := eval.BaseSetting(guard, codec.Params())
	if cmd.Flags().Changed("confidence-weight") {
		base.ConfidenceWeight = o.confidenceWeight
	}

	var tmp string
	c.Upstream.GRPC, c.Upstream.APIKey = o.upstream, o.upstreamAPIKey
	if err := config.Within("upstream", c.Upstream.Validate()); err != nil {
		// The flags' values, checked as the configuration's would be.
		return nil, nil, usageError{fmt.Errorf("--upstream/--upstream-api-key: %w", err)}
	}
	switch {
	case o.upstream != "":
		cfg.Where = "Qdrant at " + o.upstream
	case o.data != "":
		c.Store.DataDir = o.data
		cfg.Where = "the embedded store in " + o.data
	default:
		if tmp, err = os.MkdirTemp("", "memrank-eval-"); err != nil {
			return nil, nil, err
		}
		c.Store.DataDir = tmp
		cfg.Where = "a temporary embedded store"
	}
	removeTmp := func() error {
		if tmp == "" {
			return nil
		}
		return os.RemoveAll(tmp)
	}
	// Logs would interleave with the table and the progress bar.
	s, err := newStack(ctx, c, io.Discard, false)
	if err != nil {
		return nil, nil, errors.Join(err, removeTmp())
	}
	cfg.Store = s.source
	cfg.Embedder = s.embedder
	cfg.Base = base
	cfg.Rankers = eval.RankerConfig{Rank: c.rankConfig(codec)}
	return c.Upstream.OwnContext, func() error {
		return errors.Join(s.close(context.Background()), removeTmp())
	}, nil
}

// evalProgress is a progress bar per stage, on a terminal.
type evalProgress struct {
	w     io.Writer
	stage string
	bar   *progressbar.ProgressBar
}

func (p *evalProgress) update(stage string, done, total int) {
	if p.bar == nil || stage != p.stage {
		p.clear()
		p.stage = stage
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(stage),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
}

func (p *evalProgress) clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
		p.bar = nil
	}
}
