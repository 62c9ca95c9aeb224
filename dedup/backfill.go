package dedup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/batchjob"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
)

// BackfillJob names the backfill's companion: <collection>_memrank_backfill.
const BackfillJob = "backfill"

// DecisionBackfilled is the decision on the audit record of a memory that
// a backfill computed from a payload another tool wrote.
const DecisionBackfilled Decision = "backfilled"

// Backfill asks for a collection written by another tool (mem0, LangChain,
// or anything a mapping describes) to be made a memrank memory collection.
type Backfill struct {
	Collection string
	Mapping    *foreign.Mapping
	// EmbedderModel is the model that made the collection's vectors
	// ("text-embedding-3-small", or with its dimension
	// "text-embedding-3-small:1536"). Required unless the collection's audit
	// companion already records one: memrank does not guess.
	EmbedderModel string
	// ExtractorModel is the model that extracted the memories; it overrides
	// the mapping's default. Empty: the extractor's quality is unknown.
	ExtractorModel string
	// DryRun reads and reports; it writes nothing.
	DryRun bool
	// LeaveUnscored leaves points without a text or a time as they are
	// (counted in the report). Without it (and without AssumeTime for a
	// missing time) such a point stops the run before its page is written.
	LeaveUnscored bool
	// AssumeTime, when set, is the creation time of points that have none.
	AssumeTime time.Time
	// MergeDuplicates merges memories of equal text_hash (within one scope
	// of the mapping) as the write path does.
	MergeDuplicates bool
	// BatchSize is the points per page; default batchjob.DefaultBatchSize.
	BatchSize int
	// Progress, when set, is called after each page with the points done.
	Progress func(done int)
}

// BackfillReport says what a backfill did (or, dry, would do). It is also
// the run's state, kept in its checkpoint, so a resumed run reports the
// whole run.
type BackfillReport struct {
	Collection  string   `json:"collection"`
	Mapping     string   `json:"mapping"`
	Assumptions []string `json:"assumptions,omitempty"`
	Embedder    string   `json:"embedder"`
	DryRun      bool     `json:"dry_run"`
	Resumed     bool     `json:"resumed"`
	// Total is the collection's points when the run started.
	Total int `json:"total"`
	// Points read; Backfilled of them made memories (or would be, dry);
	// Already were memories before (memrank_schema present) and were left
	// as they are; Unscored lacked evidence and were left as they are.
	Points     int `json:"points"`
	Backfilled int `json:"backfilled"`
	Already    int `json:"already_memories"`
	Unscored   int `json:"left_unscored"`
	// Merged are backfilled memories merged into an equal one (superseded).
	Merged int `json:"merged"`
	// Tiers and Buckets count the backfilled memories by computed tier and
	// confidence bucket as of the run; Gated are below the retrieval gate,
	// Decayed past their decay floor, Archived in the archived tier (both
	// labels: such memories are still returned).
	Tiers    map[string]int `json:"tiers"`
	Buckets  map[string]int `json:"buckets"`
	Gated    int            `json:"gated"`
	Decayed  int            `json:"decayed"`
	Archived int            `json:"archived"`
	// Problems counts, by kind, what a point lacked or held that could not
	// be used (a point may have several).
	Problems map[string]int `json:"problems"`
	// What the run created, so that a rollback removes it again.
	CreatedAudit  bool `json:"created_audit,omitempty"`
	CreatedRecord bool `json:"created_record,omitempty"`
	// CreatedIndexes are the payload indexes the backfill created (a
	// rollback removes them).
	CreatedIndexes []string `json:"created_indexes,omitempty"`
}

func (r *BackfillReport) problem(kind string) {
	if r.Problems == nil {
		r.Problems = map[string]int{}
	}
	r.Problems[kind]++
}

// ErrBackfill is a backfill that cannot run as asked: no embedder named,
// points without the evidence to score them, a mapping missing.
var ErrBackfill = errors.New("dedup: cannot backfill")

// maxBackfillRecords bounds the audit records one backfilled point gets:
// its backfill record and, when it is merged, the merge and superseded ones.
const maxBackfillRecords = 3

