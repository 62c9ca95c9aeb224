package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memrank/memrank/internal/eval/locomo"
	"github.com/memrank/memrank/server/grpcfront"
	"github.com/memrank/memrank/tenancy"
)

// locomoOptions are eval's flags for the LoCoMo benchmark.
type locomoOptions struct {
	file          string
	at            string
	realDates     bool
	conversations []string
	writePath     bool
	speaker       bool
}

func (o *locomoOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.file, "locomo", "", "measure on the LoCoMo benchmark's FILE (locomo10.json) instead of a labeled set")
	f.StringVar(&o.at, "at", locomo.DefaultAt().Format(time.RFC3339), "with --locomo: the evaluation instant, the rankers' clock (RFC 3339 or YYYY-MM-DD)")
	f.BoolVar(&o.realDates, "real-dates", false, "with --locomo: keep the conversations' dates (default: shifted so that each one's latest session lies a day before --at)")
	f.StringSliceVar(&o.conversations, "conversations", nil, "with --locomo: only these samples, e.g. conv-26,conv-30 (default: all)")
	f.BoolVar(&o.writePath, "write-path", false, "with --locomo: observe every turn through the write path (POST /v1/observe), which may fold it into another memory, instead of writing it as a memory of its own")
	f.BoolVar(&o.speaker, "speaker", false, "with --locomo --write-path: name each turn's speaker in its observation")
}

// locomoOnlyFlags go with --locomo only.
func locomoOnlyFlags() []string {
	return []string{"at", "real-dates", "conversations", "write-path", "speaker"}
}

// setFlags are eval's flags for a labeled set, which --locomo refuses.
func setFlags() []string {
	return []string{"split", "seed", "limit", "collection", "guard-band", "guard-floor", "confidence-weight", "fit",
		"access-signal", "upstream", "upstream-api-key", "url", "api-key"}
}

// refuseLocomoFlags refuses --locomo's flags without --locomo.
func refuseLocomoFlags(f *pflag.FlagSet) error {
	for _, name := range locomoOnlyFlags() {
		if f.Changed(name) {
			return usageError{fmt.Errorf("--%s goes with --locomo", name)}
		}
	}
	return nil
}

// parseAt reads --at: RFC 3339, or a date (midnight UTC).
func parseAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--at %q is neither RFC 3339 (2026-12-01T00:00:00Z) nor a date (2026-12-01)", s)
}

// runEvalLocomo is `eval --locomo FILE`: the read path as configured, on a
// fresh embedded store, with every ranker's clock at --at.
func runEvalLocomo(cmd *cobra.Command, e *env, o *evalOptions, args []string) (err error) {
	flags := cmd.Flags()
	lo := o.locomo
	bench, err := openLocomo(flags, lo, args)
	if err != nil {
		return err
	}
	c, err := e.loadConfig(flags, nil)
	if err != nil {
		return err
	}
	codec, err := c.codec()
	if err != nil {
		return usageError{err}
	}
	notes := locomoStore(&c, bench.At)
	if lo.writePath {
		notes = append(notes, locomoJudgeNote(c))
	}
	var tmp string
	where := "the embedded store in " + o.data
	if o.data != "" {
		c.Store.DataDir = o.data
	} else {
		if tmp, err = os.MkdirTemp("", "memrank-locomo-"); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
		c.Store.DataDir = tmp
		where = "a temporary embedded store"
	}

	ctx := cmd.Context()
	// Logs would interleave with the table and the progress bar.
	s, err := newStack(ctx, c, io.Discard, true)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close(context.Background())) }()
	rest, err := s.inProcessRESTFront(ctx)
	if err != nil {
		return err
	}
	header := http.Header{}
	if key := s.cfg.Upstream.APIKey; key != "" {
		header.Set("api-key", key) // the store's key, as a caller sends it
	}
	turnKey := codec.Keys().TurnIDs
	notes = append(notes,
		fmt.Sprintf("asked in process, on %s; the clock of the ranker, the access recorder and the write path is --at", where),
		fmt.Sprintf("/v1/retrieve asks each conversation's %s copy (raw asks it too), qdrant query its %s copy; "+
			"the access counts are flushed after every question", locomo.RetrieveSuffix, locomo.QuerySuffix),
		"qdrant query goes through memrank's REST front on its gRPC front, both in process, as serve builds them")
	if n := len(bench.Dropped); n > 0 {
		var ids []string
		for _, d := range bench.Dropped {
			ids = append(ids, fmt.Sprintf("%s qa[%d] %q", d.SampleID, d.Question, d.ID))
		}
		notes = append(notes, "evidence ids naming no turn, dropped: "+strings.Join(ids, ", "))
	}
	cfg := locomo.Config{
		Bench:     bench,
		File:      lo.file,
		Store:     s.source,
		Embedder:  s.embedder,
		Codec:     codec,
		Retriever: locomo.NativeRetriever{Handler: s.native.Handler(), Header: header, TurnKey: turnKey},
		Querier:   locomo.RESTQuerier{Handler: rest, Header: header, TurnKey: turnKey},
		Flusher:   s.recorder,
		Notes:     notes,
		WritePath: lo.writePath,
		Speaker:   lo.speaker,
	}
	if lo.writePath {
		cfg.Observer = locomo.NativeObserver{Handler: s.native.Handler(), Header: header}
	}
	bar := &evalProgress{w: e.stderr}
	if !o.quiet && !o.asJSON && isTerminal(e.stderr) {
		cfg.Progress = bar.update
	}
	defer bar.clear()
	rep, err := locomo.Run(s.cfg.Upstream.OwnContext(ctx), cfg)
	bar.clear()
	if err != nil {
		return err
	}
	if o.asJSON {
		return rep.WriteJSON(e.stdout)
	}
	return rep.WriteTable(e.stdout)
}

