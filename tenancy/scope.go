package tenancy

import (
	"fmt"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The request helpers below scope a decoded request in place for one
// tenant. Each first checks the whole request (CheckRequest), then rewrites
// what selects or changes points. They return ErrTenantFilter, ErrForbidden,
// ErrUnsupported or ErrNoTenant (a malformed tenant) wrapped with the field
// at fault.

// opaque messages hold data, never selection: payload values and vectors.
// The walk does not descend into them (an upsert of many points would cost
// a walk over every value for nothing).
var opaque = map[protoreflect.FullName]bool{
	"qdrant.Value": true, "qdrant.Struct": true, "qdrant.ListValue": true,
	"qdrant.Vectors": true, "qdrant.Vector": true, "qdrant.DenseVector": true,
	"qdrant.SparseVector": true, "qdrant.MultiDenseVector": true,
	"qdrant.NamedVectors": true, "qdrant.Document": true, "qdrant.Image": true,
	"qdrant.InferenceObject": true,
}

// walk calls fn on m and every message below it (lists and maps included,
// opaque data excepted), with the field path from the root.
func walk(m protoreflect.Message, path *[]string, fn func(m protoreflect.Message, path []string) error) error {
	if err := fn(m, *path); err != nil {
		return err
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		md := fd.Message()
		if fd.IsMap() {
			md = fd.MapValue().Message()
		}
		if md == nil || opaque[md.FullName()] {
			return true
		}
		name := string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				*path = append(*path, fmt.Sprintf("%s[%d]", name, i))
				err = walk(l.Get(i).Message(), path, fn)
				*path = (*path)[:len(*path)-1]
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				*path = append(*path, fmt.Sprintf("%s[%v]", name, k.Interface()))
				err = walk(mv.Message(), path, fn)
				*path = (*path)[:len(*path)-1]
				return err == nil
			})
		default:
			*path = append(*path, name)
			err = walk(v.Message(), path, fn)
			*path = (*path)[:len(*path)-1]
		}
		return err == nil
	})
	return err
}

func joinPath(path []string) string {
	if len(path) == 0 {
		return "request"
	}
	return strings.Join(path, ".")
}

// CheckRequest refuses a request that carries protobuf fields this build
// does not know (they could change what it selects), or a condition on the
// tenant key anywhere (filters, prefetch filters, formula conditions,
// update filters).
func (p *Policy) CheckRequest(req proto.Message) error {
	var path []string
	return walk(req.ProtoReflect(), &path, func(m protoreflect.Message, path []string) error {
		if len(m.GetUnknown()) > 0 {
			return fmt.Errorf("%w: %s carries fields this memrank does not know", ErrUnsupported, joinPath(path))
		}
		if c, ok := m.Interface().(*qdrant.Condition); ok {
			return p.checkCondition(c, joinPath(path), 0)
		}
		return nil
	})
}

// ReferencedIDs returns the point ids a query reads vectors from (query by
// id, recommend, discover, context, feedback examples), by the collection
// they are looked up in (lookup_from, else the request's collection). The
// front must check that the tenant owns them before running the query:
// otherwise a query by another tenant's id would rank by that tenant's
// vector.
func ReferencedIDs(req proto.Message) map[string][]*qdrant.PointId {
	refs := map[string][]*qdrant.PointId{}
	var visit func(coll string, query *qdrant.Query, lookup *qdrant.LookupLocation, prefetch []*qdrant.PrefetchQuery)
	visit = func(coll string, query *qdrant.Query, lookup *qdrant.LookupLocation, prefetch []*qdrant.PrefetchQuery) {
		from := coll
		if lookup.GetCollectionName() != "" {
			from = lookup.GetCollectionName()
		}
		if query != nil {
			var path []string
			_ = walk(query.ProtoReflect(), &path, func(m protoreflect.Message, _ []string) error {
				if in, ok := m.Interface().(*qdrant.VectorInput); ok && in.GetId() != nil {
					refs[from] = append(refs[from], in.GetId())
				}
				return nil
			})
		}
		for _, pf := range prefetch {
			visit(coll, pf.GetQuery(), pf.GetLookupFrom(), pf.GetPrefetch())
		}
	}
	switch q := req.(type) {
	case *qdrant.QueryPoints:
		visit(q.GetCollectionName(), q.GetQuery(), q.GetLookupFrom(), q.GetPrefetch())
	case *qdrant.QueryPointGroups:
		visit(q.GetCollectionName(), q.GetQuery(), q.GetLookupFrom(), q.GetPrefetch())
	case *qdrant.QueryBatchPoints:
		for _, sub := range q.GetQueryPoints() {
			visit(q.GetCollectionName(), sub.GetQuery(), sub.GetLookupFrom(), sub.GetPrefetch())
		}
	}
	return refs
}