// Backfill computes the memory fields of every point of b.Collection that
// is not a memory yet, from what b.Mapping reads of its payload, exactly as
// the write path would for an observation made at the point's creation
// time (n = 0), and writes them next to the point's own keys, which all
// stay (docs/backfill.md). Before a point's first write its payload is kept
// in the companion <collection>_memrank_backfill, for BackfillRollback; the
// run keeps a checkpoint there too and resumes from it after an
// interruption. Each backfilled point gets one audit record (reason
// "backfill").
func (e *Engine) Backfill(ctx context.Context, b Backfill) (BackfillReport, error) {
	rep := BackfillReport{Collection: b.Collection, DryRun: b.DryRun}
	if err := checkCollection(b.Collection); err != nil {
		return rep, err
	}
	if b.Mapping == nil {
		return rep, fmt.Errorf("%w %s: no mapping", ErrBackfill, b.Collection)
	}
	if err := b.Mapping.Validate(); err != nil {
		return rep, fmt.Errorf("%w %s: %w", ErrBackfill, b.Collection, err)
	}
	rep.Mapping, rep.Assumptions = b.Mapping.Name, b.Mapping.Assumptions
	js, ok := e.store.(batchjob.Store)
	if !ok {
		return rep, fmt.Errorf("%w %s: the store cannot run batch jobs", ErrBackfill, b.Collection)
	}
	runner, err := batchjob.New(js, batchjob.Config{Collection: b.Collection, Job: BackfillJob, BatchSize: b.BatchSize,
		WithVectors: b.MergeDuplicates, Timeout: e.cfg.Timeout})
	if err != nil {
		return rep, err
	}
	bf := &backfiller{e: e, b: b, rep: &rep, runner: runner, now: e.cfg.Now(), seen: map[string]bool{}}
	dims, err := bf.setup(ctx)
	if err != nil {
		return rep, err
	}
	if b.DryRun {
		_, err := runner.Scan(ctx, bf.page, b.Progress)
		return rep, err
	}
	created := rep
	// A new pass over a finished run keeps what the first one created, for
	// a rollback.
	if cp, found, err := runner.Checkpoint(ctx); err != nil {
		return rep, err
	} else if found {
		var prev BackfillReport
		if json.Unmarshal(cp.State, &prev) == nil {
			created.addCreated(prev)
		}
	}
	rep.addCreated(created)
	res, err := runner.Run(ctx, bf.options(dims), &rep, bf.page, b.Progress)
	// A resume reads the first run's report back, which says what that run
	// created; what this one created is added.
	rep.addCreated(created)
	rep.Resumed = res.Resumed
	return rep, err
}

// addCreated adds what o says was created to r's.
func (r *BackfillReport) addCreated(o BackfillReport) {
	r.CreatedAudit = r.CreatedAudit || o.CreatedAudit
	r.CreatedRecord = r.CreatedRecord || o.CreatedRecord
	for _, k := range o.CreatedIndexes {
		if !slices.Contains(r.CreatedIndexes, k) {
			r.CreatedIndexes = append(r.CreatedIndexes, k)
		}
	}
}

// backfiller is one backfill run.
type backfiller struct {
	e      *Engine
	b      Backfill
	rep    *BackfillReport
	runner *batchjob.Runner
	now    time.Time
	bands  embed.Bands
	// seen are the merge keys of a dry run's memories so far: with nothing
	// written, a dry run finds earlier duplicates only here.
	seen map[string]bool
	// indexed: the collection has the text_hash index, so stored memories
	// can be looked up by hash. Without it (a dry run on a collection memrank
	// never wrote) there are none to find, and each look-up would read
	// every point.
	indexed bool
}

func (bf *backfiller) options(dims int) string {
	// --leave-unscored and --assume-time may change on a resume: the run
	// stops at the first point they would have left or dated.
	return fmt.Sprintf("mapping=%s embedder=%s dims=%d extractor=%q merge=%t",
		bf.b.Mapping.Name, bf.rep.Embedder, dims, bf.b.ExtractorModel, bf.b.MergeDuplicates)
}

