package locomo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// Store is where the conversations are written and the raw system asks;
// *qdrant.Client satisfies it. Through the write path, the memories are
// read back and copied with GetCollectionInfo, CreateFieldIndex and
// ScrollAndOffset.
type Store interface {
	CollectionExists(ctx context.Context, name string) (bool, error)
	CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
	Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error)
	GetCollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error)
	CreateFieldIndex(ctx context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.UpdateResult, error)
	ScrollAndOffset(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error)
}

var _ Store = (*qdrant.Client)(nil)

// Embedder embeds the turns and the questions; embed.Embedder is one.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dimensions() int
	Model() string
}

// Retriever asks memrank's native API with a question's text
// (NativeRetriever).
type Retriever interface {
	Retrieve(ctx context.Context, collection, text string, limit int) ([]Hit, error)
}

// Querier asks Qdrant's query API through memrank with a question's
// vector (RESTQuerier).
type Querier interface {
	QueryPoints(ctx context.Context, collection string, vector []float32, limit int) ([]Hit, error)
}

// Flusher writes the accesses memrank has counted; *rank.Recorder is one.
type Flusher interface {
	Flush(ctx context.Context) error
}

// The systems asked, and the suffixes of their copies of the collections.
const (
	SystemRaw      = "raw"
	SystemRetrieve = "retrieve"
	SystemQuery    = "query"

	RetrieveSuffix = "_retrieve" // /v1/retrieve's copy; raw asks it too
	QuerySuffix    = "_query"    // qdrant query's copy
)