func (p *Policy) scopePrefetch(pfs []*qdrant.PrefetchQuery, tenant, path string) error {
	for i, pf := range pfs {
		at := fmt.Sprintf("%s[%d]", path, i)
		f, err := p.scopeFilter(pf.GetFilter(), tenant, at+".filter")
		if err != nil {
			return err
		}
		pf.Filter = f
		if err := p.scopePrefetch(pf.GetPrefetch(), tenant, at+".prefetch"); err != nil {
			return err
		}
	}
	return nil
}

// ScopeQuery scopes a Query: its filter and every prefetch filter.
// Referenced point ids are the front's to check (ReferencedIDs).
func (p *Policy) ScopeQuery(q *qdrant.QueryPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	if err != nil {
		return err
	}
	q.Filter = f
	return p.scopePrefetch(q.GetPrefetch(), tenant, "prefetch")
}

// ScopeQueryBatch scopes every query of a batch.
func (p *Policy) ScopeQueryBatch(q *qdrant.QueryBatchPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	for i, sub := range q.GetQueryPoints() {
		if err := p.ScopeQuery(sub, tenant); err != nil {
			return fmt.Errorf("query_points[%d]: %w", i, err)
		}
	}
	return nil
}

// ScopeQueryGroups scopes a grouped query. with_lookup is refused: it reads
// points of another collection by group value, which no filter scopes.
func (p *Policy) ScopeQueryGroups(q *qdrant.QueryPointGroups, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	if q.WithLookup != nil {
		return fmt.Errorf("%w: with_lookup", ErrUnsupported)
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	if err != nil {
		return err
	}
	q.Filter = f
	return p.scopePrefetch(q.GetPrefetch(), tenant, "prefetch")
}

// ScopeSearch scopes a Search.
func (p *Policy) ScopeSearch(q *qdrant.SearchPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	q.Filter = f
	return err
}

// ScopeSearchBatch scopes every search of a batch.
func (p *Policy) ScopeSearchBatch(q *qdrant.SearchBatchPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	for i, sub := range q.GetSearchPoints() {
		if err := p.ScopeSearch(sub, tenant); err != nil {
			return fmt.Errorf("search_points[%d]: %w", i, err)
		}
	}
	return nil
}

// ScopeSearchGroups scopes a grouped search; with_lookup is refused.
func (p *Policy) ScopeSearchGroups(q *qdrant.SearchPointGroups, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	if q.WithLookup != nil {
		return fmt.Errorf("%w: with_lookup", ErrUnsupported)
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	q.Filter = f
	return err
}

// ScopeScroll scopes a Scroll.
func (p *Policy) ScopeScroll(q *qdrant.ScrollPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	q.Filter = f
	return err
}

// ScopeCount scopes a Count.
func (p *Policy) ScopeCount(q *qdrant.CountPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	q.Filter = f
	return err
}

// ScopeFacet scopes a Facet (value counts are then per tenant).
func (p *Policy) ScopeFacet(q *qdrant.FacetCounts, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	q.Filter = f
	return err
}

// ScopeSearchMatrix scopes SearchMatrixPairs / SearchMatrixOffsets.
func (p *Policy) ScopeSearchMatrix(q *qdrant.SearchMatrixPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetFilter(), tenant, "filter")
	q.Filter = f
	return err
}

// ScopeSelector turns a points selector into a scoped filter: by filter,
// "tenant AND filter"; by ids, "tenant AND has_id(ids)". A missing selector
// is refused rather than widened to the whole tenant.
func (p *Policy) ScopeSelector(sel *qdrant.PointsSelector, tenant, path string) (*qdrant.PointsSelector, error) {
	switch x := sel.GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Filter:
		f, err := p.scopeFilter(x.Filter, tenant, path+".filter")
		if err != nil {
			return nil, err
		}
		return qdrant.NewPointsSelectorFilter(f), nil
	case *qdrant.PointsSelector_Points:
		ids := x.Points.GetIds()
		f, err := p.scopeFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(ids...)}}, tenant, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewPointsSelectorFilter(f), nil
	}
	return nil, fmt.Errorf("%w: %s is required", ErrUnsupported, path)
}

