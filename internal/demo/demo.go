// Package demo is the data set `memrank serve --demo` loads: about 200
// memories of an invented user, Dana, a product engineer, written as
// memrank's write path would have left them after 18 months of chats
// (memories.jsonl, one {"id", "payload"} object a line, payload keys of
// docs/memory-record.md).
//
// The set is made to show re-ranking at once: every memory type and source
// level, several extractor models (a few with log-probabilities), ages from
// days to 18 months with their decay categories, access counts from three
// replicas, superseded pairs (an old job, an old city, an old launch date),
// exact and near duplicates of the same fact from different sessions,
// speculation that falls below the confidence gate, imported wiki pages
// without any memory field (unscored), and two records with a decoding
// problem on purpose (ProblemIDs). Queries lists questions whose raw vector
// order and memrank's order differ.
//
// Vectors are not stored: Load embeds each text with the embedder it is
// given (the local one for the demo) and shifts every timestamp so that the
// ages are the same on the day it runs as on the day the set was written.
//
// The set lives here, beside its loader, because go:embed cannot reach a
// parent directory; examples/demo/README.md tells what is in it and how to
// try it.
package demo

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
)

//go:embed memories.jsonl
var memoriesJSONL []byte

// Collection is the collection the demo is loaded into unless told
// otherwise.
const Collection = "dana_memories"

// Anchor is the instant the set's timestamps were written against: a memory
// created "30 days ago" has created_at Anchor minus 30 days.
func Anchor() time.Time { return time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) }

// ProblemIDs are the points whose payloads carry a decoding problem on
// purpose, so that the demo shows one in an explanation: 1901 has no stored
// confidence (computed and flagged), 1902 an unknown decay category.
func ProblemIDs() []uint64 { return []uint64{1901, 1902} }

// Point is one demo memory: its id and its payload (no vector).
type Point struct {
	ID      *qdrant.PointId
	Payload map[string]*qdrant.Value
}

// Points parses the bundled set.
func Points() ([]Point, error) { return ParsePoints(bytes.NewReader(memoriesJSONL)) }

