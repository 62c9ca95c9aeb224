package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// RetrieveResponse is the answer of POST /v1/retrieve, in Qdrant's envelope
// ({"result", "status", "time"}) plus whether the results were re-ranked.
// Those members beside the envelope's are why it is encoded from this type
// rather than with qdrantjson.WriteResult.
type RetrieveResponse struct {
	Result []Result `json:"result"`
	Status string   `json:"status"`
	Time   float64  `json:"time"`
	// Reranked is false when the collection is passed through (not a memory
	// collection, or a distance memrank does not re-rank); PassThrough says
	// why, and the scores are then Qdrant's.
	Reranked    bool   `json:"reranked"`
	PassThrough string `json:"pass_through,omitempty"`
	// Mode is how the collection was served (rerank, shadow or off) and
	// Detection the rule that decided it, e.g. "has an audit companion
	// (written by memrank)" or "none of 32 sampled points is a memrank
	// memory".
	Mode      string `json:"mode"`
	Detection string `json:"detection"`
	// Embedder is the model the collection records, with the write path's
	// tier-2 bands calibrated for it (absent when none is recorded).
	Embedder *EmbedderReport `json:"embedder,omitempty"`
	// Guard is the relevance band of a re-ranked answer (null otherwise).
	Guard *GuardReport `json:"guard"`
	// Shadow compares the store's answer (the results) with memrank's, in
	// shadow mode (null otherwise).
	Shadow *ShadowReport `json:"shadow,omitempty"`
	// Dropped are the candidates left out and why: superseded,
	// not_retrievable, archived, below_gate, folded (into a result).
	// Candidates past the limit are not listed. Null when the answer was
	// not re-ranked.
	Dropped []DroppedCandidate `json:"dropped"`
	// At is the time the answer was computed as of: the request's at
	// (RFC 3339), absent when it asked for none (then: now).
	At string `json:"at,omitempty"`
	// Empty says why a re-ranked answer is empty although the store had
	// candidates (every one superseded or archived, or the offset past
	// them); absent otherwise.
	Empty string `json:"empty,omitempty"`
}

// DroppedCandidate is a candidate left out of a re-ranked answer.
type DroppedCandidate struct {
	ID        PointID  `json:"id"`
	Reason    string   `json:"reason"`
	Into      *PointID `json:"into,omitempty"` // the result it was folded into
	BaseScore Float    `json:"base_score"`
}

func newDropped(res *rank.Result) []DroppedCandidate {
	if !res.Reranked {
		return nil
	}
	out := make([]DroppedCandidate, 0, len(res.Dropped))
	for _, d := range res.Dropped {
		c := DroppedCandidate{ID: NewPointID(d.ID), Reason: d.Reason, BaseScore: Float(d.BaseScore)}
		if d.Into != nil {
			into := NewPointID(d.Into)
			c.Into = &into
		}
		out = append(out, c)
	}
	return out
}

// GuardReport is the relevance guard of one query: results whose base score
// is at least cutoff are relevant and counted as read. Relevant and Beyond
// count the returned results inside and outside the band, Folded the
// relevant candidates folded into them; Focus is the query's focus on
// recent memories the weights were computed with.
type GuardReport struct {
	Applied      bool   `json:"applied"`
	Relative     bool   `json:"relative"` // the band is a fraction of the best score (fusion, formula, sparse)
	Best         Float  `json:"best"`
	Cutoff       Float  `json:"cutoff"`
	Band         Float  `json:"band"`
	Floor        Float  `json:"floor"`
	RelativeBand Float  `json:"relative_band"`
	From         string `json:"from"` // default, embedder <model>, collection
	Relevant     int    `json:"relevant"`
	Beyond       int    `json:"beyond"`
	Folded       int    `json:"folded"`
	Focus        Float  `json:"focus"`
}

// EmbedderReport is a collection's recorded embedder and its bands: a
// cosine at or above same_threshold is the same fact, [judge_threshold,
// same_threshold) goes to the judge. The bands are null when the
// configuration's apply (an embedder memrank has no calibration for).
type EmbedderReport struct {
	Model          string `json:"model"`
	SameThreshold  *Float `json:"same_threshold"`
	JudgeThreshold *Float `json:"judge_threshold"`
}