// ScopeDelete scopes a Delete.
func (p *Policy) ScopeDelete(q *qdrant.DeletePoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	sel, err := p.ScopeSelector(q.GetPoints(), tenant, "points")
	q.Points = sel
	return err
}

// checkPayloadKeys refuses a payload write that would change the tenant key
// to anything but the tenant itself.
func (p *Policy) checkPayload(payload map[string]*qdrant.Value, tenant, path string) error {
	if v, ok := payload[p.Key]; ok && !p.Owns(map[string]*qdrant.Value{p.Key: v}, tenant) {
		return fmt.Errorf("%w: %s sets the tenant key %q to another value", ErrForbidden, path, p.Key)
	}
	return nil
}

// ScopeSetPayload scopes a SetPayload; setting the tenant key (other than
// to the tenant), or writing under it with key, is refused.
func (p *Policy) ScopeSetPayload(q *qdrant.SetPayloadPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	if q.Key != nil {
		if p.mentions(q.GetKey()) {
			return fmt.Errorf("%w: key %q is under the tenant key", ErrForbidden, q.GetKey())
		}
	} else if err := p.checkPayload(q.GetPayload(), tenant, "payload"); err != nil {
		return err
	}
	sel, err := p.ScopeSelector(q.GetPointsSelector(), tenant, "points_selector")
	q.PointsSelector = sel
	return err
}

// ScopeOverwritePayload scopes an OverwritePayload and keeps the tenant key
// in the new payload (a payload of another tenant is refused).
func (p *Policy) ScopeOverwritePayload(q *qdrant.SetPayloadPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	if q.Key != nil && p.mentions(q.GetKey()) {
		return fmt.Errorf("%w: key %q is under the tenant key", ErrForbidden, q.GetKey())
	}
	if q.Key == nil {
		if err := p.checkPayload(q.GetPayload(), tenant, "payload"); err != nil {
			return err
		}
		if q.Payload == nil {
			q.Payload = map[string]*qdrant.Value{}
		}
		q.Payload[p.Key] = p.Value(tenant)
	}
	sel, err := p.ScopeSelector(q.GetPointsSelector(), tenant, "points_selector")
	q.PointsSelector = sel
	return err
}

// ScopeDeletePayload scopes a DeletePayload; deleting the tenant key is
// refused.
func (p *Policy) ScopeDeletePayload(q *qdrant.DeletePayloadPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	for i, k := range q.GetKeys() {
		if p.mentions(k) {
			return fmt.Errorf("%w: keys[%d] %q is the tenant key", ErrForbidden, i, k)
		}
	}
	sel, err := p.ScopeSelector(q.GetPointsSelector(), tenant, "points_selector")
	q.PointsSelector = sel
	return err
}

// ClearAsOverwrite turns a ClearPayload into the OverwritePayload that
// clears everything but the tenant key (a cleared point would otherwise
// belong to no tenant, and be invisible to its owner for ever). Both
// methods answer a PointsOperationResponse.
func (p *Policy) ClearAsOverwrite(q *qdrant.ClearPayloadPoints, tenant string) (*qdrant.SetPayloadPoints, error) {
	if err := p.CheckRequest(q); err != nil {
		return nil, err
	}
	sel, err := p.ScopeSelector(q.GetPoints(), tenant, "points")
	if err != nil {
		return nil, err
	}
	return &qdrant.SetPayloadPoints{
		CollectionName:   q.GetCollectionName(),
		Wait:             q.Wait,
		Payload:          map[string]*qdrant.Value{p.Key: p.Value(tenant)},
		PointsSelector:   sel,
		Ordering:         q.Ordering,
		ShardKeySelector: q.ShardKeySelector,
		Timeout:          q.Timeout,
	}, nil
}