// ParsePoints reads JSON lines of {"id": <u64 or UUID>, "payload": {...}}.
// Payload integers and floats stay distinct and u64 ids keep every digit.
// Errors name the line.
func ParsePoints(r io.Reader) ([]Point, error) {
	var out []Point
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var raw struct {
			ID      json.RawMessage `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("demo: line %d: %w", line, err)
		}
		id, err := parseID(raw.ID)
		if err != nil {
			return nil, fmt.Errorf("demo: line %d: id: %w", line, err)
		}
		payload, err := qdrantjson.DecodePayload(raw.Payload)
		if err != nil {
			return nil, fmt.Errorf("demo: line %d: payload: %w", line, err)
		}
		out = append(out, Point{ID: id, Payload: payload})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return out, nil
}

func parseID(raw json.RawMessage) (*qdrant.PointId, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return qdrant.NewID(x), nil
	case json.Number:
		var n uint64
		if _, err := fmt.Sscan(x.String(), &n); err != nil || fmt.Sprint(n) != x.String() {
			return nil, fmt.Errorf("%s is not an unsigned 64-bit integer", x)
		}
		return qdrant.NewIDNum(n), nil
	}
	return nil, errors.New("want an unsigned integer or a UUID string")
}

// timeKeys are the payload keys holding timestamps (docs/memory-record.md's
// default names, which the set uses).
var timeKeys = [...]string{"created_at", "last_observed_at", "last_accessed_at"}

// Shift moves every timestamp of the points by d (RFC 3339 strings; other
// values are left alone).
func Shift(points []Point, d time.Duration) {
	for _, p := range points {
		for _, k := range timeKeys {
			v, ok := p.Payload[k]
			if !ok {
				continue
			}
			s, ok := v.GetKind().(*qdrant.Value_StringValue)
			if !ok {
				continue
			}
			t, err := time.Parse(time.RFC3339, s.StringValue)
			if err != nil {
				continue
			}
			p.Payload[k] = qdrant.NewValueString(memory.FormatTime(t.Add(d)))
		}
	}
}

// Store is where Load writes; *qdrant.Client satisfies it.
type Store interface {
	CollectionExists(ctx context.Context, name string) (bool, error)
	CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
}

var _ Store = (*qdrant.Client)(nil)

// LoadOptions configure Load.
type LoadOptions struct {
	Collection string         // default Collection
	Embedder   embed.Embedder // required: embeds every text
	// Now shifts the timestamps by Now - Anchor so the ages are as designed;
	// the zero time keeps them as written.
	Now time.Time
	// BatchSize is the number of points embedded and upserted at a time
	// (default 64).
	BatchSize int
	// Audit, when set, writes the audit records of a batch of points
	// before they are upserted and returns how many it wrote: memrank's
	// write path never wrote these memories, and without a record their
	// audit trail would be empty. Records first, as a backfill writes them,
	// so that no memory of the demo is ever without its trail.
	Audit func(ctx context.Context, collection string, points []*qdrant.PointStruct) (int, error)
}

// LoadResult says what Load did.
type LoadResult struct {
	Collection string
	Points     int  // points written
	Audited    int  // audit records written (LoadOptions.Audit)
	Existed    bool // the collection existed: nothing was written
}

// Load creates the collection (Cosine distance, the embedder's dimension)
// and upserts every demo point with its text's vector. It also records the
// embedder in the collection's audit companion, as memrank's write path
// does, so the read path recognises the collection and uses the relevance
// guard calibrated for that embedder. With opts.Audit, each memory also
// gets an audit record, so that its history is not empty. An existing
// collection is left as it is (a second `serve --demo` on the same data directory keeps the access
// counts the first one recorded); only a missing embedder record is added.
func Load(ctx context.Context, dst Store, opts LoadOptions) (LoadResult, error) {
	if opts.Embedder == nil {
		return LoadResult{}, errors.New("demo: an embedder is required")
	}
	if opts.Collection == "" {
		opts.Collection = Collection
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	res := LoadResult{Collection: opts.Collection}
	exists, err := dst.CollectionExists(ctx, opts.Collection)
	if err != nil {
		return res, fmt.Errorf("demo: collection %q: %w", opts.Collection, err)
	}
	if exists {
		res.Existed = true
		return res, recordEmbedder(ctx, dst, opts)
	}
	points, err := Points()
	if err != nil {
		return res, err
	}
	if !opts.Now.IsZero() {
		Shift(points, opts.Now.Sub(Anchor()))
	}
	dims := opts.Embedder.Dimensions()
	if dims <= 0 {
		return res, fmt.Errorf("demo: the embedder reports %d dimensions", dims)
	}
	err = dst.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: opts.Collection,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(dims), Distance: qdrant.Distance_Cosine}),
	})
	if err != nil {
		return res, fmt.Errorf("demo: creating %q: %w", opts.Collection, err)
	}
	if err := recordEmbedder(ctx, dst, opts); err != nil {
		return res, err
	}
	for start := 0; start < len(points); start += opts.BatchSize {
		batch := points[start:min(start+opts.BatchSize, len(points))]
		texts := make([]string, len(batch))
		for i, p := range batch {
			texts[i] = p.Payload["text"].GetStringValue()
		}
		vecs, err := opts.Embedder.Embed(ctx, texts)
		if err != nil {
			return res, fmt.Errorf("demo: embedding: %w", err)
		}
		if len(vecs) != len(batch) {
			return res, fmt.Errorf("demo: the embedder returned %d vectors for %d texts", len(vecs), len(batch))
		}
		ups := make([]*qdrant.PointStruct, len(batch))
		for i, p := range batch {
			ups[i] = &qdrant.PointStruct{Id: p.ID, Vectors: qdrant.NewVectorsDense(vecs[i]), Payload: p.Payload}
		}
		if opts.Audit != nil {
			n, err := opts.Audit(ctx, opts.Collection, ups)
			if err != nil {
				return res, fmt.Errorf("demo: writing the audit records: %w", err)
			}
			res.Audited += n
		}
		if _, err := dst.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: opts.Collection, Wait: qdrant.PtrOf(true), Points: ups}); err != nil {
			return res, fmt.Errorf("demo: upserting: %w", err)
		}
		res.Points += len(batch)
	}
	return res, nil
}

// recordEmbedder creates the collection's audit companion with its
// embedder record, unless the companion exists (a collection the write
// path has written into keeps its own record).
func recordEmbedder(ctx context.Context, dst Store, opts LoadOptions) error {
	companion := memory.AuditCollection(opts.Collection)
	exists, err := dst.CollectionExists(ctx, companion)
	if err != nil {
		return fmt.Errorf("demo: collection %q: %w", companion, err)
	}
	if exists {
		return nil
	}
	err = dst.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: companion,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 1, Distance: qdrant.Distance_Cosine}),
	})
	if err != nil {
		return fmt.Errorf("demo: creating %q: %w", companion, err)
	}
	rec := memory.EmbedderRecord{Model: opts.Embedder.Model(), Dimensions: opts.Embedder.Dimensions(), Collection: opts.Collection}
	_, err = dst.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: companion, Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{rec.Point()}})
	if err != nil {
		return fmt.Errorf("demo: recording the embedder in %q: %w", companion, err)
	}
	return nil
}

// Query is an example question for the demo.
type Query struct {
	Text string
	// Top is a piece of the text of the memory memrank puts first with the
	// default (semantic) embedder; TopLocal with the lexical one, when it
	// differs ("" when it does not).
	Top, TopLocal string
	// Story says what re-ranking changes for this question.
	Story string
}

// TopFor is the piece of text of the memory memrank puts first with the
// embedder model (a model name with or without its ":dimensions").
func (q Query) TopFor(model string) string {
	if q.TopLocal != "" && strings.HasPrefix(model, embed.LocalModelVersion) {
		return q.TopLocal
	}
	return q.Top
}

// Queries are the demo's example questions. For each, the raw vector order
// and memrank's order differ, and memrank puts the memory holding Top first
// (server/native's end-to-end test checks both through the real ranker).
func Queries() []Query {
	return []Query{
		{Text: "what editor does Dana use", Top: "Uses Neovim as her main editor", TopLocal: "Neovim is the editor she uses every day",
			Story: "A paraphrase is the closest text; it and two copies fold into \"Uses Neovim as her main editor\" (direct, re-observed in five sessions), which is shown because of duplicates the best established one is; a guess about Zed drops below the confidence gate. The lexical embedder does not see the paraphrase as a duplicate (they share few words): the paraphrase comes first, the direct statement second."},
		{Text: "where does Dana live", Top: "Her parents live in Madison, Wisconsin", TopLocal: "Her sister Leah lives in Toronto",
			Story: "Her parents' city is the closest text and stays first: relevance comes first, and neither its age (15 months) nor Lisbon's 34 reads may outweigh a similarity half again as high. \"Lives in Chicago\" was superseded when Dana moved: it is never returned; a guess that she lives near the river is gated out; Lisbon follows."},
		{Text: "database version", Top: "PostgreSQL 16.4",
			Story: "A speculation about version 17 is near the top and is gated out; the confirmed PostgreSQL 16.4 leads, its duplicate folded in; the imported runbook (no memory fields: unscored) stays, ranked on similarity alone."},
		{Text: "where does Dana work", Top: "Sam works as a nurse at Hospital de Santa Maria", TopLocal: "Takes notes in Obsidian",
			Story: "Her partner's job is the closest text and stays first; Acme Robotics (91 accesses from three replicas) follows two places down; Fintrack is superseded and never returned."},
		{Text: "when does Project Atlas launch", Top: "Project Atlas launches on January 15",
			Story: "\"Might be cancelled\" is the closest text and a speculation: gated out; January 15 leads, the superseded December 1 date is never returned."},
		{Text: "what is Dana allergic to", Top: "Is allergic to peanuts",
			Story: "The peanut allergy (direct, three re-observations) leads and its restatement with an exclamation mark folds into it; \"could be allergic to cats\" is gated out."},
	}
}
