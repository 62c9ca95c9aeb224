package grpcfront

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/tenancy"
)

// serveTenant routes a call when tenancy is on: point methods are decoded
// and scoped, collection reads and health are forwarded, administration is
// kept to administrators, and everything else is refused (fail closed).
func (c *call) serveTenant() error {
	p := c.f.tenancy
	name := shortMethod(c.method)
	switch tenancy.Classify(c.method) {
	case tenancy.Open:
		if err := p.Authenticated(c.md); err != nil {
			return c.refuse(err)
		}
		return c.forwardStream()
	case tenancy.Admin:
		if err := p.Admin(c.md); err != nil {
			return c.refuse(fmt.Errorf("%s is an administration method: %w", name, err))
		}
		return c.forwardStream()
	case tenancy.Scoped:
		h := scopedHandlers[c.method]
		if h == nil {
			break
		}
		tenant, err := p.Tenant(c.md)
		if err != nil {
			return c.refuse(err)
		}
		c.tenant, c.scoped, c.route = tenant, true, routeScoped
		return c.unary(h)
	}
	if c.method == "/qdrant.Points/UpdateBatch" {
		return c.refuse(fmt.Errorf("%w: UpdateBatch is not available when tenancy is on: send its operations one by one", tenancy.ErrForbidden))
	}
	return c.refuse(fmt.Errorf("%w: %s is not available when tenancy is on", tenancy.ErrForbidden, name))
}

// shortMethod is "Points/Query" for "/qdrant.Points/Query".
func shortMethod(m string) string {
	return strings.TrimPrefix(strings.TrimPrefix(m, "/"), "qdrant.")
}

