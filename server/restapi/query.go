package restapi

import (
	"github.com/qdrant/go-client/qdrant"
)

// Decoding of the read requests: query (every QueryInterface form), search,
// their batches and groups, and the selectors and parameters they share.

// defaultQueryLimit is Qdrant's limit for query and groups when none is given.
const defaultQueryLimit = 10

// toWithPayload reads WithPayloadInterface: a bool, a list of fields
// (include), {"include": [...]} or {"exclude": [...]}.
func toWithPayload(v value, path string) (*qdrant.WithPayloadSelector, error) {
	switch v.kind {
	case kindBool:
		return qdrant.NewWithPayloadEnable(v.b), nil
	case kindArray:
		fields, err := toStrings(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewWithPayloadInclude(fields...), nil
	case kindObject:
		keys := memberKeys(v)
		if keys["include"] {
			o, err := readObject(v, path, "include")
			if err != nil {
				return nil, err
			}
			fields, err := toStrings(o.m["include"], o.sub("include"))
			if err != nil {
				return nil, err
			}
			return qdrant.NewWithPayloadInclude(fields...), nil
		}
		o, err := readObject(v, path, "exclude")
		if err != nil {
			return nil, err
		}
		fv, err := o.require("exclude")
		if err != nil {
			return nil, err
		}
		fields, err := toStrings(fv, o.sub("exclude"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewWithPayloadExclude(fields...), nil
	}
	return nil, formatErr(path, "invalid type: %s, expected a boolean, an array of strings, or an object with an include/exclude field", v.describe())
}

// toWithVectors reads WithVector: a bool or a list of vector names.
func toWithVectors(v value, path string) (*qdrant.WithVectorsSelector, error) {
	switch v.kind {
	case kindBool:
		return qdrant.NewWithVectorsEnable(v.b), nil
	case kindArray:
		names, err := toStrings(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewWithVectorsInclude(names...), nil
	}
	return nil, formatErr(path, "invalid type: %s, expected a boolean, or an array of strings", v.describe())
}

// selectors reads with_payload and with_vector (alias with_vectors) with
// the given payload default (nil = leave unset).
func selectors(o object, defPayload *bool) (*qdrant.WithPayloadSelector, *qdrant.WithVectorsSelector, error) {
	var wp *qdrant.WithPayloadSelector
	if v, ok := o.get("with_payload"); ok {
		var err error
		if wp, err = toWithPayload(v, o.sub("with_payload")); err != nil {
			return nil, nil, err
		}
	} else if defPayload != nil {
		wp = qdrant.NewWithPayloadEnable(*defPayload)
	}
	v, key, ok, err := o.getAlias("with_vector", "with_vectors")
	if err != nil {
		return nil, nil, err
	}
	var wv *qdrant.WithVectorsSelector
	if ok {
		if wv, err = toWithVectors(v, o.sub(key)); err != nil {
			return nil, nil, err
		}
	}
	return wp, wv, nil
}

func boolPtr(b bool) *bool { return &b }

// toSearchParams reads SearchParams.
func toSearchParams(v value, path string) (*qdrant.SearchParams, error) {
	o, err := readObject(v, path, "hnsw_ef", "exact", "quantization", "indexed_only", "acorn", "idf")
	if err != nil {
		return nil, err
	}
	p := &qdrant.SearchParams{}
	if p.HnswEf, err = o.u64("hnsw_ef"); err != nil {
		return nil, err
	}
	if p.HnswEf != nil && *p.HnswEf == 0 {
		return nil, validationErr(o.sub("hnsw_ef"), "value 0 invalid, must be 1 or larger")
	}
	if p.Exact, err = o.boolean("exact"); err != nil {
		return nil, err
	}
	if p.IndexedOnly, err = o.boolean("indexed_only"); err != nil {
		return nil, err
	}
	if qv, ok := o.get("quantization"); ok {
		qo, err := readObject(qv, o.sub("quantization"), "ignore", "rescore", "oversampling")
		if err != nil {
			return nil, err
		}
		q := &qdrant.QuantizationSearchParams{}
		if q.Ignore, err = qo.boolean("ignore"); err != nil {
			return nil, err
		}
		if q.Rescore, err = qo.boolean("rescore"); err != nil {
			return nil, err
		}
		if q.Oversampling, err = qo.f64("oversampling"); err != nil {
			return nil, err
		}
		p.Quantization = q
	}
	if av, ok := o.get("acorn"); ok {
		ao, err := readObject(av, o.sub("acorn"), "enable", "max_selectivity")
		if err != nil {
			return nil, err
		}
		a := &qdrant.AcornSearchParams{}
		if a.Enable, err = ao.boolean("enable"); err != nil {
			return nil, err
		}
		if a.MaxSelectivity, err = ao.f64("max_selectivity"); err != nil {
			return nil, err
		}
		p.Acorn = a
	}
	if iv, ok := o.get("idf"); ok {
		switch {
		case iv.kind == kindString && iv.s == "global":
			p.Idf = &qdrant.IdfParams{}
		case iv.kind == kindObject:
			io, err := readObject(iv, o.sub("idf"), "corpus")
			if err != nil {
				return nil, err
			}
			f, err := optFilter(io, "corpus")
			if err != nil {
				return nil, err
			}
			p.Idf = &qdrant.IdfParams{Corpus: f}
		default:
			return nil, formatErr(o.sub("idf"), "invalid value: %s, expected \"global\" or {\"corpus\": <filter>}", iv.describe())
		}
	}
	return p, nil
}

func optParams(o object) (*qdrant.SearchParams, error) {
	v, ok := o.get("params")
	if !ok {
		return nil, nil
	}
	return toSearchParams(v, o.sub("params"))
}

func toShardKey(v value, path string) (*qdrant.ShardKey, error) {
	switch v.kind {
	case kindString:
		return qdrant.NewShardKeyKeyword(v.s), nil
	case kindNumber:
		n, err := toU64(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewShardKeyNum(n), nil
	}
	return nil, formatErr(path, "invalid type: %s, Expected a string or an integer", v.describe())
}

// optShardKey reads ShardKeySelector: one key, a list, or {target, fallback}.
func optShardKey(o object, key string) (*qdrant.ShardKeySelector, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	path := o.sub(key)
	switch v.kind {
	case kindArray:
		items := v.items()
		sel := &qdrant.ShardKeySelector{ShardKeys: make([]*qdrant.ShardKey, len(items))}
		for i, e := range items {
			k, err := toShardKey(e, index(path, i))
			if err != nil {
				return nil, err
			}
			sel.ShardKeys[i] = k
		}
		return sel, nil
	case kindObject:
		so, err := readObject(v, path, "target", "fallback")
		if err != nil {
			return nil, err
		}
		tv, err := so.require("target")
		if err != nil {
			return nil, err
		}
		fv, err := so.require("fallback")
		if err != nil {
			return nil, err
		}
		t, err := toShardKey(tv, so.sub("target"))
		if err != nil {
			return nil, err
		}
		f, err := toShardKey(fv, so.sub("fallback"))
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
func optLookupFrom(o object, key string) (*qdrant.LookupLocation, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	lo, err := readObject(v, o.sub(key), "collection", "vector", "shard_key")
	if err != nil {
		return nil, err
	}
	l := &qdrant.LookupLocation{}
	if l.CollectionName, err = reqString(lo, "collection"); err != nil {
		return nil, err
	}
	if l.VectorName, err = lo.str("vector"); err != nil {
		return nil, err
	}
	if l.ShardKeySelector, err = optShardKey(lo, "shard_key"); err != nil {
		return nil, err
	}
	return l, nil
}

// optWithLookup reads WithLookupInterface: a collection name or
// {collection, with_payload (default true), with_vectors}.
func optWithLookup(o object, key string) (*qdrant.WithLookup, shape, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, shape{}, nil
	}
	if v.kind == kindString {
		return &qdrant.WithLookup{Collection: v.s, WithPayload: qdrant.NewWithPayloadEnable(true)}, shape{payload: true}, nil
	}
	lo, err := readObject(v, o.sub(key), "collection", "with_payload", "with_vectors", "with_vector")
	if err != nil {
		return nil, shape{}, err
	}
	wl := &qdrant.WithLookup{}
	if wl.Collection, err = reqString(lo, "collection"); err != nil {
		return nil, shape{}, err
	}
	if wl.WithPayload, wl.WithVectors, err = selectors(lo, boolPtr(true)); err != nil {
		return nil, shape{}, err
	}
	return wl, shape{payload: payloadRequested(wl.WithPayload)}, nil
}

// limitField reads a limit that must be at least 1 (Qdrant validates it
// with range(min = 1): 422).
func limitField(o object, key string) (*uint64, error) {
	n, err := o.u64(key)
	if err != nil {
		return nil, err
	}
	if n != nil && *n == 0 {
		return nil, validationErr(o.sub(key), "value 0 invalid, must be 1 or larger")
	}
	return n, nil
}

func u64Ptr(n uint64) *uint64 { return &n }

// toQuery reads QueryInterface: a bare vector or point id (nearest), or one
// of the query objects.
func toQuery(v value, path string) (*qdrant.Query, error) {
	if v.kind != kindObject {
		in, err := toVectorInput(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewQueryNearest(in), nil
	}
	keys := memberKeys(v)
	switch {
	case keys["nearest"]:
		o, err := readObject(v, path, "nearest", "mmr")
		if err != nil {
			return nil, err
		}
		in, err := toVectorInput(o.m["nearest"], o.sub("nearest"))
		if err != nil {
			return nil, err
		}
		mv, ok := o.get("mmr")
		if !ok {
			return qdrant.NewQueryNearest(in), nil
		}
		mo, err := readObject(mv, o.sub("mmr"), "diversity", "candidates_limit")
		if err != nil {
			return nil, err
		}
		m := &qdrant.Mmr{}
		if m.Diversity, err = mo.f32("diversity"); err != nil {
			return nil, err
		}
		if m.Diversity != nil && (*m.Diversity < 0 || *m.Diversity > 1) {
			return nil, validationErr(mo.sub("diversity"), "value %v invalid, must be from 0.0 to 1.0", *m.Diversity)
		}
		if m.CandidatesLimit, err = mo.u32("candidates_limit"); err != nil {
			return nil, err
		}
		if m.CandidatesLimit != nil && *m.CandidatesLimit > 16384 {
			return nil, validationErr(mo.sub("candidates_limit"), "value %d invalid, must be 16384 or smaller", *m.CandidatesLimit)
		}
		return qdrant.NewQueryMMR(in, m), nil
	case keys["recommend"]:
		o, err := readObject(v, path, "recommend")
		if err != nil {
			return nil, err
		}
		ro, err := readObject(o.m["recommend"], o.sub("recommend"), "positive", "negative", "strategy")
		if err != nil {
			return nil, err
		}
		rec := &qdrant.RecommendInput{}
		if pv, ok := ro.get("positive"); ok {
			if rec.Positive, err = toVectorInputs(pv, ro.sub("positive")); err != nil {
				return nil, err
			}
		}
		if nv, ok := ro.get("negative"); ok {
			if rec.Negative, err = toVectorInputs(nv, ro.sub("negative")); err != nil {
				return nil, err
			}
		}
		if sv, ok := ro.get("strategy"); ok {
			var s qdrant.RecommendStrategy
			switch {
			case sv.kind == kindString && sv.s == "average_vector":
				s = qdrant.RecommendStrategy_AverageVector
			case sv.kind == kindString && sv.s == "best_score":
				s = qdrant.RecommendStrategy_BestScore
			case sv.kind == kindString && sv.s == "sum_scores":
				s = qdrant.RecommendStrategy_SumScores
			default:
				return nil, formatErr(ro.sub("strategy"), "unknown variant %s, expected one of `average_vector`, `best_score`, `sum_scores`", sv.describe())
			}
			rec.Strategy = &s
		}
		return qdrant.NewQueryRecommend(rec), nil
	case keys["discover"]:
		o, err := readObject(v, path, "discover")
		if err != nil {
			return nil, err
		}
		do, err := readObject(o.m["discover"], o.sub("discover"), "target", "context")
		if err != nil {
			return nil, err
		}
		tv, err := do.require("target")
		if err != nil {
			return nil, err
		}
		target, err := toVectorInput(tv, do.sub("target"))
		if err != nil {
			return nil, err
		}
		ctx, err := contextPairs(do.m["context"], do.sub("context"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewQueryDiscover(&qdrant.DiscoverInput{Target: target, Context: ctx}), nil
	case keys["context"]:
		o, err := readObject(v, path, "context")
		if err != nil {
			return nil, err
		}
		ctx, err := contextPairs(o.m["context"], o.sub("context"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewQueryContext(ctx), nil
	case keys["order_by"]:
		o, err := readObject(v, path, "order_by")
		if err != nil {
			return nil, err
		}
		ob, err := toOrderBy(o.m["order_by"], o.sub("order_by"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewQueryOrderBy(ob), nil
	case keys["fusion"]:
		o, err := readObject(v, path, "fusion")
		if err != nil {
			return nil, err
		}
		fv := o.m["fusion"]
		switch {
		case fv.kind == kindString && fv.s == "rrf":
			return qdrant.NewQueryFusion(qdrant.Fusion_RRF), nil
		case fv.kind == kindString && fv.s == "dbsf":
			return qdrant.NewQueryFusion(qdrant.Fusion_DBSF), nil
		}
		return nil, formatErr(o.sub("fusion"), "unknown variant %s, expected `rrf` or `dbsf`", fv.describe())
	case keys["rrf"]:
		o, err := readObject(v, path, "rrf")
		if err != nil {
			return nil, err
		}
		ro, err := readObject(o.m["rrf"], o.sub("rrf"), "k", "weights")
		if err != nil {
			return nil, err
		}
		r := &qdrant.Rrf{}
		if r.K, err = ro.u32("k"); err != nil {
			return nil, err
		}
		if r.K != nil && *r.K == 0 {
			return nil, validationErr(ro.sub("k"), "value 0 invalid, must be 1 or larger")
		}
		if wv, ok := ro.get("weights"); ok {
			if r.Weights, err = toDense(wv, ro.sub("weights")); err != nil {
				return nil, err
			}
		}
		return qdrant.NewQueryRRF(r), nil
	case keys["formula"]:
		o, err := readObject(v, path, "formula", "defaults")
		if err != nil {
			return nil, err
		}
		expr, err := toExpression(o.m["formula"], o.sub("formula"), 0)
		if err != nil {
			return nil, err
		}
		f := &qdrant.Formula{Expression: expr}
		if dv, ok := o.get("defaults"); ok {
			if f.Defaults, err = toPayload(dv, o.sub("defaults")); err != nil {
				return nil, err
			}
		}
		return qdrant.NewQueryFormula(f), nil
	case keys["sample"]:
		o, err := readObject(v, path, "sample")
		if err != nil {
			return nil, err
		}
		if sv := o.m["sample"]; sv.kind != kindString || sv.s != "random" {
			return nil, formatErr(o.sub("sample"), "unknown variant %s, expected `random`", sv.describe())
		}
		return qdrant.NewQuerySample(qdrant.Sample_Random), nil
	case keys["relevance_feedback"]:
		o, err := readObject(v, path, "relevance_feedback")
		if err != nil {
			return nil, err
		}
		rf, err := relevanceFeedback(o.m["relevance_feedback"], o.sub("relevance_feedback"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewQueryRelevanceFeedback(rf), nil
	}
	// A sparse vector or an inference object given bare.
	in, err := toVectorInput(v, path)
	if err != nil {
		if de, ok := err.(*decodeError); ok && !de.untranslated {
			return nil, formatErr(path, "Expected some form of vector, id, or a type of query (%s)", de.msg)
		}
		return nil, err
	}
	return qdrant.NewQueryNearest(in), nil
}

// contextPairs reads MaybeOneOrMany<ContextPair> (absent or null = none).
func contextPairs(v value, path string) (*qdrant.ContextInput, error) {
	ctx := &qdrant.ContextInput{}
	var items []value
	switch v.kind {
	case kindNull:
		return ctx, nil
	case kindArray:
		items = v.items()
	default:
		items = []value{v}
		path = index(path, 0)
	}
	for i, e := range items {
		p := path
		if v.kind == kindArray {
			p = index(path, i)
		}
		po, err := readObject(e, p, "positive", "negative")
		if err != nil {
			return nil, err
		}
		pv, err := po.require("positive")
		if err != nil {
			return nil, err
		}
		nv, err := po.require("negative")
		if err != nil {
			return nil, err
		}
		pos, err := toVectorInput(pv, po.sub("positive"))
		if err != nil {
			return nil, err
		}
		neg, err := toVectorInput(nv, po.sub("negative"))
		if err != nil {
			return nil, err
		}
		ctx.Pairs = append(ctx.Pairs, &qdrant.ContextInputPair{Positive: pos, Negative: neg})
	}
	return ctx, nil
}

func relevanceFeedback(v value, path string) (*qdrant.RelevanceFeedbackInput, error) {
	o, err := readObject(v, path, "target", "feedback", "strategy")
	if err != nil {
		return nil, err
	}
	tv, err := o.require("target")
	if err != nil {
		return nil, err
	}
	rf := &qdrant.RelevanceFeedbackInput{}
	if rf.Target, err = toVectorInput(tv, o.sub("target")); err != nil {
		return nil, err
	}
	fv, err := o.require("feedback")
	if err != nil {
		return nil, err
	}
	if fv.kind != kindArray {
		return nil, typeErr(o.sub("feedback"), fv, "a sequence of feedback items")
	}
	for i, e := range fv.items() {
		io, err := readObject(e, index(o.sub("feedback"), i), "example", "score")
		if err != nil {
			return nil, err
		}
		ev, err := io.require("example")
		if err != nil {
			return nil, err
		}
		ex, err := toVectorInput(ev, io.sub("example"))
		if err != nil {
			return nil, err
		}
		score, err := io.f32("score")
		if err != nil {
			return nil, err
		}
		if score == nil {
			return nil, formatErr(io.path, "missing field `score`")
		}
		rf.Feedback = append(rf.Feedback, &qdrant.FeedbackItem{Example: ex, Score: *score})
	}
	sv, err := o.require("strategy")
	if err != nil {
		return nil, err
	}
	so, err := readObject(sv, o.sub("strategy"), "naive")
	if err != nil {
		return nil, err
	}
	nv, err := so.require("naive")
	if err != nil {
		return nil, err
	}
	no, err := readObject(nv, so.sub("naive"), "a", "b", "c")
	if err != nil {
		return nil, err
	}
	var abc [3]float32
	for i, k := range []string{"a", "b", "c"} {
		f, err := no.f32(k)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, formatErr(no.path, "missing field `%s`", k)
		}
		abc[i] = *f
	}
	if abc[1] < 0 {
		return nil, validationErr(no.sub("b"), "value %v invalid, must be 0.0 or larger", abc[1])
	}
	rf.Strategy = qdrant.NewFeedbackStrategyNaive(&qdrant.NaiveFeedbackStrategy{A: abc[0], B: abc[1], C: abc[2]})
	return rf, nil
}

// toOrderBy reads OrderByInterface: a key, or {key, direction, start_from}.
func toOrderBy(v value, path string) (*qdrant.OrderBy, error) {
	if v.kind == kindString {
		return &qdrant.OrderBy{Key: v.s}, nil
	}
	o, err := readObject(v, path, "key", "direction", "start_from")
	if err != nil {
		return nil, err
	}
	ob := &qdrant.OrderBy{}
	if ob.Key, err = reqString(o, "key"); err != nil {
		return nil, err
	}
	if dv, ok := o.get("direction"); ok {
		var d qdrant.Direction
		switch {
		case dv.kind == kindString && dv.s == "asc":
			d = qdrant.Direction_Asc
		case dv.kind == kindString && dv.s == "desc":
			d = qdrant.Direction_Desc
		default:
			return nil, formatErr(o.sub("direction"), "unknown variant %s, expected `asc` or `desc`", dv.describe())
		}
		ob.Direction = &d
	}
	if sv, ok := o.get("start_from"); ok {
		switch sv.kind {
		case kindNumber:
			if isIntLiteral(sv.s) {
				n, err := toI64(sv, o.sub("start_from"))
				if err != nil {
					return nil, err
				}
				ob.StartFrom = qdrant.NewStartFromInt(n)
			} else {
				f, err := toF64(sv, o.sub("start_from"))
				if err != nil {
					return nil, err
				}
				ob.StartFrom = qdrant.NewStartFromFloat(f)
			}
		case kindString:
			if _, ok := parseDatetime(sv.s); !ok {
				return nil, formatErr(o.sub("start_from"), "'%s' does not match accepted datetime format (RFC3339). Example: 2014-01-01T00:00:00Z", sv.s)
			}
			ob.StartFrom = qdrant.NewStartFromDatetime(sv.s)
		default:
			return nil, typeErr(o.sub("start_from"), sv, "an integer, a number or a datetime string")
		}
	}
	return ob, nil
}

// maxExpressionDepth bounds formula nesting independently of JSON depth.
const maxExpressionDepth = 64

// toExpression reads a formula Expression.
func toExpression(v value, path string, depth int) (*qdrant.Expression, error) {
	if depth > maxExpressionDepth {
		return nil, formatErr(path, "expression nested too deeply")
	}
	switch v.kind {
	case kindNumber:
		f, err := toF32(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewExpressionConstant(f), nil
	case kindString:
		return qdrant.NewExpressionVariable(v.s), nil
	case kindObject:
	default:
		return nil, formatErr(path, "invalid type: %s, expected an expression", v.describe())
	}
	if len(v.members) == 1 {
		mb := v.members[0]
		p := join(path, mb.key)
		one := func(build func(*qdrant.Expression) *qdrant.Expression) (*qdrant.Expression, error) {
			e, err := toExpression(mb.val, p, depth+1)
			if err != nil {
				return nil, err
			}
			return build(e), nil
		}
		list := func() ([]*qdrant.Expression, error) {
			if mb.val.kind != kindArray {
				return nil, typeErr(p, mb.val, "a sequence of expressions")
			}
			items := mb.val.items()
			out := make([]*qdrant.Expression, len(items))
			for i, e := range items {
				x, err := toExpression(e, index(p, i), depth+1)
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}
		switch mb.key {
		case "mult":
			xs, err := list()
			if err != nil {
				return nil, err
			}
			return qdrant.NewExpressionMult(&qdrant.MultExpression{Mult: xs}), nil
		case "sum":
			xs, err := list()
			if err != nil {
				return nil, err
			}
			return qdrant.NewExpressionSum(&qdrant.SumExpression{Sum: xs}), nil
		case "neg":
			return one(qdrant.NewExpressionNeg)
		case "abs":
			return one(qdrant.NewExpressionAbs)
		case "sqrt":
			return one(qdrant.NewExpressionSqrt)
		case "exp":
			return one(qdrant.NewExpressionExp)
		case "log10":
			return one(qdrant.NewExpressionLog10)
		case "ln":
			return one(qdrant.NewExpressionLn)
		case "div":
			o, err := readObject(mb.val, p, "left", "right", "by_zero_default")
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
			if d.ByZeroDefault, err = o.f32("by_zero_default"); err != nil {
				return nil, err
			}
			return qdrant.NewExpressionDiv(d), nil
		case "pow":
			o, err := readObject(mb.val, p, "base", "exponent")
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
		case "geo_distance":
			o, err := readObject(mb.val, p, "origin", "to")
			if err != nil {
				return nil, err
			}
			origin, err := geoPointField(o, "origin")
			if err != nil {
				return nil, err
			}
			to, err := reqString(o, "to")
			if err != nil {
				return nil, err
			}
			return qdrant.NewExpressionGeoDistance(&qdrant.GeoDistance{Origin: origin, To: to}), nil
		case "datetime":
			if mb.val.kind != kindString {
				return nil, typeErr(p, mb.val, "a datetime string")
			}
			return qdrant.NewExpressionDatetime(mb.val.s), nil
		case "datetime_key":
			if mb.val.kind != kindString {
				return nil, typeErr(p, mb.val, "a payload key")
			}
			return qdrant.NewExpressionDatetimeKey(mb.val.s), nil
		case "lin_decay", "exp_decay", "gauss_decay":
			o, err := readObject(mb.val, p, "x", "target", "scale", "midpoint")
			if err != nil {
				return nil, err
			}
			d := &qdrant.DecayParamsExpression{}
			if d.X, err = subExpression(o, "x", depth); err != nil {
				return nil, err
			}
			if tv, ok := o.get("target"); ok {
				if d.Target, err = toExpression(tv, o.sub("target"), depth+1); err != nil {
					return nil, err
				}
			}
			if d.Scale, err = o.f32("scale"); err != nil {
				return nil, err
			}
			if d.Midpoint, err = o.f32("midpoint"); err != nil {
				return nil, err
			}
			switch mb.key {
			case "lin_decay":
				return qdrant.NewExpressionLinDecay(d), nil
			case "exp_decay":
				return qdrant.NewExpressionExpDecay(d), nil
			}
			return qdrant.NewExpressionGaussDecay(d), nil
		}
	}
	// Anything else is a filter condition (1 when it matches, else 0).
	c, err := decodeCondition(v, path)
	if err != nil {
		return nil, err
	}
	return qdrant.NewExpressionCondition(c), nil
}

func subExpression(o object, key string, depth int) (*qdrant.Expression, error) {
	v, err := o.require(key)
	if err != nil {
		return nil, err
	}
	return toExpression(v, o.sub(key), depth+1)
}

// prefetches reads MaybeOneOrMany<Prefetch>.
func prefetches(o object, key string, depth int) ([]*qdrant.PrefetchQuery, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	path := o.sub(key)
	if v.kind != kindArray {
		p, err := toPrefetch(v, path, depth)
		if err != nil {
			return nil, err
		}
		return []*qdrant.PrefetchQuery{p}, nil
	}
	items := v.items()
	out := make([]*qdrant.PrefetchQuery, len(items))
	for i, e := range items {
		p, err := toPrefetch(e, index(path, i), depth)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

var prefetchFields = []string{"prefetch", "query", "using", "filter", "params", "score_threshold", "limit", "lookup_from"}

func toPrefetch(v value, path string, depth int) (*qdrant.PrefetchQuery, error) {
	if depth > maxExpressionDepth {
		return nil, formatErr(path, "prefetch nested too deeply")
	}
	o, err := readObject(v, path, prefetchFields...)
	if err != nil {
		return nil, err
	}
	p := &qdrant.PrefetchQuery{}
	if p.Prefetch, err = prefetches(o, "prefetch", depth+1); err != nil {
		return nil, err
	}
	if qv, ok := o.get("query"); ok {
		if p.Query, err = toQuery(qv, o.sub("query")); err != nil {
			return nil, err
		}
	}
	if p.Using, err = o.str("using"); err != nil {
		return nil, err
	}
	if p.Filter, err = optFilter(o, "filter"); err != nil {
		return nil, err
	}
	if p.Params, err = optParams(o); err != nil {
		return nil, err
	}
	if p.ScoreThreshold, err = o.f32("score_threshold"); err != nil {
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
func toQueryPoints(v value, path, collection string) (*qdrant.QueryPoints, error) {
	o, err := readObject(v, path, queryFields...)
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
	if qv, ok := o.get("query"); ok {
		if q.Query, err = toQuery(qv, o.sub("query")); err != nil {
			return nil, err
		}
	}
	if q.Using, err = o.str("using"); err != nil {
		return nil, err
	}
	if q.Filter, err = optFilter(o, "filter"); err != nil {
		return nil, err
	}
	if q.Params, err = optParams(o); err != nil {
		return nil, err
	}
	if q.ScoreThreshold, err = o.f32("score_threshold"); err != nil {
		return nil, err
	}
	if q.Limit, err = limitField(o, "limit"); err != nil {
		return nil, err
	}
	if q.Limit == nil {
		q.Limit = u64Ptr(defaultQueryLimit)
	}
	if q.Offset, err = o.u64("offset"); err != nil {
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

func toQueryGroups(v value, collection string) (*qdrant.QueryPointGroups, shape, error) {
	o, err := readObject(v, "", queryGroupsFields...)
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
	if qv, ok := o.get("query"); ok {
		if q.Query, err = toQuery(qv, "query"); err != nil {
			return nil, shape{}, err
		}
	}
	if q.Using, err = o.str("using"); err != nil {
		return nil, shape{}, err
	}
	if q.Filter, err = optFilter(o, "filter"); err != nil {
		return nil, shape{}, err
	}
	if q.Params, err = optParams(o); err != nil {
		return nil, shape{}, err
	}
	if q.ScoreThreshold, err = o.f32("score_threshold"); err != nil {
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
	if q.GroupBy, err = reqString(o, "group_by"); err != nil {
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
func namedVector(o object, key string) (vec []float32, name *string, sparse *qdrant.SparseIndices, err error) {
	v, err := o.require(key)
	if err != nil {
		return nil, nil, nil, err
	}
	path := o.sub(key)
	if v.kind == kindArray {
		vec, err = toDense(v, path)
		return vec, nil, nil, err
	}
	no, err := readObject(v, path, "name", "vector")
	if err != nil {
		return nil, nil, nil, err
	}
	n, err := reqString(no, "name")
	if err != nil {
		return nil, nil, nil, err
	}
	vv, err := no.require("vector")
	if err != nil {
		return nil, nil, nil, err
	}
	if vv.kind == kindObject {
		idx, vals, err := toSparse(vv, no.sub("vector"))
		if err != nil {
			return nil, nil, nil, err
		}
		return vals, &n, &qdrant.SparseIndices{Data: idx}, nil
	}
	vec, err = toDense(vv, no.sub("vector"))
	return vec, &n, nil, err
}

var searchFields = []string{"vector", "filter", "params", "limit", "top", "offset", "with_payload", "with_vector", "with_vectors", "score_threshold", "shard_key"}

// toSearchPoints reads SearchRequest (limit is required; "top" is its alias).
func toSearchPoints(v value, path, collection string) (*qdrant.SearchPoints, error) {
	o, err := readObject(v, path, searchFields...)
	if err != nil {
		return nil, err
	}
	s := &qdrant.SearchPoints{CollectionName: collection}
	if s.Vector, s.VectorName, s.SparseIndices, err = namedVector(o, "vector"); err != nil {
		return nil, err
	}
	if s.Filter, err = optFilter(o, "filter"); err != nil {
		return nil, err
	}
	if s.Params, err = optParams(o); err != nil {
		return nil, err
	}
	lv, lkey, ok, err := o.getAlias("limit", "top")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, formatErr(path, "missing field `limit`")
	}
	limit, err := toU64(lv, o.sub(lkey))
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		return nil, validationErr(o.sub(lkey), "value 0 invalid, must be 1 or larger")
	}
	s.Limit = limit
	if s.Offset, err = o.u64("offset"); err != nil {
		return nil, err
	}
	if s.WithPayload, s.WithVectors, err = selectors(o, boolPtr(false)); err != nil {
		return nil, err
	}
	if s.WithVectors == nil {
		s.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if s.ScoreThreshold, err = o.f32("score_threshold"); err != nil {
		return nil, err
	}
	if s.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	return s, nil
}

var searchGroupsFields = []string{"vector", "filter", "params", "with_payload", "with_vector", "with_vectors", "score_threshold", "group_by", "group_size", "limit", "with_lookup", "shard_key"}

func toSearchGroups(v value, collection string) (*qdrant.SearchPointGroups, shape, error) {
	o, err := readObject(v, "", searchGroupsFields...)
	if err != nil {
		return nil, shape{}, err
	}
	s := &qdrant.SearchPointGroups{CollectionName: collection}
	if s.Vector, s.VectorName, s.SparseIndices, err = namedVector(o, "vector"); err != nil {
		return nil, shape{}, err
	}
	if s.Filter, err = optFilter(o, "filter"); err != nil {
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
	if s.ScoreThreshold, err = o.f32("score_threshold"); err != nil {
		return nil, shape{}, err
	}
	if s.GroupBy, err = reqString(o, "group_by"); err != nil {
		return nil, shape{}, err
	}
	for _, f := range []struct {
		key string
		dst *uint32
	}{{"group_size", &s.GroupSize}, {"limit", &s.Limit}} {
		n, err := o.u32(f.key)
		if err != nil {
			return nil, shape{}, err
		}
		if n == nil {
			return nil, shape{}, formatErr("", "missing field `%s`", f.key)
		}
		if *n == 0 {
			return nil, shape{}, validationErr(f.key, "value 0 invalid, must be 1 or larger")
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
func batchItems(v value) ([]value, error) {
	o, err := readObject(v, "", "searches")
	if err != nil {
		return nil, err
	}
	sv, err := o.require("searches")
	if err != nil {
		return nil, err
	}
	if sv.kind != kindArray {
		return nil, typeErr("searches", sv, "a sequence of requests")
	}
	return sv.items(), nil
}