// setup checks the collection and its embedder and, unless dry, records
// the embedder and makes the audit companion and the text_hash index.
func (bf *backfiller) setup(ctx context.Context) (int, error) {
	e, coll := bf.e, bf.b.Collection
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	exists, err := e.store.CollectionExists(ctx, coll)
	if err != nil {
		return 0, fmt.Errorf("dedup: look up collection %s: %w", coll, err)
	}
	if !exists {
		return 0, fmt.Errorf("%w: collection %s", ErrNotFound, coll)
	}
	info, err := e.store.GetCollectionInfo(ctx, coll)
	if err != nil {
		return 0, fmt.Errorf("dedup: read collection %s: %w", coll, err)
	}
	bf.rep.Total = int(info.GetPointsCount())
	params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
	if params == nil {
		return 0, fmt.Errorf("%w %s: it has named vectors; memrank reads and writes the default vector", ErrBackfill, coll)
	}
	dims := int(params.GetSize())
	model, err := embedderName(bf.b.EmbedderModel, dims)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrBackfill, coll, err)
	}
	e.forget(coll)
	rec, err := e.recorded(ctx, coll)
	if err != nil {
		return 0, err
	}
	switch {
	case rec != nil && rec.migrating != "":
		return 0, &MigratingError{Collection: coll, From: rec.model, To: rec.migrating}
	case rec != nil && model != "" && rec.model != model:
		return 0, fmt.Errorf("%w %s: its companion records the embedder %s, not %s", ErrBackfill, coll, rec.model, model)
	case rec != nil:
		bf.rep.Embedder = rec.model
		bf.bands = e.bandsOf(*rec)
	case model == "" && bf.b.DryRun:
		bf.rep.problem("embedder_not_named")
		bf.bands = embed.Bands{Same: e.cfg.SameThreshold, Judge: e.cfg.JudgeThreshold}
	case model == "":
		return 0, fmt.Errorf("%w %s: say which model made its vectors (--embedder-model, e.g. text-embedding-3-small for mem0's default); "+
			"memrank does not guess, and later writes and queries embed with it", ErrBackfill, coll)
	default:
		bf.rep.Embedder = model
		b, _ := embed.CalibratedBands(model)
		bf.bands = embed.BandsFor(model, b, embed.Bands{Same: e.cfg.SameThreshold, Judge: e.cfg.JudgeThreshold})
	}
	bf.indexed = len(e.missing(info.GetPayloadSchema(), []payloadIndex{{e.codec.Key(memory.FieldTextHash), qdrant.FieldType_FieldTypeKeyword}})) == 0
	if bf.b.DryRun {
		return dims, nil
	}
	bf.indexed = true
	return dims, bf.prepareCollection(ctx, info, rec, model, dims)
}

func (bf *backfiller) prepareCollection(ctx context.Context, info *qdrant.CollectionInfo, rec *ensured, model string, dims int) error {
	e, coll := bf.e, bf.b.Collection
	exists, err := e.store.CollectionExists(ctx, auditCollection(coll))
	if err != nil {
		return fmt.Errorf("dedup: look up collection %s: %w", auditCollection(coll), err)
	}
	if err := e.ensureAudit(ctx, coll); err != nil {
		return err
	}
	bf.rep.CreatedAudit = !exists
	if rec == nil {
		b, _ := embed.CalibratedBands(model)
		if _, err := e.writeRecord(ctx, coll, memory.EmbedderRecord{Model: model, Dimensions: dims, Collection: coll,
			SameThreshold: b.Same, JudgeThreshold: b.Judge}); err != nil {
			return err
		}
		e.forget(coll)
		bf.rep.CreatedRecord = true
	}
	if missing := e.missing(info.GetPayloadSchema(), e.memoryIndexes()); len(missing) > 0 {
		for _, x := range missing {
			bf.rep.CreatedIndexes = append(bf.rep.CreatedIndexes, x.key)
		}
		return e.index(ctx, coll, missing...)
	}
	return nil
}

// embedderName is the recorded form of a model name, <model>:<dimensions>;
// a name that carries a dimension must carry the collection's.
func embedderName(name string, dims int) (string, error) {
	if name == "" {
		return "", nil
	}
	if i := strings.LastIndexByte(name, ':'); i > 0 {
		if d, err := strconv.Atoi(name[i+1:]); err == nil {
			if d != dims {
				return "", fmt.Errorf("the embedder %s makes %d dimensions, the collection's vectors have %d", name, d, dims)
			}
			return name, nil
		}
	}
	return name + ":" + strconv.Itoa(dims), nil
}
