package restapi

import (
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
)

// Decoding of the read requests: query (every QueryInterface form), search,
// their batches and groups, and the selectors and parameters they share.

// defaultQueryLimit is Qdrant's limit for query and groups when none is given.
const defaultQueryLimit = 10

// toWithVectors reads WithVector: a bool or a list of vector names.
func toWithVectors(v qdrantjson.Value, path string) (*qdrant.WithVectorsSelector, error) {
	switch v.Kind {
	case qdrantjson.KindBool:
		return qdrant.NewWithVectorsEnable(v.Bool), nil
	case qdrantjson.KindArray:
		names, err := qdrantjson.Strings(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewWithVectorsInclude(names...), nil
	}
	return nil, qdrantjson.FormatError(path, "invalid type: %s, expected a boolean, or an array of strings", v.Describe())
}

// selectors reads with_payload and with_vector (alias with_vectors) with
// the given payload default (nil = leave unset).
func selectors(o qdrantjson.Object, defPayload *bool) (*qdrant.WithPayloadSelector, *qdrant.WithVectorsSelector, error) {
	var wp *qdrant.WithPayloadSelector
	if v, ok := o.Get("with_payload"); ok {
		var err error
		if wp, err = qdrantjson.WithPayload(v, o.Sub("with_payload")); err != nil {
			return nil, nil, err
		}
	} else if defPayload != nil {
		wp = qdrant.NewWithPayloadEnable(*defPayload)
	}
	v, key, ok, err := o.Alias("with_vector", "with_vectors")
	if err != nil {
		return nil, nil, err
	}
	var wv *qdrant.WithVectorsSelector
	if ok {
		if wv, err = toWithVectors(v, o.Sub(key)); err != nil {
			return nil, nil, err
		}
	}
	return wp, wv, nil
}

func boolPtr(b bool) *bool { return &b }

// toSearchParams reads SearchParams.
func toSearchParams(v qdrantjson.Value, path string) (*qdrant.SearchParams, error) {
	o, err := qdrantjson.ReadObject(v, path, "hnsw_ef", "exact", "quantization", "indexed_only", "acorn", "idf")
	if err != nil {
		return nil, err
	}
	p := &qdrant.SearchParams{}
	if p.HnswEf, err = o.U64("hnsw_ef"); err != nil {
		return nil, err
	}
	if p.HnswEf != nil && *p.HnswEf == 0 {
		return nil, qdrantjson.ValidationError(o.Sub("hnsw_ef"), "value 0 invalid, must be 1 or larger")
	}
	if p.Exact, err = o.Bool("exact"); err != nil {
		return nil, err
	}
	if p.IndexedOnly, err = o.Bool("indexed_only"); err != nil {
		return nil, err
	}
	if qv, ok := o.Get("quantization"); ok {
		qo, err := qdrantjson.ReadObject(qv, o.Sub("quantization"), "ignore", "rescore", "oversampling")
		if err != nil {
			return nil, err
		}
		q := &qdrant.QuantizationSearchParams{}
		if q.Ignore, err = qo.Bool("ignore"); err != nil {
			return nil, err
		}
		if q.Rescore, err = qo.Bool("rescore"); err != nil {
			return nil, err
		}
		if q.Oversampling, err = qo.F64("oversampling"); err != nil {
			return nil, err
		}
		p.Quantization = q
	}
	if av, ok := o.Get("acorn"); ok {
		ao, err := qdrantjson.ReadObject(av, o.Sub("acorn"), "enable", "max_selectivity")
		if err != nil {
			return nil, err
		}
		a := &qdrant.AcornSearchParams{}
		if a.Enable, err = ao.Bool("enable"); err != nil {
			return nil, err
		}
		if a.MaxSelectivity, err = ao.F64("max_selectivity"); err != nil {
			return nil, err
		}
		p.Acorn = a
	}
	if iv, ok := o.Get("idf"); ok {
		switch {
		case iv.Kind == qdrantjson.KindString && iv.Text == "global":
			p.Idf = &qdrant.IdfParams{}
		case iv.Kind == qdrantjson.KindObject:
			io, err := qdrantjson.ReadObject(iv, o.Sub("idf"), "corpus")
			if err != nil {
				return nil, err
			}
			f, err := io.Filter("corpus")
			if err != nil {
				return nil, err
			}
			p.Idf = &qdrant.IdfParams{Corpus: f}
		default:
			return nil, qdrantjson.FormatError(o.Sub("idf"), "invalid value: %s, expected \"global\" or {\"corpus\": <filter>}", iv.Describe())
		}
	}
	return p, nil
}

func optParams(o qdrantjson.Object) (*qdrant.SearchParams, error) {
	v, ok := o.Get("params")
	if !ok {
		return nil, nil
	}
	return toSearchParams(v, o.Sub("params"))
}

func toShardKey(v qdrantjson.Value, path string) (*qdrant.ShardKey, error) {
	switch v.Kind {
	case qdrantjson.KindString:
		return qdrant.NewShardKeyKeyword(v.Text), nil
	case qdrantjson.KindNumber:
		n, err := qdrantjson.U64(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewShardKeyNum(n), nil
	}
	return nil, qdrantjson.FormatError(path, "invalid type: %s, Expected a string or an integer", v.Describe())
}

// optShardKey reads ShardKeySelector: one key, a list, or {target, fallback}.
func optShardKey(o qdrantjson.Object, key string) (*qdrant.ShardKeySelector, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	path := o.Sub(key)
	switch v.Kind {
	case qdrantjson.KindArray:
		items := v.Items()
		sel := &qdrant.ShardKeySelector{ShardKeys: make([]*qdrant.ShardKey, len(items))}
		for i, e := range items {
			k, err := toShardKey(e, qdrantjson.Index(path, i))
			if err != nil {
				return nil, err
			}
			sel.ShardKeys[i] = k
		}
		return sel, nil
	case qdrantjson.KindObject:
		so, err := qdrantjson.ReadObject(v, path, "target", "fallback")
		if err != nil {
			return nil, err
		}
		tv, err := so.Require("target")
		if err != nil {
			return nil, err
		}
		fv, err := so.Require("fallback")
		if err != nil {
			return nil, err
		}
		t, err := toShardKey(tv, so.Sub("target"))
		if err != nil {
			return nil, err
		}
		f, err := toShardKey(fv, so.Sub("fallback"))
		if err != nil {
			return nil, err
		}
		return &qdrant.ShardKeySelector{ShardKeys: []*qdrant.ShardKey{t}, Fallback: f}, nil
	}
	k, err := toShardKey(v, path)
	if err != nil {
		return nil, err
	}
	return &qdrant.ShardKeySelector{ShardKeys: []*qdrant.ShardKey{k}}, nil
}

// optLookupFrom reads LookupLocation {collection, vector, shard_key}.
func optLookupFrom(o qdrantjson.Object, key string) (*qdrant.LookupLocation, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	lo, err := qdrantjson.ReadObject(v, o.Sub(key), "collection", "vector", "shard_key")
	if err != nil {
		return nil, err
	}
	l := &qdrant.LookupLocation{}
	if l.CollectionName, err = lo.RequireString("collection"); err != nil {
		return nil, err
	}
	if l.VectorName, err = lo.Str("vector"); err != nil {
		return nil, err
	}
	if l.ShardKeySelector, err = optShardKey(lo, "shard_key"); err != nil {
		return nil, err
	}
	return l, nil
}

// optWithLookup reads WithLookupInterface: a collection name or
// {collection, with_payload (default true), with_vectors}.
func optWithLookup(o qdrantjson.Object, key string) (*qdrant.WithLookup, shape, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, shape{}, nil
	}
	if v.Kind == qdrantjson.KindString {
		return &qdrant.WithLookup{Collection: v.Text, WithPayload: qdrant.NewWithPayloadEnable(true)}, shape{payload: true}, nil
	}
	lo, err := qdrantjson.ReadObject(v, o.Sub(key), "collection", "with_payload", "with_vectors", "with_vector")
	if err != nil {
		return nil, shape{}, err
	}
	wl := &qdrant.WithLookup{}
	if wl.Collection, err = lo.RequireString("collection"); err != nil {
		return nil, shape{}, err
	}
	if wl.WithPayload, wl.WithVectors, err = selectors(lo, boolPtr(true)); err != nil {
		return nil, shape{}, err
	}
	return wl, shape{payload: payloadRequested(wl.WithPayload)}, nil
}

// limitField reads a limit that must be at least 1 (Qdrant validates it
// with range(min = 1): 422).
func limitField(o qdrantjson.Object, key string) (*uint64, error) {
	n, err := o.U64(key)
	if err != nil {
		return nil, err
	}
	if n != nil && *n == 0 {
		return nil, qdrantjson.ValidationError(o.Sub(key), "value 0 invalid, must be 1 or larger")
	}
	return n, nil
}

func u64Ptr(n uint64) *uint64 { return &n }

// toQuery reads QueryInterface: a bare vector or point id (nearest), or one
// of the query objects.
func toQuery(v qdrantjson.Value, path string) (*qdrant.Query, error) {
	if v.Kind != qdrantjson.KindObject {
		in, err := toVectorInput(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewQueryNearest(in), nil
	}
	for _, f := range queryForms {
		if v.Has(f.key) {
			o, err := qdrantjson.ReadObject(v, path, append([]string{f.key}, f.also...)...)
			if err != nil {
				return nil, err
			}
			return f.read(o)
		}
	}
	// A sparse vector or an inference object given bare.
	in, err := toVectorInput(v, path)
	if err != nil {
		if de, ok := err.(*qdrantjson.Error); ok && !de.Unsupported {
			return nil, qdrantjson.FormatError(path, "Expected some form of vector, id, or a type of query (%s)", de)
		}
		return nil, err
	}
	return qdrant.NewQueryNearest(in), nil
}

// queryForms are the object forms of QueryInterface in the order Qdrant's
// untagged enum tries them: the first whose key the object has decides how
// it is read, and which other keys it may carry.
var queryForms = []struct {
	key  string
	also []string
	read func(o qdrantjson.Object) (*qdrant.Query, error)
}{
	{"nearest", []string{"mmr"}, nearestQuery},
	{"recommend", nil, recommendQuery},
	{"discover", nil, discoverQuery},
	{"context", nil, contextQuery},
	{"order_by", nil, orderByQuery},
	{"fusion", nil, fusionQuery},
	{"rrf", nil, rrfQuery},
	{"formula", []string{"defaults"}, formulaQuery},
	{"sample", nil, sampleQuery},
	{"relevance_feedback", nil, relevanceFeedbackQuery},
}

// nearestQuery reads {"nearest": input, "mmr"?: {diversity, candidates_limit}}.
func nearestQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	in, err := toVectorInput(o.Member("nearest"), o.Sub("nearest"))
	if err != nil {
		return nil, err
	}
	mv, ok := o.Get("mmr")
	if !ok {
		return qdrant.NewQueryNearest(in), nil
	}
	mo, err := qdrantjson.ReadObject(mv, o.Sub("mmr"), "diversity", "candidates_limit")
	if err != nil {
		return nil, err
	}
	m := &qdrant.Mmr{}
	if m.Diversity, err = mo.F32("diversity"); err != nil {
		return nil, err
	}
	if m.Diversity != nil && (*m.Diversity < 0 || *m.Diversity > 1) {
		return nil, qdrantjson.ValidationError(mo.Sub("diversity"), "value %v invalid, must be from 0.0 to 1.0", *m.Diversity)
	}
	if m.CandidatesLimit, err = mo.U32("candidates_limit"); err != nil {
		return nil, err
	}
	if m.CandidatesLimit != nil && *m.CandidatesLimit > 16384 {
		return nil, qdrantjson.ValidationError(mo.Sub("candidates_limit"), "value %d invalid, must be 16384 or smaller", *m.CandidatesLimit)
	}
	return qdrant.NewQueryMMR(in, m), nil
}

// recommendQuery reads {"recommend": {positive, negative, strategy}}.
func recommendQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	ro, err := qdrantjson.ReadObject(o.Member("recommend"), o.Sub("recommend"), "positive", "negative", "strategy")
	if err != nil {
		return nil, err
	}
	rec := &qdrant.RecommendInput{}
	if pv, ok := ro.Get("positive"); ok {
		if rec.Positive, err = toVectorInputs(pv, ro.Sub("positive")); err != nil {
			return nil, err
		}
	}
	if nv, ok := ro.Get("negative"); ok {
		if rec.Negative, err = toVectorInputs(nv, ro.Sub("negative")); err != nil {
			return nil, err
		}
	}
	if sv, ok := ro.Get("strategy"); ok {
		if rec.Strategy, err = recommendStrategy(sv, ro.Sub("strategy")); err != nil {
			return nil, err
		}
	}
	return qdrant.NewQueryRecommend(rec), nil
}

