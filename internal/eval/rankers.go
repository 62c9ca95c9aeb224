package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/server/native"
)

// Ranker answers one query of the set with a ranking.
type Ranker interface {
	Rank(ctx context.Context, q *Query, limit int) (Ranking, error)
}

// Ranking is the ids returned for a query, best first.
type Ranking struct {
	IDs []string
	// PassThrough says why a memrank ranker answered in the store's order
	// ("" when it re-ranked, and always for the raw ranker).
	PassThrough string
	// Counted are the results memrank would count as accessed (a read that
	// raises their access boost); nil when the ranker says nothing of it
	// (raw similarity, a remote memrank).
	Counted []string
}

// queryRequest is the request every local ranker sends: the same query as
// a caller's nearest-vector search.
func queryRequest(collection string, vec []float32, limit int) *qdrant.QueryPoints {
	return &qdrant.QueryPoints{
		CollectionName: collection,
		Query:          qdrant.NewQueryDense(vec),
		Limit:          qdrant.PtrOf(uint64(limit)),
		WithPayload:    qdrant.NewWithPayload(true),
	}
}

func pointKeys(pts []*qdrant.ScoredPoint) []string {
	ids := make([]string, len(pts))
	for i, p := range pts {
		ids[i] = PointKey(p.GetId())
	}
	return ids
}

// StoreRanker is the raw similarity order: the query sent straight to the
// store.
type StoreRanker struct {
	Source     rank.Source
	Collection string
}

// Rank implements Ranker.
func (r StoreRanker) Rank(ctx context.Context, q *Query, limit int) (Ranking, error) {
	if q.Vector == nil {
		return Ranking{}, fmt.Errorf("query %q has no vector", q.ID)
	}
	pts, err := r.Source.Query(ctx, queryRequest(r.Collection, q.Vector, limit))
	if err != nil {
		return Ranking{}, err
	}
	return Ranking{IDs: pointKeys(pts)}, nil
}

// MemrankRanker is a rank.Ranker asked as a caller would ask it.
type MemrankRanker struct {
	Ranker     *rank.Ranker
	Collection string
}

// Rank implements Ranker.
func (r MemrankRanker) Rank(ctx context.Context, q *Query, limit int) (Ranking, error) {
	if q.Vector == nil {
		return Ranking{}, fmt.Errorf("query %q has no vector", q.ID)
	}
	res, err := r.Ranker.Query(ctx, queryRequest(r.Collection, q.Vector, limit))
	if err != nil {
		return Ranking{}, err
	}
	out := Ranking{IDs: pointKeys(res.Points), PassThrough: res.PassThrough, Counted: []string{}}
	for _, ex := range res.Explanations {
		if !ex.Unscored && (ex.Guard == rank.GuardRelevant || ex.Guard == rank.GuardOff) && res.Reranked {
			out.Counted = append(out.Counted, PointKey(ex.ID))
		}
	}
	return out, nil
}

// RankerConfig is how the memrank rankers are built: the read path as
// configured (its Params and Codec give the scoring parameters and payload
// keys; nil: the defaults). Each variant changes its guard and confidence
// weight (and the fit its weights); every collection is re-ranked, nothing
// is counted, per-collection and per-embedder settings do not apply.
type RankerConfig struct {
	Rank rank.Config
}

// params are the configured scoring parameters.
func (c RankerConfig) params() *scoring.Params {
	switch {
	case c.Rank.Params != nil:
		return c.Rank.Params
	case c.Rank.Codec != nil:
		return c.Rank.Codec.Params()
	}
	return scoring.DefaultParams()
}

// codec is a codec on the configured payload keys with parameters p.
func (c RankerConfig) codec(p *scoring.Params) (*memory.Codec, error) {
	keys := memory.DefaultKeys()
	if c.Rank.Codec != nil {
		keys = c.Rank.Codec.Keys()
	}
	return memory.NewCodec(keys, p)
}

// New builds a ranker over src with setting s, the confidence weights w
// (nil: the configured ones) and the clock stopped at now. It has no
// Recorder (an eval never writes access counts) and re-ranks every
// collection.
func (c RankerConfig) New(src rank.Source, s Setting, w *scoring.Weights, now time.Time) (*rank.Ranker, error) {
	p := *c.params()
	p.ConfidenceWeight, p.FreshnessWeight, p.AccessWeight, p.FocusFloor = s.ConfidenceWeight, s.FreshnessWeight, s.AccessWeight, s.FocusFloor
	if s.GateOff {
		p.RetrievalGate = 0
	}
	if w != nil {
		p.Weights = *w
	}
	codec, err := c.codec(&p)
	if err != nil {
		return nil, err
	}
	rc := c.Rank
	rc.Params, rc.Codec, rc.Mode, rc.Guard = &p, codec, rank.ModeRerank, s.Guard
	rc.Collections, rc.EmbedderGuards, rc.Recorder = nil, nil, nil
	rc.Now = func() time.Time { return now }
	return rank.New(src, rc)
}

// Retriever is a running memrank's POST /v1/retrieve; *apiclient.Remote
// is one.
type Retriever interface {
	Retrieve(ctx context.Context, body []byte) (*native.RetrieveResponse, error)
}

// remoteRanker is the server's answer for collection: mode "off" asks for
// the store's own order, "" for memrank's as configured on the server.
type remoteRanker struct {
	r          Retriever
	collection string
	mode       string
}

// retrieveBody is the request: a query without a vector sends its text,
// which the server embeds with the embedder its collection was written
// with.
type retrieveBody struct {
	Collection string    `json:"collection"`
	Vector     []float32 `json:"vector,omitempty"`
	Text       string    `json:"text,omitempty"`
	Limit      int       `json:"limit"`
	Explain    bool      `json:"explain"`
	Mode       string    `json:"mode,omitempty"`
}

// Rank implements Ranker.
func (rr remoteRanker) Rank(ctx context.Context, q *Query, limit int) (Ranking, error) {
	body := retrieveBody{Collection: rr.collection, Limit: limit, Mode: rr.mode}
	if q.Vector != nil {
		body.Vector = q.Vector
	} else {
		body.Text = q.Text
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Ranking{}, err
	}
	ans, err := rr.r.Retrieve(ctx, b)
	if err != nil {
		return Ranking{}, err
	}
	out := Ranking{IDs: make([]string, len(ans.Result))}
	for i, res := range ans.Result {
		if out.IDs[i], err = answerID(res.ID); err != nil {
			return Ranking{}, fmt.Errorf("the answer's result %d: %w", i, err)
		}
	}
	if rr.mode != "off" && !ans.Reranked {
		out.PassThrough = ans.PassThrough
		if out.PassThrough == "" {
			out.PassThrough = "not re-ranked"
		}
	}
	return out, nil
}

// answerID is the set's key of a result's id.
func answerID(id native.PointID) (string, error) {
	if id.UUID != "" {
		return IDKey(id.UUID)
	}
	return strconv.FormatUint(id.Num, 10), nil
}
