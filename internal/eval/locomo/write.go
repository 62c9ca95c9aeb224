package locomo

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// Observation is one turn as the write path is told of it: the body of
// POST /v1/observe.
type Observation struct {
	Collection string    `json:"collection"`
	Text       string    `json:"text"`
	Source     string    `json:"source"`
	SessionID  string    `json:"session_id"`
	TurnID     string    `json:"turn_id"`
	ObservedAt time.Time `json:"observed_at"`
	// Speaker is the turn's speaker, given with Config.Speaker only.
	Speaker string `json:"speaker,omitempty"`
}

// Outcome is what the write path did with an observation: the members of
// its answer the report reads.
type Outcome struct {
	Decision string `json:"decision"` // inserted, restatement, independent, contradiction, ...
	MemoryID string `json:"memory_id"`
	// Tier is the dedup tier that found a match (1 text hash, 2
	// similarity, 3 the judge); 0 none.
	Tier int `json:"dedup_tier"`
}

// Observer sends one observation to memrank's write path
// (NativeObserver).
type Observer interface {
	Observe(ctx context.Context, obs Observation) (Outcome, error)
}

// NativeObserver observes in process: POST /v1/observe on Handler
// (server/native's Service.Handler()).
type NativeObserver struct {
	Handler http.Handler
	Header  http.Header // added to every request (an api-key, say)
}

// Observe implements Observer.
func (n NativeObserver) Observe(ctx context.Context, obs Observation) (Outcome, error) {
	body, err := json.Marshal(struct {
		Observation
		ObservedAt string `json:"observed_at"`
	}{obs, obs.ObservedAt.UTC().Format(time.RFC3339)})
	if err != nil {
		return Outcome{}, err
	}
	var ans struct {
		Result Outcome `json:"result"`
	}
	if err := serve(ctx, n.Handler, n.Header, "/v1/observe", body, &ans); err != nil {
		return Outcome{}, err
	}
	return ans.Result, nil
}

// observation is the point's observation into collection.
func (p *Point) observation(collection string, speaker bool) Observation {
	o := Observation{Collection: collection, Text: p.Text, Source: "direct", SessionID: p.SessionID, TurnID: p.DiaID, ObservedAt: p.Time}
	if speaker {
		o.Speaker = p.Speaker
	}
	return o
}

// observe tells the write path of every turn of the conversation, in
// order, into its RetrieveSuffix copy (which the write path creates, with
// its audit companion), then copies both collections to the QuerySuffix
// copy, and measures what the write path made of the turns.
func observe(ctx context.Context, cfg Config, c *Conversation, progress func(int)) (*WriteStats, error) {
	from, to := c.Collection()+RetrieveSuffix, c.Collection()+QuerySuffix
	for _, name := range []string{from, to} {
		if err := absent(ctx, cfg.Store, name); err != nil {
			return nil, err
		}
	}
	ws := newWriteStats()
	for i := range c.Points {
		p := &c.Points[i]
		out, err := cfg.Observer.Observe(ctx, p.observation(from, cfg.Speaker))
		if err != nil {
			return nil, fmt.Errorf("observing %s: %w", p.DiaID, err)
		}
		ws.Observations++
		ws.Decisions[out.Decision]++
		if out.Tier > 0 {
			ws.DedupTiers[fmt.Sprint(out.Tier)]++
		}
		progress(1)
	}
	for _, name := range []string{from, memory.AuditCollection(from)} {
		if err := copyCollection(ctx, cfg.Store, name, copyName(name, from, to), to); err != nil {
			return nil, err
		}
	}
	mems, err := memories(ctx, cfg, from)
	if err != nil {
		return nil, err
	}
	ws.measure(c, mems)
	return ws, nil
}

// absent refuses a collection (or its companion) that exists.
func absent(ctx context.Context, st Store, name string) error {
	for _, n := range []string{name, memory.AuditCollection(name)} {
		exists, err := st.CollectionExists(ctx, n)
		if err != nil {
			return fmt.Errorf("collection %q: %w", n, err)
		}
		if exists {
			return fmt.Errorf("collection %q exists already (an earlier run's? its access counts would carry over): use a new data directory", n)
		}
	}
	return nil
}

// copyName is the name of name's copy: from's companion gives to's.
func copyName(name, from, to string) string {
	if name == from {
		return to
	}
	return memory.AuditCollection(to)
}

// copyBatch is the points read and written at a time by copyCollection.
const copyBatch = 256