func newEmbedderReport(d rank.Detection) *EmbedderReport {
	if d.Embedder == "" {
		return nil
	}
	r := &EmbedderReport{Model: d.Embedder}
	// The configured bands are not known here: zero stands for them.
	if b := embed.BandsFor(d.Embedder, embed.Bands{Same: d.SameThreshold, Judge: d.JudgeThreshold}, embed.Bands{}); b.Same > 0 {
		s, j := Float(b.Same), Float(b.Judge)
		r.SameThreshold, r.JudgeThreshold = &s, &j
	}
	return r
}

func newGuardReport(res *rank.Result) *GuardReport {
	if !res.Reranked {
		return nil
	}
	g := res.Guard
	return &GuardReport{
		Applied: g.Applied, Relative: g.Relative, Best: Float(g.Best), Cutoff: Float(g.Cutoff),
		Band: Float(g.Guard.Band), Floor: Float(g.Guard.Floor), RelativeBand: Float(g.Guard.RelativeBand),
		From: g.From, Relevant: g.Relevant, Beyond: g.Beyond, Folded: g.Folded, Focus: Float(g.Focus),
	}
}

// ShadowReport is rank.ShadowReport in JSON.
type ShadowReport struct {
	Store      []PointID `json:"store"`
	Memrank    []PointID `json:"memrank"`
	Overlap    Float     `json:"overlap"`
	TopChanged bool      `json:"top_changed"`
	Moved      int       `json:"moved"`
	Dropped    int       `json:"dropped"`
}

func newShadowReport(r *rank.ShadowReport) *ShadowReport {
	if r == nil {
		return nil
	}
	out := &ShadowReport{Store: []PointID{}, Memrank: []PointID{}, Overlap: Float(r.Overlap), TopChanged: r.TopChanged, Moved: r.Moved, Dropped: r.Dropped}
	for _, id := range r.Store {
		out.Store = append(out.Store, NewPointID(id))
	}
	for _, id := range r.Memrank {
		out.Memrank = append(out.Memrank, NewPointID(id))
	}
	return out
}

