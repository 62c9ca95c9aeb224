package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
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
	p.ConfidenceWeight = s.ConfidenceWeight
	if s.GateOff {
		p.RetrievalGate = 0
	}
	if s.DecayFloorOff {
		// A memory drops out when its freshness falls below k (1 - c): a
		// slope of almost 0 keeps every memory retrievable.
		p.Decay.FloorK = math.SmallestNonzeroFloat64
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

// Remote is a running memrank, asked through its native POST /v1/retrieve.
type Remote struct {
	// URL is memrank's HTTP address, e.g. http://memrank:6333.
	URL    string
	APIKey string
	// Client sends the requests (nil: http.DefaultClient); Timeout bounds
	// each (default one minute).
	Client  *http.Client
	Timeout time.Duration
}

// Validate checks the URL.
func (r *Remote) Validate() error {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", r.URL)
	}
	return nil
}

// Ranker is the server's answer for collection: mode "off" asks for the
// store's own order, "" for memrank's as configured on the server.
func (r *Remote) Ranker(collection, mode string) Ranker {
	return remoteRanker{r: r, collection: collection, mode: mode}
}

type remoteRanker struct {
	r          *Remote
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

type retrieveAnswer struct {
	Result []struct {
		ID json.RawMessage `json:"id"`
	} `json:"result"`
	Reranked    bool   `json:"reranked"`
	PassThrough string `json:"pass_through"`
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
	timeout := rr.r.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	endpoint := strings.TrimRight(rr.r.URL, "/") + "/v1/retrieve"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return Ranking{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if rr.r.APIKey != "" {
		req.Header.Set("api-key", rr.r.APIKey)
	}
	client := rr.r.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Ranking{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return Ranking{}, fmt.Errorf("reading the answer of %s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		var qe struct {
			Status struct{ Error string } `json:"status"`
		}
		msg := fmt.Sprintf("%.200s", bytes.TrimSpace(raw))
		if json.Unmarshal(raw, &qe) == nil && qe.Status.Error != "" {
			msg = qe.Status.Error
		}
		return Ranking{}, fmt.Errorf("%s: %s (HTTP %d)", endpoint, msg, resp.StatusCode)
	}
	var ans retrieveAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Ranking{}, fmt.Errorf("the answer of %s is not a retrieve response: %w", endpoint, err)
	}
	out := Ranking{IDs: make([]string, len(ans.Result))}
	for i, res := range ans.Result {
		if out.IDs[i], err = answerID(res.ID); err != nil {
			return Ranking{}, fmt.Errorf("the answer of %s: result %d: %w", endpoint, i, err)
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

// answerID reads an id as the native API writes it: an integer, every digit
// kept, or a UUID string.
func answerID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return IDKey(s)
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return "", errors.New("id: not an unsigned integer or a UUID string")
	}
	return strconv.FormatUint(n, 10), nil
}