var recommendStrategies = map[string]qdrant.RecommendStrategy{
	"average_vector": qdrant.RecommendStrategy_AverageVector,
	"best_score":     qdrant.RecommendStrategy_BestScore,
	"sum_scores":     qdrant.RecommendStrategy_SumScores,
}

func recommendStrategy(v qdrantjson.Value, path string) (*qdrant.RecommendStrategy, error) {
	if s, ok := recommendStrategies[v.Text]; ok && v.Kind == qdrantjson.KindString {
		return &s, nil
	}
	return nil, qdrantjson.FormatError(path, "unknown variant %s, expected one of `average_vector`, `best_score`, `sum_scores`", v.Describe())
}

// discoverQuery reads {"discover": {target, context}}.
func discoverQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	do, err := qdrantjson.ReadObject(o.Member("discover"), o.Sub("discover"), "target", "context")
	if err != nil {
		return nil, err
	}
	tv, err := do.Require("target")
	if err != nil {
		return nil, err
	}
	target, err := toVectorInput(tv, do.Sub("target"))
	if err != nil {
		return nil, err
	}
	ctx, err := contextPairs(do.Member("context"), do.Sub("context"))
	if err != nil {
		return nil, err
	}
	return qdrant.NewQueryDiscover(&qdrant.DiscoverInput{Target: target, Context: ctx}), nil
}