// Result is one retrieved memory with the factors of its score.
type Result struct {
	ID PointID `json:"id"`
	// Score is what the point is returned with: the weight base_score x
	// freshness_factor x access_boost x confidence factor; Qdrant's score
	// when the request was passed through.
	Score     Float `json:"score"`
	BaseScore Float `json:"base_score"`
	Weight    Float `json:"weight"`
	// Guard is the relevance guard's decision: relevant (counted as an
	// access), below_band or below_floor (not counted), off (the guard is
	// disabled: counted); null when passed through.
	Guard *string `json:"guard"`
	// Confidence and Bucket are null for an unscored point (one carrying
	// none of the confidence fields: a foreign point, never gated). Every
	// factor is null when the request was passed through (Reranked false).
	Confidence *Float `json:"confidence"`
	// Freshness is f = 0.5^(age / half-life); FreshnessFactor what age
	// took off the weight for this query (docs/scoring.md).
	Freshness       *Float `json:"freshness"`
	FreshnessFactor *Float `json:"freshness_factor"`
	AccessCount     *int64 `json:"access_count"`
	AccessBoost     *Float `json:"access_boost"`
	Render          bool   `json:"render"`
	BelowGate       bool   `json:"below_gate"`
	// Tier is the tier as of the answer's clock (the request's at, else
	// now); StoredTier the one the payload holds, as the last consolidation
	// wrote it (null when it holds none).
	Tier       *string `json:"tier"`
	StoredTier *string `json:"stored_tier"`
	Bucket     *string `json:"bucket"`
	// Retrievable is false only for an archived memory returned because
	// include_archived asked for it.
	Retrievable    bool      `json:"retrievable"`
	Protected      bool      `json:"protected"`
	FoldedIDs      []PointID `json:"folded_ids"`
	Dedup          *string   `json:"dedup"` // how duplicates were folded: text_hash, vector, judge_cache; null: none
	JudgeConsulted bool      `json:"judge_consulted"`
	Problems       []string  `json:"problems"`
	// Archived says why an archived memory is in the answer (only with
	// include_archived): archived (by a person or a review), stored as not
	// retrievable.
	Archived    string          `json:"archived,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Explanation *Explanation    `json:"explanation,omitempty"`
}

// Explanation is every factor behind a score (scoring.Explanation). Values
// that are not finite are written as null: days_to_archive is null for a
// memory that decay never archives (protected, or no decay). For an
// unscored point the numeric confidence factors (source to confidence) and
// the bucket are null: it has none (its grounding is the zero value and
// means nothing).
type Explanation struct {
	Unscored           bool    `json:"unscored"`
	Source             Float   `json:"source"`
	Observations       int     `json:"observations"`
	Repetition         Float   `json:"repetition"`
	Extractor          Float   `json:"extractor"`
	Type               Float   `json:"type"`
	Grounding          string  `json:"grounding"`
	Formula            Float   `json:"formula"`
	GroundingPenalty   Float   `json:"grounding_penalty"`
	Computed           Float   `json:"computed"`
	StoredConfidence   bool    `json:"stored_confidence"`
	ComputedConfidence bool    `json:"computed_confidence"`
	Confidence         Float   `json:"confidence"`
	AgeDays            Float   `json:"age_days"`
	HalfLife           Float   `json:"half_life"`
	Freshness          Float   `json:"freshness"`
	FreshnessWeight    Float   `json:"freshness_weight"`
	Focus              Float   `json:"focus"`
	FreshnessFactor    Float   `json:"freshness_factor"`
	IdleDays           Float   `json:"idle_days"`
	DecayFloor         Float   `json:"decay_floor"`
	DaysToArchive      Float   `json:"days_to_archive"`
	AccessCount        int64   `json:"access_count"`
	AccessWeight       Float   `json:"access_weight"`
	AccessBoost        Float   `json:"access_boost"`
	ConfidenceWeight   Float   `json:"confidence_weight"`
	ConfidenceFactor   Float   `json:"confidence_factor"`
	Base               Float   `json:"base"`
	Weight             Float   `json:"weight"`
	WithinDecayFloor   bool    `json:"within_decay_floor"`
	Protected          bool    `json:"protected"`
	Tier               string  `json:"tier"`
	Bucket             *string `json:"bucket"`
	BelowGate          bool    `json:"below_gate"`
	Render             bool    `json:"render"`
}

// Float is a float64 written as null when it is NaN or infinite (JSON has
// no such numbers); null reads back as +Inf.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.Inf(1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*f = Float(v)
	return nil
}

// PointID is a point id as Qdrant's REST API writes it: an unsigned integer
// (every digit kept, never through float64) or a UUID string.
type PointID struct {
	Num  uint64
	UUID string // set for UUID ids
}

// NewPointID converts a protobuf id.
func NewPointID(id *qdrant.PointId) PointID {
	if u, ok := id.GetPointIdOptions().(*qdrant.PointId_Uuid); ok {
		return PointID{UUID: u.Uuid}
	}
	return PointID{Num: id.GetNum()}
}

// Proto is the protobuf id.
func (p PointID) Proto() *qdrant.PointId {
	if p.UUID != "" {
		return qdrant.NewID(p.UUID)
	}
	return qdrant.NewIDNum(p.Num)
}

func (p PointID) String() string {
	if p.UUID != "" {
		return p.UUID
	}
	return strconv.FormatUint(p.Num, 10)
}

// MarshalJSON implements json.Marshaler.
func (p PointID) MarshalJSON() ([]byte, error) {
	return qdrantjson.AppendPointID(nil, p.Proto()), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *PointID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*p = PointID{}
		return json.Unmarshal(b, &p.UUID)
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return errors.New("a point id is an unsigned integer or a UUID string")
	}
	*p = PointID{Num: n}
	return nil
}

// buildResults turns the ranker's answer into results. explain adds the
// factor breakdown.
func buildResults(res *rank.Result, explain bool) []Result {
	out := make([]Result, len(res.Points))
	for i, pt := range res.Points {
		r := &out[i]
		r.ID = NewPointID(pt.GetId())
		r.Score = Float(pt.GetScore())
		r.BaseScore, r.Weight = r.Score, r.Score
		r.FoldedIDs, r.Problems = []PointID{}, []string{}
		if pt.GetPayload() != nil {
			r.Payload = qdrantjson.AppendPayload(nil, pt.GetPayload())
		}
		if i >= len(res.Explanations) {
			// Passed through: Qdrant's score is all there is; nothing was
			// gated or hidden.
			r.Retrievable, r.Render = true, true
			continue
		}
		e := &res.Explanations[i]
		if !res.Reranked {
			// Passed through: Qdrant's score is all there is.
			r.Retrievable, r.Render = true, true
			continue
		}
		r.Score, r.BaseScore, r.Weight = Float(e.Score), Float(e.BaseScore), Float(e.Weight)
		g := e.Guard.String()
		r.Guard = &g
		x := &e.Explanation
		if !x.Unscored {
			c := Float(x.Confidence)
			r.Confidence = &c
			b := x.Bucket.String()
			r.Bucket = &b
		}
		fresh, factor, boost, count, tier := Float(x.Freshness), Float(x.FreshnessFactor), Float(x.AccessBoost), x.AccessCount, x.Tier.String()
		r.Freshness, r.FreshnessFactor, r.AccessBoost, r.AccessCount, r.Tier = &fresh, &factor, &boost, &count, &tier
		if e.StoredTier != "" {
			stored := e.StoredTier
			r.StoredTier = &stored
		}
		r.Render, r.BelowGate = x.Render, x.BelowGate
		r.Retrievable, r.Protected = true, x.Protected
		if r.Archived = e.Archived; r.Archived != "" {
			r.Retrievable = false
		}
		for _, id := range e.FoldedIDs {
			r.FoldedIDs = append(r.FoldedIDs, NewPointID(id))
		}
		if e.DedupTier != "" {
			d := e.DedupTier
			r.Dedup = &d
		}
		r.JudgeConsulted = e.JudgeConsulted
		r.Problems = append(r.Problems, e.Problems...)
		if explain {
			r.Explanation = newExplanation(x)
		}
	}
	return out
}

func newExplanation(x *scoring.Explanation) *Explanation {
	e := &Explanation{
		Unscored:           x.Unscored,
		Source:             Float(x.Source),
		Observations:       x.Observations,
		Repetition:         Float(x.Repetition),
		Extractor:          Float(x.Extractor),
		Type:               Float(x.Type),
		Grounding:          x.Grounding.String(),
		Formula:            Float(x.Formula),
		GroundingPenalty:   Float(x.GroundingPenalty),
		Computed:           Float(x.Computed),
		StoredConfidence:   x.StoredConfidence,
		ComputedConfidence: x.ComputedConfidence,
		Confidence:         Float(x.Confidence),
		AgeDays:            Float(x.AgeDays),
		HalfLife:           Float(x.HalfLife),
		Freshness:          Float(x.Freshness),
		FreshnessWeight:    Float(x.FreshnessWeight),
		Focus:              Float(x.Focus),
		FreshnessFactor:    Float(x.FreshnessFactor),
		IdleDays:           Float(x.IdleDays),
		DecayFloor:         Float(x.DecayFloor),
		DaysToArchive:      Float(x.DaysToArchive),
		AccessCount:        x.AccessCount,
		AccessWeight:       Float(x.AccessWeight),
		AccessBoost:        Float(x.AccessBoost),
		ConfidenceWeight:   Float(x.ConfidenceWeight),
		ConfidenceFactor:   Float(x.ConfidenceFactor),
		Base:               Float(x.Base),
		Weight:             Float(x.Weight),
		WithinDecayFloor:   x.WithinFloor,
		Protected:          x.Protected,
		Tier:               x.Tier.String(),
		BelowGate:          x.BelowGate,
		Render:             x.Render,
	}
	if x.Unscored {
		null := Float(math.NaN())
		e.Source, e.Repetition, e.Extractor, e.Type = null, null, null, null
		e.Formula, e.GroundingPenalty, e.Computed, e.Confidence = null, null, null, null
	} else {
		b := x.Bucket.String()
		e.Bucket = &b
	}
	return e
}
