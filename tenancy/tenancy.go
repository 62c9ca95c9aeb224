// Package tenancy scopes Qdrant requests to one tenant (docs/operations.md).
//
// A tenant is the value of one top-level payload key (Policy.Key, e.g.
// "user_id") that every point of a tenant carries. When a policy is on, the
// fronts find each request's tenant in its metadata (a configured header,
// or the caller's API key looked up in a map), and rewrite the request so
// that it can only see and change that tenant's points:
//
//   - reads (query, search, groups, batches, scroll, count, facet, matrix)
//     get the tenant condition added to their filter's must clauses, in
//     every prefetch too;
//   - writes by filter are scoped the same way; writes by ids become a filter
//     "has_id AND tenant", so ids of another tenant's points change nothing;
//   - upserts get the tenant key forced into every point's payload, and an
//     update_filter on the tenant, so an id that already belongs to another
//     tenant is never overwritten;
//   - a caller's filter that names the tenant key anywhere is refused
//     (ErrTenantFilter), as is any write that would change or remove a
//     point's tenant key.
//
// It fails closed: a request without a tenant is refused (ErrNoTenant), a
// request that cannot be scoped is refused (ErrUnsupported), and a request
// carrying protobuf fields this build does not know is refused, because an
// unknown field could change what a request selects.
//
// Collection-level methods (create, update and delete collections, aliases,
// snapshots, field indexes, shard keys) are administration: Classify says
// which methods are which, and Policy.Admin decides who may call them (see
// its comment).
package tenancy

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// The errors a policy returns. Fronts map them with errors.Is:
// ErrUnauthenticated to gRPC Unauthenticated / HTTP 401, ErrNoTenant and
// ErrForbidden to PermissionDenied / HTTP 403, ErrTenantFilter and
// ErrUnsupported to InvalidArgument / HTTP 400. Their texts are meant for
// the caller: they name the field or method at fault and never carry
// internal details (never a key).
var (
	ErrUnauthenticated = errors.New("unauthenticated")
	ErrNoTenant        = errors.New("tenant required")
	ErrForbidden       = errors.New("forbidden")
	ErrTenantFilter    = errors.New("the tenant key cannot be used in a request")
	ErrUnsupported     = errors.New("not supported when tenancy is on")
)

// MaxTenantLen bounds a tenant value (bytes).
const MaxTenantLen = 256

// Policy says where a request's tenant comes from and which payload key
// holds it. The zero value (Key "") is off: everything passes unscoped.
type Policy struct {
	// Key is the top-level payload key holding a point's tenant. Empty: off.
	Key string
	// Header is the request header (gRPC metadata key, case-insensitive)
	// carrying the tenant. Exactly one of Header and APIKeys is set when on.
	Header string
	// APIKeys maps an API key (metadata "api-key", or "authorization:
	// Bearer <key>") to its tenant.
	APIKeys map[string]string
	// IntegerValues says tenant values are stored as integers (match
	// integer) rather than strings (match keyword). A tenant that is not an
	// integer is then refused.
	IntegerValues bool
	// AdminAPIKeys are the API keys allowed to call administration methods
	// (and collection reads) with no tenant. Empty: nobody is an
	// administrator through memrank; manage collections on Qdrant directly.
	AdminAPIKeys []string
	// JWT, when set, takes the tenant from a verified token's claim
	// instead of Header or APIKeys.
	JWT *JWTVerifier
}

// Enabled reports whether the policy scopes requests.
func (p *Policy) Enabled() bool { return p != nil && p.Key != "" }