// System is one row of the report: a way of asking.
type System struct {
	Name        string `json:"name"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Systems are the systems asked, in the report's order.
func Systems() []System {
	return []System{
		{SystemRaw, "raw", "the store's similarity order: the question's vector sent straight to the store"},
		{SystemRetrieve, "/v1/retrieve", "memrank's native API with the question's text (defaults: accesses counted)"},
		{SystemQuery, "qdrant query", "POST /collections/{c}/points/query with the question's vector, through memrank's REST front"},
	}
}

// Config is one evaluation.
type Config struct {
	Bench *Bench
	File  string // for the report
	// Store receives the memories (each conversation in two copies, with
	// RetrieveSuffix and QuerySuffix; neither may exist yet) and answers
	// the raw system.
	Store    Store
	Embedder Embedder
	// Codec encodes the memories' payloads; its keys name the turn ids
	// the answers are read by.
	Codec     *memory.Codec
	Retriever Retriever
	Querier   Querier
	// Flusher writes the counted accesses between two questions.
	Flusher Flusher
	// WritePath observes every turn through Observer (memrank's write
	// path) instead of writing it to the store as a memory of its own;
	// Speaker names each turn's speaker in its observation.
	WritePath bool
	Speaker   bool
	Observer  Observer
	// Notes are added to the report.
	Notes []string
	// Progress, when not nil, is told of the work done in each stage
	// ("loading" or, through the write path, "observing"; "asking").
	Progress func(stage string, done, total int)
}

// loadBatch is the turns embedded and upserted at a time.
const loadBatch = 128

// Run loads the conversations, asks every question of every system and
// returns the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	switch {
	case cfg.Bench == nil:
		return nil, errors.New("locomo: no bench")
	case cfg.Store == nil || cfg.Embedder == nil || cfg.Codec == nil:
		return nil, errors.New("locomo: a store, an embedder and a codec are required")
	case cfg.Retriever == nil || cfg.Querier == nil || cfg.Flusher == nil:
		return nil, errors.New("locomo: a retriever, a querier and a flusher are required")
	case cfg.WritePath && cfg.Observer == nil:
		return nil, errors.New("locomo: the write path needs an observer")
	case cfg.Speaker && !cfg.WritePath:
		return nil, errors.New("locomo: speakers are given to the write path only")
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	b := cfg.Bench
	turns, total := b.Turns(), b.Questions()
	done, stage := 0, "loading"
	var writes []*WriteStats
	if cfg.WritePath {
		stage, writes = "observing", make([]*WriteStats, len(b.Conversations))
	}
	start := time.Now()
	progress(stage, 0, turns)
	for i := range b.Conversations {
		c := &b.Conversations[i]
		count := func(n int) { done += n; progress(stage, done, turns) }
		var err error
		if cfg.WritePath {
			writes[i], err = observe(ctx, cfg, c, count)
		} else {
			err = load(ctx, cfg, c, count)
		}
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: %w", c.SampleID, err)
		}
	}
	loading := time.Since(start)
	turnKey := cfg.Codec.Keys().TurnIDs
	answers := make([]QuestionResult, 0, total)
	progress("asking", 0, total)
	for i := range b.Conversations {
		c := &b.Conversations[i]
		vecs, err := embedAll(ctx, cfg.Embedder, questionTexts(c.Questions))
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: embedding the questions: %w", c.SampleID, err)
		}
		for j := range c.Questions {
			q := &c.Questions[j]
			res, err := ask(ctx, cfg, c, q, vecs[j], turnKey)
			if err != nil {
				return nil, fmt.Errorf("locomo: %s question %d: %w", c.SampleID, q.Index, err)
			}
			answers = append(answers, res)
			progress("asking", len(answers), total)
		}
	}
	return newReport(cfg, answers, writes, loading), nil
}

// load creates the conversation's two collections, each with its audit
// companion recording the embedder, and writes every turn into both.
func load(ctx context.Context, cfg Config, c *Conversation, progress func(int)) error {
	dims := cfg.Embedder.Dimensions()
	if dims <= 0 {
		return fmt.Errorf("the embedder reports %d dimensions", dims)
	}
	names := []string{c.Collection() + RetrieveSuffix, c.Collection() + QuerySuffix}
	for _, name := range names {
		if err := create(ctx, cfg, name, dims); err != nil {
			return err
		}
	}
	for start := 0; start < len(c.Points); start += loadBatch {
		batch := c.Points[start:min(start+loadBatch, len(c.Points))]
		texts := make([]string, len(batch))
		for i := range batch {
			texts[i] = batch[i].Text
		}
		vecs, err := embedAll(ctx, cfg.Embedder, texts)
		if err != nil {
			return fmt.Errorf("embedding the turns: %w", err)
		}
		for _, name := range names {
			pts := make([]*qdrant.PointStruct, len(batch))
			for i := range batch {
				pts[i] = &qdrant.PointStruct{
					Id:      qdrant.NewIDNum(batch[i].ID),
					Vectors: qdrant.NewVectorsDense(vecs[i]),
					Payload: cfg.Codec.Encode(batch[i].Memory()),
				}
			}
			if _, err := cfg.Store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
				return fmt.Errorf("writing into %q: %w", name, err)
			}
		}
		progress(len(batch))
	}
	return nil
}

// create creates a collection and its audit companion with the embedder
// record, as memrank's write path (and the demo) leave them. A collection
// that exists is an error: its access counts would carry over from an
// earlier run.
func create(ctx context.Context, cfg Config, name string, dims int) error {
	companion := memory.AuditCollection(name)
	for _, n := range []string{name, companion} {
		exists, err := cfg.Store.CollectionExists(ctx, n)
		if err != nil {
			return fmt.Errorf("collection %q: %w", n, err)
		}
		if exists {
			return fmt.Errorf("collection %q exists already (an earlier run's? its access counts would carry over): use a new data directory", n)
		}
	}
	err := cfg.Store.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(dims), Distance: qdrant.Distance_Cosine}),
	})
	if err != nil {
		return fmt.Errorf("creating %q: %w", name, err)
	}
	err = cfg.Store.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: companion,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 1, Distance: qdrant.Distance_Cosine}),
	})
	if err != nil {
		return fmt.Errorf("creating %q: %w", companion, err)
	}
	rec := memory.EmbedderRecord{Model: cfg.Embedder.Model(), Dimensions: dims, Collection: name}
	_, err = cfg.Store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: companion, Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{rec.Point()}})
	if err != nil {
		return fmt.Errorf("recording the embedder in %q: %w", companion, err)
	}
	return nil
}

func questionTexts(qs []Question) []string {
	texts := make([]string, len(qs))
	for i := range qs {
		texts[i] = qs[i].Text
	}
	return texts
}

// embedAll embeds texts in batches of loadBatch.
func embedAll(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += loadBatch {
		batch := texts[start:min(start+loadBatch, len(texts))]
		vecs, err := e.Embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(batch))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// ask asks one question of every system, then flushes the accesses the
// memrank systems counted, so that the next question sees them.
func ask(ctx context.Context, cfg Config, c *Conversation, q *Question, vec []float32, turnKey string) (QuestionResult, error) {
	res := QuestionResult{
		SampleID: q.SampleID, Question: q.Index, Category: q.Category, CategoryName: CategoryName(q.Category),
		Recent: q.Recent, Text: q.Text, Evidence: q.Evidence, Systems: make(map[string]Answer, 3),
	}
	pts, err := cfg.Store.Query(ctx, &qdrant.QueryPoints{
		CollectionName: c.Collection() + RetrieveSuffix,
		Query:          qdrant.NewQueryDense(vec),
		Limit:          qdrant.PtrOf(uint64(Limit)),
		WithPayload:    qdrant.NewWithPayload(true),
	})
	if err != nil {
		return res, fmt.Errorf("raw: %w", err)
	}
	res.Systems[SystemRaw] = newAnswer(q.Evidence, storeHits(pts, turnKey))

	hits, err := cfg.Retriever.Retrieve(ctx, c.Collection()+RetrieveSuffix, q.Text, Limit)
	if err != nil {
		return res, fmt.Errorf("/v1/retrieve: %w", err)
	}
	res.Systems[SystemRetrieve] = newAnswer(q.Evidence, hits)

	if hits, err = cfg.Querier.QueryPoints(ctx, c.Collection()+QuerySuffix, vec, Limit); err != nil {
		return res, fmt.Errorf("qdrant query: %w", err)
	}
	res.Systems[SystemQuery] = newAnswer(q.Evidence, hits)

	if err := cfg.Flusher.Flush(ctx); err != nil {
		return res, fmt.Errorf("flushing the access counts: %w", err)
	}
	return res, nil
}

// storeHits reads the store's answer.
func storeHits(pts []*qdrant.ScoredPoint, turnKey string) []Hit {
	hits := make([]Hit, len(pts))
	for i, p := range pts {
		hits[i].ID = pointID(p.GetId())
		for _, v := range p.GetPayload()[turnKey].GetListValue().GetValues() {
			if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok {
				hits[i].TurnIDs = append(hits[i].TurnIDs, s.StringValue)
			}
		}
	}
	return hits
}

func pointID(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return strings.ToLower(u)
	}
	return fmt.Sprint(id.GetNum())
}