// copyCollection creates to as from is (its vectors and payload indexes)
// and copies every point, with its vectors and payload. An embedder record
// (in an audit companion) is rewritten to name owner, the collection of
// the copy.
func copyCollection(ctx context.Context, st Store, from, to, owner string) error {
	info, err := st.GetCollectionInfo(ctx, from)
	if err != nil {
		return fmt.Errorf("reading %q: %w", from, err)
	}
	vc := info.GetConfig().GetParams().GetVectorsConfig()
	if vc.GetParams() == nil {
		return fmt.Errorf("%q has no single unnamed vector", from)
	}
	if err := st.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: to, VectorsConfig: vc}); err != nil {
		return fmt.Errorf("creating %q: %w", to, err)
	}
	schema := info.GetPayloadSchema()
	for _, key := range slices.Sorted(maps.Keys(schema)) {
		typ, ok := fieldType(schema[key].GetDataType())
		if !ok {
			return fmt.Errorf("%q: payload index %q of type %v", from, key, schema[key].GetDataType())
		}
		_, err := st.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: to, FieldName: key, FieldType: typ.Enum(), FieldIndexParams: schema[key].GetParams(), Wait: qdrant.PtrOf(true),
		})
		if err != nil {
			return fmt.Errorf("indexing %q in %q: %w", key, to, err)
		}
	}
	var offset *qdrant.PointId
	for {
		pts, next, err := st.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
			CollectionName: from, Offset: offset, Limit: qdrant.PtrOf(uint32(copyBatch)),
			WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true),
		})
		if err != nil {
			return fmt.Errorf("reading %q: %w", from, err)
		}
		out := make([]*qdrant.PointStruct, 0, len(pts))
		for _, p := range pts {
			vec := p.GetVectors().GetVector().GetDense().GetData()
			if len(vec) == 0 {
				return fmt.Errorf("%q: point %s has no dense vector", from, pointID(p.GetId()))
			}
			payload := p.GetPayload()
			if p.GetId().String() == memory.EmbedderRecordID().String() {
				payload = renamedRecord(payload, owner)
			}
			out = append(out, &qdrant.PointStruct{Id: p.GetId(), Vectors: qdrant.NewVectorsDense(vec), Payload: payload})
		}
		if len(out) > 0 {
			if _, err := st.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: to, Wait: qdrant.PtrOf(true), Points: out}); err != nil {
				return fmt.Errorf("writing into %q: %w", to, err)
			}
		}
		if next == nil {
			return nil
		}
		offset = next
	}
}

// renamedRecord is an embedder record's payload naming collection: the
// record's keys set anew, every other key kept.
func renamedRecord(payload map[string]*qdrant.Value, collection string) map[string]*qdrant.Value {
	rec := memory.ParseEmbedderRecord(payload)
	rec.Collection = collection
	out := maps.Clone(payload)
	maps.Copy(out, rec.Point().GetPayload())
	return out
}

// fieldType is the index type of a payload schema type.
func fieldType(t qdrant.PayloadSchemaType) (qdrant.FieldType, bool) {
	switch t {
	case qdrant.PayloadSchemaType_Keyword:
		return qdrant.FieldType_FieldTypeKeyword, true
	case qdrant.PayloadSchemaType_Integer:
		return qdrant.FieldType_FieldTypeInteger, true
	case qdrant.PayloadSchemaType_Float:
		return qdrant.FieldType_FieldTypeFloat, true
	case qdrant.PayloadSchemaType_Geo:
		return qdrant.FieldType_FieldTypeGeo, true
	case qdrant.PayloadSchemaType_Text:
		return qdrant.FieldType_FieldTypeText, true
	case qdrant.PayloadSchemaType_Bool:
		return qdrant.FieldType_FieldTypeBool, true
	case qdrant.PayloadSchemaType_Datetime:
		return qdrant.FieldType_FieldTypeDatetime, true
	case qdrant.PayloadSchemaType_Uuid:
		return qdrant.FieldType_FieldTypeUuid, true
	}
	return 0, false
}

// storedMemory is a memory the write path left: its point id and record.
type storedMemory struct {
	ID string
	M  memory.Memory
}

// memories reads every memory of collection, in the store's order.
func memories(ctx context.Context, cfg Config, collection string) ([]storedMemory, error) {
	var out []storedMemory
	var offset *qdrant.PointId
	for {
		pts, next, err := cfg.Store.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
			CollectionName: collection, Offset: offset, Limit: qdrant.PtrOf(uint32(copyBatch)),
			WithPayload: qdrant.NewWithPayload(true),
		})
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", collection, err)
		}
		for _, p := range pts {
			out = append(out, storedMemory{ID: pointID(p.GetId()), M: cfg.Codec.DecodeQdrant(p.GetPayload())})
		}
		if next == nil {
			return out, nil
		}
		offset = next
	}
}

// sessionQualified is a turn id as the write path stores it, qualified by
// its session ("session_3:D3:5").
var sessionQualified = regexp.MustCompile(`^session_[0-9]+:`)

// TurnOf is the LoCoMo turn id of a stored one: the write path qualifies
// turn ids by their session ("session_3:D3:5" is D3:5).
func TurnOf(id string) string {
	if loc := sessionQualified.FindStringIndex(id); loc != nil {
		return id[loc[1]:]
	}
	return id
}