// Validate reports a policy that cannot work. An off policy is valid.
func (p *Policy) Validate() error {
	if !p.Enabled() {
		return nil
	}
	if !plainKey(p.Key) {
		return fmt.Errorf("tenancy: key %q must be a plain top-level payload key (no '.', '[', ']' or quotes)", p.Key)
	}
	hasHeader, hasKeys, hasJWT := p.Header != "", len(p.APIKeys) > 0, p.JWT != nil
	if n := btoi(hasHeader) + btoi(hasKeys) + btoi(hasJWT); n != 1 {
		return errors.New("tenancy: set exactly one of header, api_keys and jwt")
	}
	if hasHeader && !canCarryTenant(p.Header) {
		return fmt.Errorf("tenancy: header %q cannot carry a tenant", p.Header)
	}
	for k, t := range p.APIKeys {
		if k == "" {
			return errors.New("tenancy: an api key is empty")
		}
		if err := p.checkTenant(t); err != nil {
			return fmt.Errorf("tenancy: api key tenant: %w", err)
		}
	}
	for _, k := range p.AdminAPIKeys {
		if _, ok := p.APIKeys[k]; ok || k == "" {
			return errors.New("tenancy: an admin api key is empty or also a tenant key")
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// plainKey reports whether key can hold the tenant: a top-level payload
// key, which no filter path syntax can reach around.
func plainKey(key string) bool {
	return !strings.ContainsAny(key, ".[]\"") && utf8.ValidString(key)
}

// canCarryTenant reports whether a request header may name the tenant: not
// one gRPC reserves, nor one that carries credentials.
func canCarryTenant(header string) bool {
	h := strings.ToLower(header)
	return !strings.HasPrefix(h, "grpc-") && !strings.HasPrefix(h, ":") && h != "api-key" && h != "authorization" && validHeaderName(h)
}

func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, c := range []byte(h) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func (p *Policy) checkTenant(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("%w: the tenant is empty", ErrNoTenant)
	case len(t) > MaxTenantLen:
		return fmt.Errorf("%w: the tenant is longer than %d bytes", ErrNoTenant, MaxTenantLen)
	case !utf8.ValidString(t):
		return fmt.Errorf("%w: the tenant is not valid UTF-8", ErrNoTenant)
	}
	for _, r := range t {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: the tenant contains control characters", ErrNoTenant)
		}
	}
	if p.IntegerValues {
		if _, err := strconv.ParseInt(t, 10, 64); err != nil {
			return fmt.Errorf("%w: the tenant %q is not an integer", ErrNoTenant, t)
		}
	}
	return nil
}

// apiKeys returns the distinct API keys the caller presented: metadata
// "api-key" values and "authorization: Bearer <key>" tokens.
func apiKeys(md metadata.MD) []string {
	var keys []string
	add := func(k string) {
		for _, have := range keys {
			if have == k {
				return
			}
		}
		keys = append(keys, k)
	}
	for _, k := range md.Get("api-key") {
		add(k)
	}
	for _, a := range md.Get("authorization") {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(a), " ")
		if ok && strings.EqualFold(scheme, "bearer") {
			add(strings.TrimSpace(tok))
		}
	}
	return keys
}

// Tenant returns the request's tenant. With a header policy it is the
// header's single value (the credentials go on to the upstream, which
// checks them); with an API-key policy the tenant every presented key maps
// to. With an API-key policy a request with no key, or with a key that is
// neither a tenant's nor an administrator's, is ErrUnauthenticated: memrank
// knows every key, so it refuses the ones it does not know. A missing,
// empty, ambiguous or malformed tenant (an administrator's key included)
// is ErrNoTenant; keys of two different tenants are ErrForbidden.
func (p *Policy) Tenant(md metadata.MD) (string, error) {
	if !p.Enabled() {
		return "", nil
	}
	if p.Header != "" {
		vals := md.Get(p.Header)
		if len(vals) == 0 {
			return "", ErrNoTenant
		}
		for _, v := range vals[1:] {
			if v != vals[0] {
				return "", fmt.Errorf("%w: the %s header has several values", ErrForbidden, strings.ToLower(p.Header))
			}
		}
		if err := p.checkTenant(vals[0]); err != nil {
			return "", err
		}
		return vals[0], nil
	}
	keys := apiKeys(md)
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: must provide an API key or an Authorization bearer token", ErrUnauthenticated)
	}
	tenant := ""
	for _, k := range keys {
		t, ok := p.APIKeys[k]
		switch {
		case p.isAdminKey(k):
			continue
		case p.JWT != nil:
			var err error
			if t, err = p.JWT.Tenant(k); err != nil {
				return "", err
			}
		case !ok:
			return "", fmt.Errorf("%w: invalid API key", ErrUnauthenticated)
		}
		if tenant != "" && t != tenant {
			return "", fmt.Errorf("%w: the request carries API keys of two tenants", ErrForbidden)
		}
		tenant = t
	}
	if tenant == "" {
		return "", fmt.Errorf("%w: an administrator's API key has no tenant; use a tenant's key", ErrNoTenant)
	}
	return tenant, p.checkTenant(tenant)
}