// contextQuery reads {"context": pairs}.
func contextQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	ctx, err := contextPairs(o.Member("context"), o.Sub("context"))
	if err != nil {
		return nil, err
	}
	return qdrant.NewQueryContext(ctx), nil
}

// orderByQuery reads {"order_by": key or {key, direction, start_from}}.
func orderByQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	ob, err := toOrderBy(o.Member("order_by"), o.Sub("order_by"))
	if err != nil {
		return nil, err
	}
	return qdrant.NewQueryOrderBy(ob), nil
}

// fusionQuery reads {"fusion": "rrf" | "dbsf"}.
func fusionQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	fv := o.Member("fusion")
	switch {
	case fv.Kind == qdrantjson.KindString && fv.Text == "rrf":
		return qdrant.NewQueryFusion(qdrant.Fusion_RRF), nil
	case fv.Kind == qdrantjson.KindString && fv.Text == "dbsf":
		return qdrant.NewQueryFusion(qdrant.Fusion_DBSF), nil
	}
	return nil, qdrantjson.FormatError(o.Sub("fusion"), "unknown variant %s, expected `rrf` or `dbsf`", fv.Describe())
}

// rrfQuery reads {"rrf": {k, weights}}.
func rrfQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	ro, err := qdrantjson.ReadObject(o.Member("rrf"), o.Sub("rrf"), "k", "weights")
	if err != nil {
		return nil, err
	}
	r := &qdrant.Rrf{}
	if r.K, err = ro.U32("k"); err != nil {
		return nil, err
	}
	if r.K != nil && *r.K == 0 {
		return nil, qdrantjson.ValidationError(ro.Sub("k"), "value 0 invalid, must be 1 or larger")
	}
	if wv, ok := ro.Get("weights"); ok {
		if r.Weights, err = toDense(wv, ro.Sub("weights")); err != nil {
			return nil, err
		}
	}
	return qdrant.NewQueryRRF(r), nil
}