// openLocomo checks the flags that go with --locomo and reads and builds
// its file.
func openLocomo(flags *pflag.FlagSet, lo locomoOptions, args []string) (*locomo.Bench, error) {
	if len(args) > 0 {
		return nil, usageError{fmt.Errorf("--locomo FILE takes no SET (got %s)", strings.Join(args, " "))}
	}
	var refused []string
	for _, name := range setFlags() {
		if flags.Changed(name) {
			refused = append(refused, "--"+name)
		}
	}
	if len(refused) > 0 {
		return nil, usageError{fmt.Errorf("%s: not with --locomo (it asks every question of its own collections, for 25 results, in process)", strings.Join(refused, ", "))}
	}
	if lo.file == "" {
		return nil, usageError{errors.New("--locomo needs a FILE")}
	}
	if lo.speaker && !lo.writePath {
		return nil, usageError{errors.New("--speaker goes with --write-path (written directly, a turn's memory has no speaker to give)")}
	}
	at, err := parseAt(lo.at)
	if err != nil {
		return nil, usageError{err}
	}
	samples, err := locomo.Open(lo.file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, usageError{err}
		}
		return nil, err
	}
	bench, err := locomo.Build(samples, locomo.Options{At: at, RealDates: lo.realDates, Only: lo.conversations})
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", lo.file, err)}
	}
	return bench, nil
}

// locomoStore makes c an embedded store of the eval's own, without
// tenancy, whose ranker and access recorder run at at; it returns notes
// on what it changed. The eval writes its collections and must not write
// into the configured store unasked.
func locomoStore(c *Config, at time.Time) []string {
	var notes []string
	if c.Upstream.GRPC != "" {
		notes = append(notes, fmt.Sprintf("the configured upstream (%s) is not used: the eval writes into an embedded store of its own", c.Upstream.GRPC))
	}
	c.Upstream.GRPC, c.Upstream.REST, c.Upstream.APIKey = "", "", ""
	if c.Tenancy.Key != "" {
		notes = append(notes, "tenancy is off for the eval (its memories belong to no tenant)")
	}
	c.Tenancy = tenancy.DefaultConfig()
	// The clock of the ranker, and of the access recorder that writes
	// last_accessed_at, is --at.
	clock := func() time.Time { return at }
	c.Rank.Now, c.Access.Now, c.Dedup.Now = clock, clock, clock
	return notes
}

// locomoJudgeNote says whether the write path's judge (tier 3) takes part.
func locomoJudgeNote(c Config) string {
	if !c.Judge.Enabled {
		return "the write path's judge (tier 3) is off: a pair in the judge band is never folded (judge.enabled)"
	}
	at := c.Judge.BaseURL
	if at == "" {
		at = "OpenAI's API"
	}
	return fmt.Sprintf("the write path's judge (tier 3) is %s at %s", c.Judge.Model, at)
}

// inProcessRESTFront is the REST front as serve builds it, on a gRPC front
// served in process (without admission limits), for in-process callers.
func (s *stack) inProcessRESTFront(ctx context.Context) (http.Handler, error) {
	rest, err := s.cfg.Upstream.RESTURL()
	if err != nil {
		return nil, usageError{err}
	}
	front, err := grpcfront.New(s.frontConfig(nil))
	if err != nil {
		return nil, usageError{err}
	}
	return s.startRESTFront(ctx, front, rest)
}