// scopedHandlers serve the point methods with tenancy on.
var scopedHandlers = map[string]func(*call, []byte) ([]byte, error){
	"/qdrant.Points/Query": scoped(func(c *call, q *qdrant.QueryPoints) ([]byte, error) {
		if err := c.f.tenancy.ScopeQuery(q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		if err := c.checkRefs(q); err != nil {
			return nil, err
		}
		return c.query(q, nil)
	}),
	"/qdrant.Points/QueryBatch": scoped(func(c *call, q *qdrant.QueryBatchPoints) ([]byte, error) {
		if err := c.f.tenancy.ScopeQueryBatch(q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		if err := c.checkRefs(q); err != nil {
			return nil, err
		}
		return c.queryBatch(q, nil)
	}),
	"/qdrant.Points/QueryGroups": scoped(func(c *call, q *qdrant.QueryPointGroups) ([]byte, error) {
		if err := c.f.tenancy.ScopeQueryGroups(q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		if err := c.checkRefs(q); err != nil {
			return nil, err
		}
		return c.queryGroups(q, nil)
	}),
	"/qdrant.Points/Search": scoped(func(c *call, q *qdrant.SearchPoints) ([]byte, error) {
		if err := c.f.tenancy.ScopeSearch(q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		return c.search(q, nil)
	}),
	"/qdrant.Points/SearchBatch": scoped(func(c *call, q *qdrant.SearchBatchPoints) ([]byte, error) {
		if err := c.f.tenancy.ScopeSearchBatch(q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		return c.searchBatch(q, nil)
	}),
	"/qdrant.Points/SearchGroups": scoped(func(c *call, q *qdrant.SearchPointGroups) ([]byte, error) {
		if err := c.f.tenancy.ScopeSearchGroups(q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		return c.searchGroups(q, nil)
	}),
	"/qdrant.Points/Scroll":              scopedForward((*tenancy.Policy).ScopeScroll),
	"/qdrant.Points/Count":               scopedForward((*tenancy.Policy).ScopeCount),
	"/qdrant.Points/Facet":               scopedForward((*tenancy.Policy).ScopeFacet),
	"/qdrant.Points/SearchMatrixPairs":   scopedForward((*tenancy.Policy).ScopeSearchMatrix),
	"/qdrant.Points/SearchMatrixOffsets": scopedForward((*tenancy.Policy).ScopeSearchMatrix),
	"/qdrant.Points/Upsert":              scopedForward((*tenancy.Policy).ScopeUpsert),
	"/qdrant.Points/Delete":              scopedForward((*tenancy.Policy).ScopeDelete),
	"/qdrant.Points/UpdateVectors":       scopedForward((*tenancy.Policy).ScopeUpdateVectors),
	"/qdrant.Points/DeleteVectors":       scopedForward((*tenancy.Policy).ScopeDeleteVectors),
	"/qdrant.Points/SetPayload":          scopedForward((*tenancy.Policy).ScopeSetPayload),
	"/qdrant.Points/OverwritePayload":    scopedForward((*tenancy.Policy).ScopeOverwritePayload),
	"/qdrant.Points/DeletePayload":       scopedForward((*tenancy.Policy).ScopeDeletePayload),
	"/qdrant.Points/ClearPayload": scoped(func(c *call, q *qdrant.ClearPayloadPoints) ([]byte, error) {
		ow, err := c.f.tenancy.ClearAsOverwrite(q, c.tenant)
		if err != nil {
			return nil, c.scopeErr(err)
		}
		b, err := encode(ow)
		if err != nil {
			return nil, err
		}
		return c.forwardUnary("/qdrant.Points/OverwritePayload", b)
	}),
	"/qdrant.Points/Get": scoped(func(c *call, q *qdrant.GetPoints) ([]byte, error) {
		g, err := c.f.tenancy.ScopeGet(q, c.tenant)
		if err != nil {
			return nil, c.scopeErr(err)
		}
		b, err := encode(q)
		if err != nil {
			return nil, err
		}
		out, err := c.forwardUnary(c.method, b)
		if err != nil {
			return nil, err
		}
		var resp qdrant.GetResponse
		if err := proto.Unmarshal(out, &resp); err != nil {
			return nil, fmt.Errorf("grpcfront: decode the upstream's Get response: %w", err)
		}
		resp.Result = g.Filter(resp.Result)
		return encode(&resp)
	}),
}

// scoped decodes a point method's request for a tenant; a request that does
// not decode is refused (it cannot be scoped, so it is not forwarded).
func scoped[T any, PT interface {
	*T
	proto.Message
}](h func(*call, PT) ([]byte, error)) func(*call, []byte) ([]byte, error) {
	return func(c *call, in []byte) ([]byte, error) {
		req := PT(new(T))
		if err := proto.Unmarshal(in, req); err != nil {
			return nil, c.scopeErr(fmt.Errorf("%w: %v", errMalformed, err))
		}
		return h(c, req)
	}
}

// scopedForward scopes a request with a tenancy helper and forwards it.
func scopedForward[T any, PT interface {
	*T
	proto.Message
}](scope func(*tenancy.Policy, PT, string) error) func(*call, []byte) ([]byte, error) {
	return scoped(func(c *call, q PT) ([]byte, error) {
		if err := scope(c.f.tenancy, q, c.tenant); err != nil {
			return nil, c.scopeErr(err)
		}
		return c.forward(q, nil)
	})
}

// scopeErr marks the call refused by memrank.
func (c *call) scopeErr(err error) error {
	c.route = routeRefused
	return err
}

// checkRefs checks that the tenant owns every point a query reads a vector
// from. A point of another tenant is answered as Qdrant answers a missing
// one, so its existence does not leak.
func (c *call) checkRefs(req proto.Message) error {
	p := c.f.tenancy
	for coll, ids := range tenancy.ReferencedIDs(req) {
		resp, err := qdrant.NewPointsClient(c.f.up).Get(c.ctx, &qdrant.GetPoints{
			CollectionName: coll,
			Ids:            ids,
			WithPayload:    qdrant.NewWithPayloadInclude(p.Key),
		}, c.f.callOpts...)
		if err != nil {
			return err
		}
		owned := make(map[string]bool, len(resp.GetResult()))
		for _, pt := range resp.GetResult() {
			if p.Owns(pt.GetPayload(), c.tenant) {
				owned[idKey(pt.GetId())] = true
			}
		}
		for _, id := range ids {
			if !owned[idKey(id)] {
				c.route = routeRefused
				return status.Errorf(codes.NotFound, "Not found: No point with id %s found", idText(id))
			}
		}
	}
	return nil
}

// idKey is a point id in canonical form (UUIDs lower-case hyphenated).
func idKey(id *qdrant.PointId) string {
	switch x := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return "n" + strconv.FormatUint(x.Num, 10)
	case *qdrant.PointId_Uuid:
		if u, err := uuid.Parse(x.Uuid); err == nil {
			return "u" + u.String()
		}
		return "u" + x.Uuid
	}
	return ""
}

func idText(id *qdrant.PointId) string {
	if n, ok := id.GetPointIdOptions().(*qdrant.PointId_Num); ok {
		return strconv.FormatUint(n.Num, 10)
	}
	return id.GetUuid()
}