// formulaQuery reads {"formula": expression, "defaults"?: payload}.
func formulaQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	expr, err := toExpression(o.Member("formula"), o.Sub("formula"), 0)
	if err != nil {
		return nil, err
	}
	f := &qdrant.Formula{Expression: expr}
	if dv, ok := o.Get("defaults"); ok {
		if f.Defaults, err = qdrantjson.Payload(dv, o.Sub("defaults")); err != nil {
			return nil, err
		}
	}
	return qdrant.NewQueryFormula(f), nil
}

// sampleQuery reads {"sample": "random"}.
func sampleQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	if sv := o.Member("sample"); sv.Kind != qdrantjson.KindString || sv.Text != "random" {
		return nil, qdrantjson.FormatError(o.Sub("sample"), "unknown variant %s, expected `random`", sv.Describe())
	}
	return qdrant.NewQuerySample(qdrant.Sample_Random), nil
}

// relevanceFeedbackQuery reads {"relevance_feedback": {target, feedback, strategy}}.
func relevanceFeedbackQuery(o qdrantjson.Object) (*qdrant.Query, error) {
	rf, err := relevanceFeedback(o.Member("relevance_feedback"), o.Sub("relevance_feedback"))
	if err != nil {
		return nil, err
	}
	return qdrant.NewQueryRelevanceFeedback(rf), nil
}

// contextPairs reads MaybeOneOrMany<ContextPair> (absent or null = none).
func contextPairs(v qdrantjson.Value, path string) (*qdrant.ContextInput, error) {
	ctx := &qdrant.ContextInput{}
	var items []qdrantjson.Value
	switch v.Kind {
	case qdrantjson.KindNull:
		return ctx, nil
	case qdrantjson.KindArray:
		items = v.Items()
	default:
		items = []qdrantjson.Value{v}
		path = qdrantjson.Index(path, 0)
	}
	for i, e := range items {
		p := path
		if v.Kind == qdrantjson.KindArray {
			p = qdrantjson.Index(path, i)
		}
		po, err := qdrantjson.ReadObject(e, p, "positive", "negative")
		if err != nil {
			return nil, err
		}
		pv, err := po.Require("positive")
		if err != nil {
			return nil, err
		}
		nv, err := po.Require("negative")
		if err != nil {
			return nil, err
		}
		pos, err := toVectorInput(pv, po.Sub("positive"))
		if err != nil {
			return nil, err
		}
		neg, err := toVectorInput(nv, po.Sub("negative"))
		if err != nil {
			return nil, err
		}
		ctx.Pairs = append(ctx.Pairs, &qdrant.ContextInputPair{Positive: pos, Negative: neg})
	}
	return ctx, nil
}

func relevanceFeedback(v qdrantjson.Value, path string) (*qdrant.RelevanceFeedbackInput, error) {
	o, err := qdrantjson.ReadObject(v, path, "target", "feedback", "strategy")
	if err != nil {
		return nil, err
	}
	tv, err := o.Require("target")
	if err != nil {
		return nil, err
	}
	rf := &qdrant.RelevanceFeedbackInput{}
	if rf.Target, err = toVectorInput(tv, o.Sub("target")); err != nil {
		return nil, err
	}
	fv, err := o.Require("feedback")
	if err != nil {
		return nil, err
	}
	if fv.Kind != qdrantjson.KindArray {
		return nil, qdrantjson.TypeError(o.Sub("feedback"), fv, "a sequence of feedback items")
	}
	for i, e := range fv.Items() {
		io, err := qdrantjson.ReadObject(e, qdrantjson.Index(o.Sub("feedback"), i), "example", "score")
		if err != nil {
			return nil, err
		}
		ev, err := io.Require("example")
		if err != nil {
			return nil, err
		}
		ex, err := toVectorInput(ev, io.Sub("example"))
		if err != nil {
			return nil, err
		}
		score, err := io.F32("score")
		if err != nil {
			return nil, err
		}
		if score == nil {
			return nil, qdrantjson.FormatError(io.Path, "missing field `score`")
		}
		rf.Feedback = append(rf.Feedback, &qdrant.FeedbackItem{Example: ex, Score: *score})
	}
	sv, err := o.Require("strategy")
	if err != nil {
		return nil, err
	}
	so, err := qdrantjson.ReadObject(sv, o.Sub("strategy"), "naive")
	if err != nil {
		return nil, err
	}
	nv, err := so.Require("naive")
	if err != nil {
		return nil, err
	}
	no, err := qdrantjson.ReadObject(nv, so.Sub("naive"), "a", "b", "c")
	if err != nil {
		return nil, err
	}
	var abc [3]float32
	for i, k := range []string{"a", "b", "c"} {
		f, err := no.F32(k)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, qdrantjson.FormatError(no.Path, "missing field `%s`", k)
		}
		abc[i] = *f
	}
	if abc[1] < 0 {
		return nil, qdrantjson.ValidationError(no.Sub("b"), "value %v invalid, must be 0.0 or larger", abc[1])
	}
	rf.Strategy = qdrant.NewFeedbackStrategyNaive(&qdrant.NaiveFeedbackStrategy{A: abc[0], B: abc[1], C: abc[2]})
	return rf, nil
}