// ScopeUpsert forces the tenant key into every point's payload (a point
// that carries another tenant is refused) and scopes update_filter to the
// tenant, so an existing point of another tenant with the same id is left
// as it is (Qdrant's conditional upsert: non-matching existing points keep
// their state; new ids are inserted).
func (p *Policy) ScopeUpsert(q *qdrant.UpsertPoints, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	for i, pt := range q.GetPoints() {
		if err := p.checkPayload(pt.GetPayload(), tenant, fmt.Sprintf("points[%d].payload", i)); err != nil {
			return err
		}
		if pt.Payload == nil {
			pt.Payload = map[string]*qdrant.Value{}
		}
		pt.Payload[p.Key] = p.Value(tenant)
	}
	f, err := p.scopeFilter(q.GetUpdateFilter(), tenant, "update_filter")
	q.UpdateFilter = f
	return err
}

// ScopeUpdateVectors scopes UpdateVectors through its update_filter.
func (p *Policy) ScopeUpdateVectors(q *qdrant.UpdatePointVectors, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	f, err := p.scopeFilter(q.GetUpdateFilter(), tenant, "update_filter")
	q.UpdateFilter = f
	return err
}

// ScopeDeleteVectors scopes DeleteVectors.
func (p *Policy) ScopeDeleteVectors(q *qdrant.DeletePointVectors, tenant string) error {
	if err := p.CheckRequest(q); err != nil {
		return err
	}
	sel, err := p.ScopeSelector(q.GetPointsSelector(), tenant, "points_selector")
	q.PointsSelector = sel
	return err
}

// GetScope is what ScopeGet changed in a Get, to undo on its answer.
type GetScope struct {
	p      *Policy
	tenant string
	strip  bool // the caller did not ask for the tenant key: remove it
	none   bool // the caller asked for no payload at all
}

// ScopeGet prepares a Get (which has no filter): the payload selector is
// widened to include the tenant key, and Filter must be applied to the
// answer.
func (p *Policy) ScopeGet(q *qdrant.GetPoints, tenant string) (GetScope, error) {
	g := GetScope{p: p, tenant: tenant}
	if err := p.CheckRequest(q); err != nil {
		return g, err
	}
	if err := p.checkTenant(tenant); err != nil {
		return g, err
	}
	switch x := q.GetWithPayload().GetSelectorOptions().(type) {
	case nil:
		g.strip, g.none = true, true
		q.WithPayload = qdrant.NewWithPayloadInclude(p.Key)
	case *qdrant.WithPayloadSelector_Enable:
		if !x.Enable {
			g.strip, g.none = true, true
			q.WithPayload = qdrant.NewWithPayloadInclude(p.Key)
		}
	case *qdrant.WithPayloadSelector_Include:
		has := false
		for _, f := range x.Include.GetFields() {
			has = has || strings.TrimSpace(f) == p.Key
		}
		if !has {
			g.strip = true
			fields := append(append([]string(nil), x.Include.GetFields()...), p.Key)
			q.WithPayload = qdrant.NewWithPayloadInclude(fields...)
		}
	case *qdrant.WithPayloadSelector_Exclude:
		var keep []string
		for _, f := range x.Exclude.GetFields() {
			if p.mentions(f) {
				g.strip = true
				continue
			}
			keep = append(keep, f)
		}
		if g.strip {
			if len(keep) == 0 {
				q.WithPayload = qdrant.NewWithPayloadEnable(true)
			} else {
				q.WithPayload = qdrant.NewWithPayloadExclude(keep...)
			}
		}
	}
	return g, nil
}

// Filter keeps the points the tenant owns and strips the tenant key the
// caller did not ask for. It reuses pts.
func (g GetScope) Filter(pts []*qdrant.RetrievedPoint) []*qdrant.RetrievedPoint {
	out := pts[:0]
	for _, pt := range pts {
		if !g.p.Owns(pt.GetPayload(), g.tenant) {
			continue
		}
		if g.none {
			pt.Payload = nil
		} else if g.strip {
			delete(pt.Payload, g.p.Key)
		}
		out = append(out, pt)
	}
	clear(pts[len(out):])
	return out
}