// Admin checks that a request may call administration methods: it carries
// an administrator's API key (one of AdminAPIKeys), no tenant key and no
// tenant header. Any other request is refused: ErrUnauthenticated when an
// API-key policy does not know a key it carries (or it carries none),
// ErrForbidden otherwise. The key is compared in constant time.
func (p *Policy) Admin(md metadata.MD) error {
	if !p.Enabled() {
		return nil
	}
	keys := apiKeys(md)
	admin, tenantKey := false, false
	for _, k := range keys {
		switch {
		case p.isAdminKey(k):
			admin = true
		case p.Header != "":
			// The credentials are the upstream's to check.
		case p.JWT != nil:
			if _, err := p.JWT.Tenant(k); errors.Is(err, ErrUnauthenticated) {
				return err
			}
			tenantKey = true
		case p.APIKeys[k] == "":
			return fmt.Errorf("%w: invalid API key", ErrUnauthenticated)
		default:
			tenantKey = true
		}
	}
	switch {
	case p.Header == "" && len(keys) == 0:
		return fmt.Errorf("%w: must provide an API key or an Authorization bearer token", ErrUnauthenticated)
	case !admin:
		return fmt.Errorf("%w: this needs an administrator's API key (tenancy.admin_api_keys)", ErrForbidden)
	case p.Header != "" && len(md.Get(p.Header)) > 0:
		return fmt.Errorf("%w: an administrator's request carries no %s header", ErrForbidden, strings.ToLower(p.Header))
	}
	if tenantKey {
		return fmt.Errorf("%w: an administrator's request carries no tenant key", ErrForbidden)
	}
	return nil
}

// Authenticated checks that a request is a tenant's or an administrator's,
// for methods either may call (collection reads, health).
func (p *Policy) Authenticated(md metadata.MD) error {
	if !p.Enabled() {
		return nil
	}
	_, err := p.Tenant(md)
	if err == nil {
		return nil
	}
	if aerr := p.Admin(md); aerr == nil {
		return nil
	}
	return err
}

func (p *Policy) isAdminKey(k string) bool {
	for _, a := range p.AdminAPIKeys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(a)) == 1 {
			return true
		}
	}
	return false
}

// PayloadKey is the payload key that holds the tenant.
func (p *Policy) PayloadKey() string { return p.Key }

// Value is the payload value a tenant is stored as.
func (p *Policy) Value(tenant string) *qdrant.Value {
	if p.IntegerValues {
		n, _ := strconv.ParseInt(tenant, 10, 64)
		return qdrant.NewValueInt(n)
	}
	return qdrant.NewValueString(tenant)
}

// Condition is the condition that selects a tenant's points.
func (p *Policy) Condition(tenant string) *qdrant.Condition {
	if p.IntegerValues {
		n, _ := strconv.ParseInt(tenant, 10, 64)
		return qdrant.NewMatchInt(p.Key, n)
	}
	return qdrant.NewMatchKeyword(p.Key, tenant)
}

// Owns reports whether a payload carries the tenant, with the right type.
func (p *Policy) Owns(payload map[string]*qdrant.Value, tenant string) bool {
	v := payload[p.Key]
	if v == nil {
		return false
	}
	if p.IntegerValues {
		n, err := strconv.ParseInt(tenant, 10, 64)
		iv, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return err == nil && ok && iv.IntegerValue == n
	}
	sv, ok := v.GetKind().(*qdrant.Value_StringValue)
	return ok && sv.StringValue == tenant
}