// toOrderBy reads OrderByInterface: a key, or {key, direction, start_from}.
func toOrderBy(v qdrantjson.Value, path string) (*qdrant.OrderBy, error) {
	if v.Kind == qdrantjson.KindString {
		return &qdrant.OrderBy{Key: v.Text}, nil
	}
	o, err := qdrantjson.ReadObject(v, path, "key", "direction", "start_from")
	if err != nil {
		return nil, err
	}
	ob := &qdrant.OrderBy{}
	if ob.Key, err = o.RequireString("key"); err != nil {
		return nil, err
	}
	if dv, ok := o.Get("direction"); ok {
		var d qdrant.Direction
		switch {
		case dv.Kind == qdrantjson.KindString && dv.Text == "asc":
			d = qdrant.Direction_Asc
		case dv.Kind == qdrantjson.KindString && dv.Text == "desc":
			d = qdrant.Direction_Desc
		default:
			return nil, qdrantjson.FormatError(o.Sub("direction"), "unknown variant %s, expected `asc` or `desc`", dv.Describe())
		}
		ob.Direction = &d
	}
	if sv, ok := o.Get("start_from"); ok {
		switch sv.Kind {
		case qdrantjson.KindNumber:
			if qdrantjson.IsIntLiteral(sv.Text) {
				n, err := qdrantjson.I64(sv, o.Sub("start_from"))
				if err != nil {
					return nil, err
				}
				ob.StartFrom = qdrant.NewStartFromInt(n)
			} else {
				f, err := qdrantjson.F64(sv, o.Sub("start_from"))
				if err != nil {
					return nil, err
				}
				ob.StartFrom = qdrant.NewStartFromFloat(f)
			}
		case qdrantjson.KindString:
			if _, ok := qdrantjson.ParseDatetime(sv.Text); !ok {
				return nil, qdrantjson.FormatError(o.Sub("start_from"), "'%s' does not match accepted datetime format (RFC3339). Example: 2014-01-01T00:00:00Z", sv.Text)
			}
			ob.StartFrom = qdrant.NewStartFromDatetime(sv.Text)
		default:
			return nil, qdrantjson.TypeError(o.Sub("start_from"), sv, "an integer, a number or a datetime string")
		}
	}
	return ob, nil
}

// maxExpressionDepth bounds formula nesting independently of JSON depth.
const maxExpressionDepth = 64