// MaxFoldExamples is how many cross-speaker folds a report lists.
const MaxFoldExamples = 20

// WriteStats is what the write path made of a set of turns.
type WriteStats struct {
	// Observations are the turns observed.
	Observations int `json:"observations"`
	// Decisions counts the outcomes by decision (inserted, restatement,
	// independent, contradiction, ...).
	Decisions map[string]int `json:"decisions"`
	// DedupTiers counts the outcomes a tier matched, by tier ("1" text
	// hash, "2" similarity, "3" the judge).
	DedupTiers map[string]int `json:"dedup_tiers"`
	// Memories are the memories not superseded; Superseded the others
	// (merged into another, or superseded by a contradiction).
	Memories   int `json:"memories"`
	Superseded int `json:"superseded"`
	// Folds are the turns that are no memory of their own: the turn ids of
	// the memories (not superseded) beyond each one's first.
	Folds int `json:"folds"`
	// CrossSpeakerFolds are the memories (not superseded) whose turns
	// are more than one speaker's.
	CrossSpeakerFolds int `json:"cross_speaker_folds"`
	// EvidenceFolds are the evidence turns of the questions asked that
	// are a memory's turn but not its first.
	EvidenceFolds int `json:"evidence_folds"`
	// CrossSpeakerExamples are up to MaxFoldExamples of the cross-speaker
	// folds, in conversation order.
	CrossSpeakerExamples []FoldExample `json:"cross_speaker_examples"`
}

// FoldExample is a memory that folds several speakers' turns.
type FoldExample struct {
	SampleID string     `json:"sample_id"`
	MemoryID string     `json:"memory_id"`
	Text     string     `json:"text"` // the memory's
	Turns    []FoldTurn `json:"turns"`
}

// FoldTurn is one turn of a fold.
type FoldTurn struct {
	TurnID  string `json:"turn_id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
}

func newWriteStats() *WriteStats {
	return &WriteStats{Decisions: map[string]int{}, DedupTiers: map[string]int{}, CrossSpeakerExamples: []FoldExample{}}
}

// add adds o's counts and examples (up to MaxFoldExamples).
func (ws *WriteStats) add(o *WriteStats) {
	ws.Observations += o.Observations
	for k, v := range o.Decisions {
		ws.Decisions[k] += v
	}
	for k, v := range o.DedupTiers {
		ws.DedupTiers[k] += v
	}
	ws.Memories += o.Memories
	ws.Superseded += o.Superseded
	ws.Folds += o.Folds
	ws.CrossSpeakerFolds += o.CrossSpeakerFolds
	ws.EvidenceFolds += o.EvidenceFolds
	for _, e := range o.CrossSpeakerExamples {
		if len(ws.CrossSpeakerExamples) < MaxFoldExamples {
			ws.CrossSpeakerExamples = append(ws.CrossSpeakerExamples, e)
		}
	}
}

// measure counts the folds of the conversation's stored memories.
func (ws *WriteStats) measure(c *Conversation, mems []storedMemory) {
	turns := make(map[string]*Point, len(c.Points))
	for i := range c.Points {
		turns[c.Points[i].DiaID] = &c.Points[i]
	}
	evidence := map[string]bool{}
	for _, q := range c.Questions {
		for _, id := range q.Evidence {
			evidence[id] = true
		}
	}
	type fold struct {
		first int // the position of the memory's first turn
		ex    FoldExample
	}
	var folds []fold
	for _, sm := range mems {
		if sm.M.SupersededBy != "" {
			ws.Superseded++
			continue
		}
		ws.Memories++
		ws.Folds += max(len(sm.M.TurnIDs)-1, 0)
		ex := FoldExample{SampleID: c.SampleID, MemoryID: sm.ID, Text: sm.M.Text}
		speakers := map[string]bool{}
		first := len(c.Points)
		for i, stored := range sm.M.TurnIDs {
			id := TurnOf(stored)
			if i > 0 && evidence[id] {
				ws.EvidenceFolds++
			}
			t := FoldTurn{TurnID: id}
			if p := turns[id]; p != nil {
				t.Speaker, t.Text = p.Speaker, p.Text
				speakers[p.Speaker] = true
				first = min(first, int(p.ID))
			}
			ex.Turns = append(ex.Turns, t)
		}
		if len(speakers) > 1 {
			ws.CrossSpeakerFolds++
			folds = append(folds, fold{first, ex})
		}
	}
	slices.SortStableFunc(folds, func(a, b fold) int { return a.first - b.first })
	for _, f := range folds[:min(len(folds), MaxFoldExamples)] {
		ws.CrossSpeakerExamples = append(ws.CrossSpeakerExamples, f.ex)
	}
}