// ScopeFilter returns the filter "f AND tenant": f's clauses with the
// tenant condition appended to its must list. The clauses of a filter are
// ANDed, so no should, min_should or must_not of f can reach past it, and
// f's field paths (in the upstream's validation errors) stay as the caller
// wrote them. A filter that names the tenant key anywhere is
// ErrTenantFilter. f is not modified.
func (p *Policy) ScopeFilter(f *qdrant.Filter, tenant string) (*qdrant.Filter, error) {
	return p.scopeFilter(f, tenant, "filter")
}

func (p *Policy) scopeFilter(f *qdrant.Filter, tenant, path string) (*qdrant.Filter, error) {
	if err := p.checkTenant(tenant); err != nil {
		return nil, err
	}
	if err := p.checkFilter(f, path, 0); err != nil {
		return nil, err
	}
	if f == nil {
		return &qdrant.Filter{Must: []*qdrant.Condition{p.Condition(tenant)}}, nil
	}
	scoped := proto.CloneOf(f)
	scoped.Must = append(scoped.Must, p.Condition(tenant))
	return scoped, nil
}

// maxFilterDepth bounds the walk over nested filters; protobuf decoding
// already bounds nesting at 10000, this keeps the walk cheap.
const maxFilterDepth = 64

// mentions reports whether a payload key path names the tenant key (the key
// itself or anything under it). The first path segment may be quoted.
func (p *Policy) mentions(key string) bool {
	return firstSegment(strings.TrimSpace(key)) == p.Key
}

// firstSegment is the top-level key of a payload key path: `a.b` -> a,
// `a[].b` -> a, `"a.b".c` -> a.b.
func firstSegment(path string) string {
	if strings.HasPrefix(path, `"`) {
		if end := strings.IndexByte(path[1:], '"'); end >= 0 {
			return path[1 : 1+end]
		}
		return path
	}
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// checkFilter refuses a filter that names the tenant key in any clause at
// any depth, nested filters included (their keys are relative to the array,
// but a key equal to the tenant key is refused there too: it would be
// confusing at best).
func (p *Policy) checkFilter(f *qdrant.Filter, path string, depth int) error {
	if f == nil {
		return nil
	}
	if depth > maxFilterDepth {
		return fmt.Errorf("%w: %s is nested more than %d levels deep", ErrUnsupported, path, maxFilterDepth)
	}
	lists := []struct {
		name  string
		conds []*qdrant.Condition
	}{{"must", f.GetMust()}, {"should", f.GetShould()}, {"must_not", f.GetMustNot()}, {"min_should.conditions", f.GetMinShould().GetConditions()}}
	for _, l := range lists {
		for i, c := range l.conds {
			if err := p.checkCondition(c, fmt.Sprintf("%s.%s[%d]", path, l.name, i), depth); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Policy) checkCondition(c *qdrant.Condition, path string, depth int) error {
	refuse := func(key string) error {
		return fmt.Errorf("%w: %s names the tenant key %q", ErrTenantFilter, path, key)
	}
	switch x := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Field:
		if p.mentions(x.Field.GetKey()) {
			return refuse(x.Field.GetKey())
		}
	case *qdrant.Condition_IsEmpty:
		if p.mentions(x.IsEmpty.GetKey()) {
			return refuse(x.IsEmpty.GetKey())
		}
	case *qdrant.Condition_IsNull:
		if p.mentions(x.IsNull.GetKey()) {
			return refuse(x.IsNull.GetKey())
		}
	case *qdrant.Condition_Nested:
		if p.mentions(x.Nested.GetKey()) {
			return refuse(x.Nested.GetKey())
		}
		return p.checkFilter(x.Nested.GetFilter(), path+".nested.filter", depth+1)
	case *qdrant.Condition_Filter:
		return p.checkFilter(x.Filter, path+".filter", depth+1)
	}
	return nil
}