// toExpression reads a formula Expression: a constant, a variable, an
// operator object, or a filter condition.
func toExpression(v qdrantjson.Value, path string, depth int) (*qdrant.Expression, error) {
	if depth > maxExpressionDepth {
		return nil, qdrantjson.FormatError(path, "expression nested too deeply")
	}
	switch v.Kind {
	case qdrantjson.KindNumber:
		f, err := qdrantjson.F32(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewExpressionConstant(f), nil
	case qdrantjson.KindString:
		return qdrant.NewExpressionVariable(v.Text), nil
	case qdrantjson.KindObject:
	default:
		return nil, qdrantjson.FormatError(path, "invalid type: %s, expected an expression", v.Describe())
	}
	if len(v.Members) == 1 {
		if e, ok, err := operatorExpression(v.Members[0], path, depth); ok || err != nil {
			return e, err
		}
	}
	// Anything else is a filter condition (1 when it matches, else 0).
	c, err := qdrantjson.Condition(v, path)
	if err != nil {
		return nil, err
	}
	return qdrant.NewExpressionCondition(c), nil
}

// unaryExpressions are the operators of one expression.
var unaryExpressions = map[string]func(*qdrant.Expression) *qdrant.Expression{
	"neg":   qdrant.NewExpressionNeg,
	"abs":   qdrant.NewExpressionAbs,
	"sqrt":  qdrant.NewExpressionSqrt,
	"exp":   qdrant.NewExpressionExp,
	"log10": qdrant.NewExpressionLog10,
	"ln":    qdrant.NewExpressionLn,
}

// operatorExpression reads {"<operator>": operands}; ok is false when the
// key is no operator (the object is then a condition).
func operatorExpression(mb qdrantjson.Member, path string, depth int) (e *qdrant.Expression, ok bool, err error) {
	p := qdrantjson.Join(path, mb.Key)
	if build, ok := unaryExpressions[mb.Key]; ok {
		x, err := toExpression(mb.Val, p, depth+1)
		if err != nil {
			return nil, true, err
		}
		return build(x), true, nil
	}
	switch mb.Key {
	case "mult":
		xs, err := expressionList(mb.Val, p, depth)
		if err != nil {
			return nil, true, err
		}
		return qdrant.NewExpressionMult(&qdrant.MultExpression{Mult: xs}), true, nil
	case "sum":
		xs, err := expressionList(mb.Val, p, depth)
		if err != nil {
			return nil, true, err
		}
		return qdrant.NewExpressionSum(&qdrant.SumExpression{Sum: xs}), true, nil
	case "div":
		e, err = divExpression(mb.Val, p, depth)
	case "pow":
		e, err = powExpression(mb.Val, p, depth)
	case "geo_distance":
		e, err = geoDistanceExpression(mb.Val, p)
	case "datetime":
		if mb.Val.Kind != qdrantjson.KindString {
			return nil, true, qdrantjson.TypeError(p, mb.Val, "a datetime string")
		}
		e = qdrant.NewExpressionDatetime(mb.Val.Text)
	case "datetime_key":
		if mb.Val.Kind != qdrantjson.KindString {
			return nil, true, qdrantjson.TypeError(p, mb.Val, "a payload key")
		}
		e = qdrant.NewExpressionDatetimeKey(mb.Val.Text)
	case "lin_decay", "exp_decay", "gauss_decay":
		e, err = decayExpression(mb.Key, mb.Val, p, depth)
	default:
		return nil, false, nil
	}
	return e, true, err
}

// expressionList reads the operands of mult and sum.
func expressionList(v qdrantjson.Value, path string, depth int) ([]*qdrant.Expression, error) {
	if v.Kind != qdrantjson.KindArray {
		return nil, qdrantjson.TypeError(path, v, "a sequence of expressions")
	}
	items := v.Items()
	out := make([]*qdrant.Expression, len(items))
	for i, e := range items {
		x, err := toExpression(e, qdrantjson.Index(path, i), depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func divExpression(v qdrantjson.Value, path string, depth int) (*qdrant.Expression, error) {
	o, err := qdrantjson.ReadObject(v, path, "left", "right", "by_zero_default")
	if err != nil {
		return nil, err
	}
	d := &qdrant.DivExpression{}
	if d.Left, err = subExpression(o, "left", depth); err != nil {
		return nil, err
	}
	if d.Right, err = subExpression(o, "right", depth); err != nil {
		return nil, err
	}
	if d.ByZeroDefault, err = o.F32("by_zero_default"); err != nil {
		return nil, err
	}
	return qdrant.NewExpressionDiv(d), nil
}

func powExpression(v qdrantjson.Value, path string, depth int) (*qdrant.Expression, error) {
	o, err := qdrantjson.ReadObject(v, path, "base", "exponent")
	if err != nil {
		return nil, err
	}
	pw := &qdrant.PowExpression{}
	if pw.Base, err = subExpression(o, "base", depth); err != nil {
		return nil, err
	}
	if pw.Exponent, err = subExpression(o, "exponent", depth); err != nil {
		return nil, err
	}
	return qdrant.NewExpressionPow(pw), nil
}

func geoDistanceExpression(v qdrantjson.Value, path string) (*qdrant.Expression, error) {
	o, err := qdrantjson.ReadObject(v, path, "origin", "to")
	if err != nil {
		return nil, err
	}
	origin, err := o.GeoPoint("origin")
	if err != nil {
		return nil, err
	}
	to, err := o.RequireString("to")
	if err != nil {
		return nil, err
	}
	return qdrant.NewExpressionGeoDistance(&qdrant.GeoDistance{Origin: origin, To: to}), nil
}

// decayExpression reads lin_decay, exp_decay and gauss_decay.
func decayExpression(kind string, v qdrantjson.Value, path string, depth int) (*qdrant.Expression, error) {
	o, err := qdrantjson.ReadObject(v, path, "x", "target", "scale", "midpoint")
	if err != nil {
		return nil, err
	}
	d := &qdrant.DecayParamsExpression{}
	if d.X, err = subExpression(o, "x", depth); err != nil {
		return nil, err
	}
	if tv, ok := o.Get("target"); ok {
		if d.Target, err = toExpression(tv, o.Sub("target"), depth+1); err != nil {
			return nil, err
		}
	}
	if d.Scale, err = o.F32("scale"); err != nil {
		return nil, err
	}
	if d.Midpoint, err = o.F32("midpoint"); err != nil {
		return nil, err
	}
	switch kind {
	case "lin_decay":
		return qdrant.NewExpressionLinDecay(d), nil
	case "exp_decay":
		return qdrant.NewExpressionExpDecay(d), nil
	}
	return qdrant.NewExpressionGaussDecay(d), nil
}

func subExpression(o qdrantjson.Object, key string, depth int) (*qdrant.Expression, error) {
	v, err := o.Require(key)
	if err != nil {
		return nil, err
	}
	return toExpression(v, o.Sub(key), depth+1)
}

// prefetches reads MaybeOneOrMany<Prefetch>.
func prefetches(o qdrantjson.Object, key string, depth int) ([]*qdrant.PrefetchQuery, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	path := o.Sub(key)
	if v.Kind != qdrantjson.KindArray {
		p, err := toPrefetch(v, path, depth)
		if err != nil {
			return nil, err
		}
		return []*qdrant.PrefetchQuery{p}, nil
	}
	items := v.Items()
	out := make([]*qdrant.PrefetchQuery, len(items))
	for i, e := range items {
		p, err := toPrefetch(e, qdrantjson.Index(path, i), depth)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

var prefetchFields = []string{"prefetch", "query", "using", "filter", "params", "score_threshold", "limit", "lookup_from"}

func toPrefetch(v qdrantjson.Value, path string, depth int) (*qdrant.PrefetchQuery, error) {
	if depth > maxExpressionDepth {
		return nil, qdrantjson.FormatError(path, "prefetch nested too deeply")
	}
	o, err := qdrantjson.ReadObject(v, path, prefetchFields...)
	if err != nil {
		return nil, err
	}
	p := &qdrant.PrefetchQuery{}
	if p.Prefetch, err = prefetches(o, "prefetch", depth+1); err != nil {
		return nil, err
	}
	if qv, ok := o.Get("query"); ok {
		if p.Query, err = toQuery(qv, o.Sub("query")); err != nil {
			return nil, err
		}
	}
	if p.Using, err = o.Str("using"); err != nil {
		return nil, err
	}
	if p.Filter, err = o.Filter("filter"); err != nil {
		return nil, err
	}
	if p.Params, err = optParams(o); err != nil {
		return nil, err
	}
	if p.ScoreThreshold, err = o.F32("score_threshold"); err != nil {
		return nil, err
	}
	if p.Limit, err = limitField(o, "limit"); err != nil {
		return nil, err
	}
	if p.LookupFrom, err = optLookupFrom(o, "lookup_from"); err != nil {
		return nil, err
	}
	return p, nil
}

var queryFields = []string{"shard_key", "prefetch", "query", "using", "filter", "params", "score_threshold", "limit", "offset", "with_vector", "with_vectors", "with_payload", "lookup_from"}

// toQueryPoints reads QueryRequest. Payload and vectors default to off and
// limit to 10, as in Qdrant; the selectors are always set explicitly so the
// answer does not depend on gRPC defaults.
func toQueryPoints(v qdrantjson.Value, path, collection string) (*qdrant.QueryPoints, error) {
	o, err := qdrantjson.ReadObject(v, path, queryFields...)
	if err != nil {
		return nil, err
	}
	q := &qdrant.QueryPoints{CollectionName: collection}
	if q.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if q.Prefetch, err = prefetches(o, "prefetch", 0); err != nil {
		return nil, err
	}
	if qv, ok := o.Get("query"); ok {
		if q.Query, err = toQuery(qv, o.Sub("query")); err != nil {
			return nil, err
		}
	}
	if q.Using, err = o.Str("using"); err != nil {
		return nil, err
	}
	if q.Filter, err = o.Filter("filter"); err != nil {
		return nil, err
	}
	if q.Params, err = optParams(o); err != nil {
		return nil, err
	}
	if q.ScoreThreshold, err = o.F32("score_threshold"); err != nil {
		return nil, err
	}
	if q.Limit, err = limitField(o, "limit"); err != nil {
		return nil, err
	}
	if q.Limit == nil {
		q.Limit = u64Ptr(defaultQueryLimit)
	}
	if q.Offset, err = o.U64("offset"); err != nil {
		return nil, err
	}
	if q.WithPayload, q.WithVectors, err = selectors(o, boolPtr(false)); err != nil {
		return nil, err
	}
	if q.WithVectors == nil {
		q.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if q.LookupFrom, err = optLookupFrom(o, "lookup_from"); err != nil {
		return nil, err
	}
	return q, nil
}

var queryGroupsFields = []string{"shard_key", "prefetch", "query", "using", "filter", "params", "score_threshold", "with_vector", "with_vectors", "with_payload", "lookup_from", "group_by", "group_size", "limit", "with_lookup"}

// defaultGroupSize is Qdrant's group_size for query/groups.
const defaultGroupSize = 3

func toQueryGroups(v qdrantjson.Value, collection string) (*qdrant.QueryPointGroups, shape, error) {
	o, err := qdrantjson.ReadObject(v, "", queryGroupsFields...)
	if err != nil {
		return nil, shape{}, err
	}
	q := &qdrant.QueryPointGroups{CollectionName: collection}
	if q.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, shape{}, err
	}
	if q.Prefetch, err = prefetches(o, "prefetch", 0); err != nil {
		return nil, shape{}, err
	}
	if qv, ok := o.Get("query"); ok {
		if q.Query, err = toQuery(qv, "query"); err != nil {
			return nil, shape{}, err
		}
	}
	if q.Using, err = o.Str("using"); err != nil {
		return nil, shape{}, err
	}
	if q.Filter, err = o.Filter("filter"); err != nil {
		return nil, shape{}, err
	}
	if q.Params, err = optParams(o); err != nil {
		return nil, shape{}, err
	}
	if q.ScoreThreshold, err = o.F32("score_threshold"); err != nil {
		return nil, shape{}, err
	}
	if q.WithPayload, q.WithVectors, err = selectors(o, boolPtr(false)); err != nil {
		return nil, shape{}, err
	}
	if q.WithVectors == nil {
		q.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if q.LookupFrom, err = optLookupFrom(o, "lookup_from"); err != nil {
		return nil, shape{}, err
	}
	if q.GroupBy, err = o.RequireString("group_by"); err != nil {
		return nil, shape{}, err
	}
	if q.GroupSize, err = limitField(o, "group_size"); err != nil {
		return nil, shape{}, err
	}
	if q.GroupSize == nil {
		q.GroupSize = u64Ptr(defaultGroupSize)
	}
	if q.Limit, err = limitField(o, "limit"); err != nil {
		return nil, shape{}, err
	}
	if q.Limit == nil {
		q.Limit = u64Ptr(defaultQueryLimit)
	}
	var lookup shape
	if q.WithLookup, lookup, err = optWithLookup(o, "with_lookup"); err != nil {
		return nil, shape{}, err
	}
	return q, lookup, nil
}

// namedVector reads NamedVectorStruct of the search API: [..],
// {"name", "vector": [..]} or {"name", "vector": {"indices","values"}}.
func namedVector(o qdrantjson.Object, key string) (vec []float32, name *string, sparse *qdrant.SparseIndices, err error) {
	v, err := o.Require(key)
	if err != nil {
		return nil, nil, nil, err
	}
	path := o.Sub(key)
	if v.Kind == qdrantjson.KindArray {
		vec, err = toDense(v, path)
		return vec, nil, nil, err
	}
	no, err := qdrantjson.ReadObject(v, path, "name", "vector")
	if err != nil {
		return nil, nil, nil, err
	}
	n, err := no.RequireString("name")
	if err != nil {
		return nil, nil, nil, err
	}
	vv, err := no.Require("vector")
	if err != nil {
		return nil, nil, nil, err
	}
	if vv.Kind == qdrantjson.KindObject {
		idx, vals, err := toSparse(vv, no.Sub("vector"))
		if err != nil {
			return nil, nil, nil, err
		}
		return vals, &n, &qdrant.SparseIndices{Data: idx}, nil
	}
	vec, err = toDense(vv, no.Sub("vector"))
	return vec, &n, nil, err
}

var searchFields = []string{"vector", "filter", "params", "limit", "top", "offset", "with_payload", "with_vector", "with_vectors", "score_threshold", "shard_key"}

// toSearchPoints reads SearchRequest (limit is required; "top" is its alias).
func toSearchPoints(v qdrantjson.Value, path, collection string) (*qdrant.SearchPoints, error) {
	o, err := qdrantjson.ReadObject(v, path, searchFields...)
	if err != nil {
		return nil, err
	}
	s := &qdrant.SearchPoints{CollectionName: collection}
	if s.Vector, s.VectorName, s.SparseIndices, err = namedVector(o, "vector"); err != nil {
		return nil, err
	}
	if s.Filter, err = o.Filter("filter"); err != nil {
		return nil, err
	}
	if s.Params, err = optParams(o); err != nil {
		return nil, err
	}
	lv, lkey, ok, err := o.Alias("limit", "top")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, qdrantjson.FormatError(path, "missing field `limit`")
	}
	limit, err := qdrantjson.U64(lv, o.Sub(lkey))
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		return nil, qdrantjson.ValidationError(o.Sub(lkey), "value 0 invalid, must be 1 or larger")
	}
	s.Limit = limit
	if s.Offset, err = o.U64("offset"); err != nil {
		return nil, err
	}
	if s.WithPayload, s.WithVectors, err = selectors(o, boolPtr(false)); err != nil {
		return nil, err
	}
	if s.WithVectors == nil {
		s.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if s.ScoreThreshold, err = o.F32("score_threshold"); err != nil {
		return nil, err
	}
	if s.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	return s, nil
}

var searchGroupsFields = []string{"vector", "filter", "params", "with_payload", "with_vector", "with_vectors", "score_threshold", "group_by", "group_size", "limit", "with_lookup", "shard_key"}

func toSearchGroups(v qdrantjson.Value, collection string) (*qdrant.SearchPointGroups, shape, error) {
	o, err := qdrantjson.ReadObject(v, "", searchGroupsFields...)
	if err != nil {
		return nil, shape{}, err
	}
	s := &qdrant.SearchPointGroups{CollectionName: collection}
	if s.Vector, s.VectorName, s.SparseIndices, err = namedVector(o, "vector"); err != nil {
		return nil, shape{}, err
	}
	if s.Filter, err = o.Filter("filter"); err != nil {
		return nil, shape{}, err
	}
	if s.Params, err = optParams(o); err != nil {
		return nil, shape{}, err
	}
	if s.WithPayload, s.WithVectors, err = selectors(o, boolPtr(false)); err != nil {
		return nil, shape{}, err
	}
	if s.WithVectors == nil {
		s.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if s.ScoreThreshold, err = o.F32("score_threshold"); err != nil {
		return nil, shape{}, err
	}
	if s.GroupBy, err = o.RequireString("group_by"); err != nil {
		return nil, shape{}, err
	}
	for _, f := range []struct {
		key string
		dst *uint32
	}{{"group_size", &s.GroupSize}, {"limit", &s.Limit}} {
		n, err := o.U32(f.key)
		if err != nil {
			return nil, shape{}, err
		}
		if n == nil {
			return nil, shape{}, qdrantjson.FormatError("", "missing field `%s`", f.key)
		}
		if *n == 0 {
			return nil, shape{}, qdrantjson.ValidationError(f.key, "value 0 invalid, must be 1 or larger")
		}
		*f.dst = *n
	}
	var lookup shape
	if s.WithLookup, lookup, err = optWithLookup(o, "with_lookup"); err != nil {
		return nil, shape{}, err
	}
	if s.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, shape{}, err
	}
	return s, lookup, nil
}

// batchItems reads {"searches": [...]}.
func batchItems(v qdrantjson.Value) ([]qdrantjson.Value, error) {
	o, err := qdrantjson.ReadObject(v, "", "searches")
	if err != nil {
		return nil, err
	}
	sv, err := o.Require("searches")
	if err != nil {
		return nil, err
	}
	if sv.Kind != qdrantjson.KindArray {
		return nil, qdrantjson.TypeError("searches", sv, "a sequence of requests")
	}
	return sv.Items(), nil
}
