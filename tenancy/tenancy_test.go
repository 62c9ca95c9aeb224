package tenancy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

func headerPolicy() *Policy { return &Policy{Key: "user_id", Header: "X-Tenant"} }

func keyPolicy() *Policy {
	return &Policy{Key: "user_id", APIKeys: map[string]string{"ka": "alice", "kb": "bob"}}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		p    *Policy
		want string // "" = valid
	}{
		{"nil is off", nil, ""},
		{"off", &Policy{}, ""},
		{"header", headerPolicy(), ""},
		{"api keys", keyPolicy(), ""},
		{"neither", &Policy{Key: "user_id"}, "exactly one"},
		{"both", &Policy{Key: "user_id", Header: "x-t", APIKeys: map[string]string{"k": "a"}}, "exactly one"},
		{"nested key", &Policy{Key: "meta.user", Header: "x-t"}, "top-level"},
		{"array key", &Policy{Key: "users[]", Header: "x-t"}, "top-level"},
		{"reserved header", &Policy{Key: "u", Header: "grpc-timeout"}, "cannot carry"},
		{"api-key header", &Policy{Key: "u", Header: "Api-Key"}, "cannot carry"},
		{"bad header name", &Policy{Key: "u", Header: "x tenant"}, "cannot carry"},
		{"empty api key", &Policy{Key: "u", APIKeys: map[string]string{"": "a"}}, "empty"},
		{"empty tenant", &Policy{Key: "u", APIKeys: map[string]string{"k": ""}}, "empty"},
		{"integer tenant not integer", &Policy{Key: "u", IntegerValues: true, APIKeys: map[string]string{"k": "x"}}, "not an integer"},
		{"admin key is a tenant key", &Policy{Key: "u", APIKeys: map[string]string{"k": "a"}, AdminAPIKeys: []string{"k"}}, "admin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestTenant(t *testing.T) {
	intPolicy := &Policy{Key: "user_id", Header: "x-tenant", IntegerValues: true}
	tests := []struct {
		name    string
		p       *Policy
		md      metadata.MD
		want    string
		wantErr error
	}{
		{"header", headerPolicy(), metadata.Pairs("x-tenant", "alice"), "alice", nil},
		{"header missing", headerPolicy(), metadata.Pairs("api-key", "ka"), "", ErrNoTenant},
		{"header empty", headerPolicy(), metadata.Pairs("x-tenant", ""), "", ErrNoTenant},
		{"header repeated, same value", headerPolicy(), metadata.Pairs("x-tenant", "a", "x-tenant", "a"), "a", nil},
		{"header repeated, two tenants", headerPolicy(), metadata.Pairs("x-tenant", "a", "x-tenant", "b"), "", ErrForbidden},
		{"header too long", headerPolicy(), metadata.Pairs("x-tenant", strings.Repeat("a", MaxTenantLen+1)), "", ErrNoTenant},
		{"header control character", headerPolicy(), metadata.Pairs("x-tenant", "a\x01"), "", ErrNoTenant},
		{"header invalid UTF-8", headerPolicy(), metadata.Pairs("x-tenant", "a\xff"), "", ErrNoTenant},
		{"integer tenant", intPolicy, metadata.Pairs("x-tenant", "42"), "42", nil},
		{"integer tenant not an integer", intPolicy, metadata.Pairs("x-tenant", "4x"), "", ErrNoTenant},
		{"api-key", keyPolicy(), metadata.Pairs("api-key", "ka"), "alice", nil},
		{"bearer", keyPolicy(), metadata.Pairs("authorization", "Bearer kb"), "bob", nil},
		{"bearer lower case", keyPolicy(), metadata.Pairs("authorization", "bearer kb"), "bob", nil},
		{"basic is no key", keyPolicy(), metadata.Pairs("authorization", "Basic kb"), "", ErrUnauthenticated},
		{"unknown key", keyPolicy(), metadata.Pairs("api-key", "nope"), "", ErrUnauthenticated},
		{"no key", keyPolicy(), metadata.MD{}, "", ErrUnauthenticated},
		{"unknown key beside a tenant key", keyPolicy(), metadata.Pairs("api-key", "nope", "authorization", "Bearer ka"), "", ErrUnauthenticated},
		{"admin key", &Policy{Key: "user_id", APIKeys: map[string]string{"ka": "alice"}, AdminAPIKeys: []string{"root"}}, metadata.Pairs("api-key", "root"), "", ErrNoTenant},
		{"keys of two tenants", keyPolicy(), metadata.Pairs("api-key", "ka", "authorization", "Bearer kb"), "", ErrForbidden},
		{"header ignored by a key policy", keyPolicy(), metadata.Pairs("x-tenant", "bob", "api-key", "ka"), "alice", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.Tenant(tt.md)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Tenant() error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("Tenant() = %q, want %q", got, tt.want)
			}
		})
	}
	if got, err := (*Policy)(nil).Tenant(nil); got != "" || err != nil {
		t.Fatalf("off policy: Tenant() = %q, %v", got, err)
	}
}

// TestAdmin: with tenancy on, administrators are the configured keys and
// nobody else: an unknown key is unauthenticated (401), a tenant's key or
// header forbidden (403), and with no admin keys configured there is no
// administrator.
func TestAdmin(t *testing.T) {
	keysAdmins := keyPolicy()
	keysAdmins.AdminAPIKeys = []string{"root"}
	headerAdmins := headerPolicy()
	headerAdmins.AdminAPIKeys = []string{"root"}
	tests := []struct {
		name string
		p    *Policy
		md   metadata.MD
		want error // nil: an administrator
	}{
		{"off", nil, metadata.MD{}, nil},
		{"key policy, admin key", keysAdmins, metadata.Pairs("api-key", "root"), nil},
		{"key policy, admin bearer", keysAdmins, metadata.Pairs("authorization", "Bearer root"), nil},
		{"key policy, unknown key", keysAdmins, metadata.Pairs("api-key", "not-a-real-key"), ErrUnauthenticated},
		{"key policy, no key", keysAdmins, metadata.MD{}, ErrUnauthenticated},
		{"key policy, tenant key", keysAdmins, metadata.Pairs("api-key", "ka"), ErrForbidden},
		{"key policy, admin key beside a tenant's", keysAdmins, metadata.Pairs("api-key", "root", "authorization", "Bearer ka"), ErrForbidden},
		{"key policy, admin key beside an unknown one", keysAdmins, metadata.Pairs("api-key", "root", "authorization", "Bearer zz"), ErrUnauthenticated},
		{"key policy, no admin keys configured", keyPolicy(), metadata.Pairs("api-key", "root"), ErrUnauthenticated},
		{"header policy, admin key", headerAdmins, metadata.Pairs("api-key", "root"), nil},
		{"header policy, admin key with a tenant header", headerAdmins, metadata.Pairs("api-key", "root", "x-tenant", "a"), ErrForbidden},
		{"header policy, other key", headerAdmins, metadata.Pairs("api-key", "other"), ErrForbidden},
		{"header policy, no key", headerAdmins, metadata.MD{}, ErrForbidden},
		{"header policy, no admin keys configured", headerPolicy(), metadata.Pairs("api-key", "any"), ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Admin(tt.md)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Admin() = %v, want %v", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "root") {
				t.Errorf("the error shows a key: %v", err)
			}
		})
	}
}

// TestAuthenticated: collection reads are for tenants and administrators.
func TestAuthenticated(t *testing.T) {
	p := keyPolicy()
	p.AdminAPIKeys = []string{"root"}
	for _, tt := range []struct {
		name string
		md   metadata.MD
		want error
	}{
		{"tenant", metadata.Pairs("api-key", "ka"), nil},
		{"admin", metadata.Pairs("api-key", "root"), nil},
		{"unknown", metadata.Pairs("api-key", "zz"), ErrUnauthenticated},
		{"none", metadata.MD{}, ErrUnauthenticated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := p.Authenticated(tt.md); tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Authenticated() = %v, want %v", err, tt.want)
			}
		})
	}
}

func must(conds ...*qdrant.Condition) *qdrant.Filter { return &qdrant.Filter{Must: conds} }

// hostileFilters name the tenant key somewhere; every one is refused.
func hostileFilters() map[string]*qdrant.Filter {
	return map[string]*qdrant.Filter{
		"must":                 must(qdrant.NewMatchKeyword("user_id", "bob")),
		"should":               {Should: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "bob"), qdrant.NewMatchKeyword("user_id", "alice")}},
		"must_not":             {MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "alice")}},
		"min_should":           {MinShould: &qdrant.MinShould{MinCount: 1, Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "bob")}}},
		"except":               must(qdrant.NewMatchExcept("user_id", "alice")),
		"is_empty":             {Should: []*qdrant.Condition{qdrant.NewIsEmpty("user_id")}},
		"is_null":              {Should: []*qdrant.Condition{qdrant.NewIsNull("user_id")}},
		"nested key":           must(qdrant.NewNestedFilter("user_id", must(qdrant.NewMatchKeyword("x", "y")))),
		"inside nested":        must(qdrant.NewNestedFilter("items", must(qdrant.NewMatchKeyword("user_id", "bob")))),
		"sub-filter":           must(qdrant.NewFilterAsCondition(&qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "bob")}})),
		"deep":                 must(qdrant.NewFilterAsCondition(must(qdrant.NewFilterAsCondition(&qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "x")}})))),
		"sub path":             must(qdrant.NewMatchKeyword("user_id.name", "bob")),
		"array path":           must(qdrant.NewMatchKeyword("user_id[]", "bob")),
		"quoted":               must(qdrant.NewMatchKeyword(`"user_id"`, "bob")),
		"spaces":               must(qdrant.NewMatchKeyword(" user_id ", "bob")),
		"range":                must(qdrant.NewRange("user_id", &qdrant.Range{Gte: qdrant.PtrOf(0.0)})),
		"values_count":         must(qdrant.NewValuesCount("user_id", &qdrant.ValuesCount{Gte: qdrant.PtrOf(uint64(0))})),
		"field is_empty flag":  must(&qdrant.Condition{ConditionOneOf: &qdrant.Condition_Field{Field: &qdrant.FieldCondition{Key: "user_id", IsEmpty: qdrant.PtrOf(true)}}}),
		"should beside others": {Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "note")}, Should: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "bob")}},
	}
}

func TestScopeFilterRefusesTheTenantKey(t *testing.T) {
	p := headerPolicy()
	for name, f := range hostileFilters() {
		t.Run(name, func(t *testing.T) {
			before := proto.Clone(f)
			_, err := p.ScopeFilter(f, "alice")
			if !errors.Is(err, ErrTenantFilter) {
				t.Fatalf("ScopeFilter() error = %v, want ErrTenantFilter", err)
			}
			if diff := cmp.Diff(before, f, protocmp.Transform()); diff != "" {
				t.Fatalf("ScopeFilter changed the caller's filter (-before +after):\n%s", diff)
			}
		})
	}
}

func TestScopeFilter(t *testing.T) {
	p := headerPolicy()
	caller := &qdrant.Filter{
		Should:  []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "note"), qdrant.NewMatchKeyword("meta.user_id", "x")},
		MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("user_idx", "y")},
	}
	tests := []struct {
		name string
		in   *qdrant.Filter
		want *qdrant.Filter
	}{
		{"no filter", nil, must(qdrant.NewMatchKeyword("user_id", "alice"))},
		{"caller filter kept, tenant added to must", caller, &qdrant.Filter{Should: caller.Should, MustNot: caller.MustNot, Must: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "alice")}}},
		{"after the caller's must", must(qdrant.NewMatchKeyword("kind", "a")), must(qdrant.NewMatchKeyword("kind", "a"), qdrant.NewMatchKeyword("user_id", "alice"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.ScopeFilter(tt.in, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Fatalf("ScopeFilter (-want +got):\n%s", diff)
			}
		})
	}
	ip := &Policy{Key: "org", Header: "x-org", IntegerValues: true}
	got, err := ip.ScopeFilter(nil, "42")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(must(qdrant.NewMatchInt("org", 42)), got, protocmp.Transform()); diff != "" {
		t.Fatalf("integer tenant (-want +got):\n%s", diff)
	}
	if _, err := p.ScopeFilter(nil, ""); !errors.Is(err, ErrNoTenant) {
		t.Fatalf("empty tenant: %v, want ErrNoTenant", err)
	}
}

func TestCheckRequestRefusesUnknownFields(t *testing.T) {
	p := headerPolicy()
	q := &qdrant.QueryPoints{CollectionName: "c", Filter: must(qdrant.NewMatchKeyword("kind", "note"))}
	b, err := proto.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	// A field number no Qdrant version defines, inside the filter.
	inner, _ := proto.Marshal(q.Filter)
	inner = protowire.AppendTag(inner, 999, protowire.VarintType)
	inner = protowire.AppendVarint(inner, 1)
	b = protowire.AppendTag(b, 5, protowire.BytesType) // filter: the last one wins, merged
	b = protowire.AppendBytes(b, inner)
	var got qdrant.QueryPoints
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	err = p.ScopeQuery(&got, "alice")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("ScopeQuery with an unknown field = %v, want ErrUnsupported naming the filter", err)
	}
}

func TestScopeQuery(t *testing.T) {
	p := headerPolicy()
	q := &qdrant.QueryPoints{
		CollectionName: "mem",
		Query:          qdrant.NewQueryDense([]float32{1, 0}),
		Filter:         must(qdrant.NewMatchKeyword("kind", "note")),
		Prefetch: []*qdrant.PrefetchQuery{{
			Query:    qdrant.NewQueryDense([]float32{0, 1}),
			Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense([]float32{1, 1})}},
		}},
	}
	if err := p.ScopeQuery(q, "alice"); err != nil {
		t.Fatal(err)
	}
	tenant := qdrant.NewMatchKeyword("user_id", "alice")
	for name, f := range map[string]*qdrant.Filter{"filter": q.Filter, "prefetch": q.Prefetch[0].Filter, "inner prefetch": q.Prefetch[0].Prefetch[0].Filter} {
		if n := len(f.GetMust()); n == 0 || !proto.Equal(f.GetMust()[n-1], tenant) {
			t.Errorf("%s = %v, want the tenant condition last in must", name, f)
		}
	}

	hostile := &qdrant.QueryPoints{CollectionName: "mem", Prefetch: []*qdrant.PrefetchQuery{{Filter: must(qdrant.NewMatchKeyword("user_id", "bob"))}}}
	if err := p.ScopeQuery(hostile, "alice"); !errors.Is(err, ErrTenantFilter) || !strings.Contains(err.Error(), "prefetch[0].filter") {
		t.Fatalf("prefetch filter on the tenant key: %v", err)
	}
	formula := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryFormula(&qdrant.Formula{
		Expression: qdrant.NewExpressionCondition(qdrant.NewMatchKeyword("user_id", "bob")),
	})}
	if err := p.ScopeQuery(formula, "alice"); !errors.Is(err, ErrTenantFilter) {
		t.Fatalf("formula condition on the tenant key: %v", err)
	}
	groups := &qdrant.QueryPointGroups{CollectionName: "mem", GroupBy: "g", WithLookup: &qdrant.WithLookup{Collection: "other"}}
	if err := p.ScopeQueryGroups(groups, "alice"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("with_lookup: %v, want ErrUnsupported", err)
	}
}

func TestReferencedIDs(t *testing.T) {
	q := &qdrant.QueryPoints{
		CollectionName: "mem",
		Query:          qdrant.NewQueryID(qdrant.NewIDNum(7)),
		Prefetch: []*qdrant.PrefetchQuery{
			{
				Query:      qdrant.NewQueryRecommend(&qdrant.RecommendInput{Positive: []*qdrant.VectorInput{qdrant.NewVectorInputID(qdrant.NewIDNum(8))}, Negative: []*qdrant.VectorInput{qdrant.NewVectorInput(1, 2)}}),
				LookupFrom: &qdrant.LookupLocation{CollectionName: "other"},
			},
			{Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryNearest(qdrant.NewVectorInputID(qdrant.NewID("5d5c1a4e-1111-4d4d-8888-000000000001")))}}},
		},
	}
	got := ReferencedIDs(q)
	want := map[string][]*qdrant.PointId{
		"mem":   {qdrant.NewIDNum(7), qdrant.NewID("5d5c1a4e-1111-4d4d-8888-000000000001")},
		"other": {qdrant.NewIDNum(8)},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Fatalf("ReferencedIDs (-want +got):\n%s", diff)
	}
	if got := ReferencedIDs(&qdrant.QueryPoints{Query: qdrant.NewQueryDense([]float32{1})}); len(got) != 0 {
		t.Fatalf("a query by vector references %v", got)
	}
}

func TestScopeUpsert(t *testing.T) {
	p := headerPolicy()
	q := &qdrant.UpsertPoints{CollectionName: "mem", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Payload: qdrant.NewValueMap(map[string]any{"text": "a"})},
		{Id: qdrant.NewIDNum(2)},
		{Id: qdrant.NewIDNum(3), Payload: qdrant.NewValueMap(map[string]any{"user_id": "alice"})},
	}}
	if err := p.ScopeUpsert(q, "alice"); err != nil {
		t.Fatal(err)
	}
	for i, pt := range q.Points {
		if !p.Owns(pt.Payload, "alice") {
			t.Errorf("points[%d] payload %v does not carry the tenant", i, pt.Payload)
		}
	}
	if diff := cmp.Diff(must(qdrant.NewMatchKeyword("user_id", "alice")), q.UpdateFilter, protocmp.Transform()); diff != "" {
		t.Fatalf("update_filter (-want +got):\n%s", diff)
	}
	for name, payload := range map[string]map[string]*qdrant.Value{
		"another tenant":    qdrant.NewValueMap(map[string]any{"user_id": "bob"}),
		"wrong type":        qdrant.NewValueMap(map[string]any{"user_id": 1}),
		"null":              {"user_id": qdrant.NewValueNull()},
		"list with tenant":  qdrant.NewValueMap(map[string]any{"user_id": []any{"alice", "bob"}}),
		"struct for tenant": qdrant.NewValueMap(map[string]any{"user_id": map[string]any{"alice": true}}),
	} {
		q := &qdrant.UpsertPoints{CollectionName: "mem", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Payload: payload}}}
		if err := p.ScopeUpsert(q, "alice"); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s: ScopeUpsert() = %v, want ErrForbidden", name, err)
		}
	}
}

func TestScopeWrites(t *testing.T) {
	p := headerPolicy()
	scopedIDs := qdrant.NewPointsSelectorFilter(must(qdrant.NewHasID(qdrant.NewIDNum(1), qdrant.NewIDNum(2)), qdrant.NewMatchKeyword("user_id", "alice")))
	ids := func() *qdrant.PointsSelector { return qdrant.NewPointsSelector(qdrant.NewIDNum(1), qdrant.NewIDNum(2)) }

	del := &qdrant.DeletePoints{CollectionName: "mem", Points: ids()}
	if err := p.ScopeDelete(del, "alice"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scopedIDs, del.Points, protocmp.Transform()); diff != "" {
		t.Fatalf("delete by ids (-want +got):\n%s", diff)
	}
	if err := p.ScopeDelete(&qdrant.DeletePoints{CollectionName: "mem"}, "alice"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("delete without a selector: %v, want ErrUnsupported", err)
	}
	byFilter := &qdrant.DeletePoints{CollectionName: "mem", Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "alice")}})}
	if err := p.ScopeDelete(byFilter, "alice"); !errors.Is(err, ErrTenantFilter) {
		t.Fatalf("delete by a filter on the tenant key: %v", err)
	}

	tests := []struct {
		name    string
		scope   func() error
		wantErr error
	}{
		{"set payload", func() error {
			return p.ScopeSetPayload(&qdrant.SetPayloadPoints{PointsSelector: ids(), Payload: qdrant.NewValueMap(map[string]any{"x": 1})}, "alice")
		}, nil},
		{"set payload to the same tenant", func() error {
			return p.ScopeSetPayload(&qdrant.SetPayloadPoints{PointsSelector: ids(), Payload: qdrant.NewValueMap(map[string]any{"user_id": "alice"})}, "alice")
		}, nil},
		{"set payload moves to another tenant", func() error {
			return p.ScopeSetPayload(&qdrant.SetPayloadPoints{PointsSelector: ids(), Payload: qdrant.NewValueMap(map[string]any{"user_id": "bob"})}, "alice")
		}, ErrForbidden},
		{"set payload under the tenant key", func() error {
			return p.ScopeSetPayload(&qdrant.SetPayloadPoints{PointsSelector: ids(), Key: qdrant.PtrOf("user_id.x"), Payload: qdrant.NewValueMap(map[string]any{"y": 1})}, "alice")
		}, ErrForbidden},
		{"overwrite to another tenant", func() error {
			return p.ScopeOverwritePayload(&qdrant.SetPayloadPoints{PointsSelector: ids(), Payload: qdrant.NewValueMap(map[string]any{"user_id": "bob"})}, "alice")
		}, ErrForbidden},
		{"delete the tenant key", func() error {
			return p.ScopeDeletePayload(&qdrant.DeletePayloadPoints{PointsSelector: ids(), Keys: []string{"x", "user_id"}}, "alice")
		}, ErrForbidden},
		{"delete other keys", func() error {
			return p.ScopeDeletePayload(&qdrant.DeletePayloadPoints{PointsSelector: ids(), Keys: []string{"x"}}, "alice")
		}, nil},
		{"update vectors", func() error {
			return p.ScopeUpdateVectors(&qdrant.UpdatePointVectors{UpdateFilter: must(qdrant.NewMatchKeyword("user_id", "bob"))}, "alice")
		}, ErrTenantFilter},
		{"delete vectors without selector", func() error {
			return p.ScopeDeleteVectors(&qdrant.DeletePointVectors{}, "alice")
		}, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope()
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
		})
	}

	ow := &qdrant.SetPayloadPoints{PointsSelector: ids(), Payload: qdrant.NewValueMap(map[string]any{"x": 1})}
	if err := p.ScopeOverwritePayload(ow, "alice"); err != nil {
		t.Fatal(err)
	}
	if !p.Owns(ow.Payload, "alice") || ow.Payload["x"] == nil {
		t.Fatalf("overwrite payload = %v, want x and the tenant", ow.Payload)
	}
	clr, err := p.ClearAsOverwrite(&qdrant.ClearPayloadPoints{CollectionName: "mem", Points: ids(), Wait: qdrant.PtrOf(true)}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Payload: map[string]*qdrant.Value{"user_id": qdrant.NewValueString("alice")}, PointsSelector: scopedIDs}
	if diff := cmp.Diff(want, clr, protocmp.Transform()); diff != "" {
		t.Fatalf("ClearAsOverwrite (-want +got):\n%s", diff)
	}
}

func TestScopeGet(t *testing.T) {
	p := headerPolicy()
	points := func() []*qdrant.RetrievedPoint {
		return []*qdrant.RetrievedPoint{
			{Id: qdrant.NewIDNum(1), Payload: qdrant.NewValueMap(map[string]any{"user_id": "alice", "text": "a"})},
			{Id: qdrant.NewIDNum(2), Payload: qdrant.NewValueMap(map[string]any{"user_id": "bob", "text": "b"})},
			{Id: qdrant.NewIDNum(3), Payload: qdrant.NewValueMap(map[string]any{"text": "none"})},
		}
	}
	tests := []struct {
		name        string
		sel         *qdrant.WithPayloadSelector
		wantSel     *qdrant.WithPayloadSelector
		wantPayload map[string]*qdrant.Value
	}{
		{"no selector", nil, qdrant.NewWithPayloadInclude("user_id"), nil},
		{"payload off", qdrant.NewWithPayload(false), qdrant.NewWithPayloadInclude("user_id"), nil},
		{"payload on", qdrant.NewWithPayload(true), qdrant.NewWithPayload(true), qdrant.NewValueMap(map[string]any{"user_id": "alice", "text": "a"})},
		{"include without key", qdrant.NewWithPayloadInclude("text"), qdrant.NewWithPayloadInclude("text", "user_id"), qdrant.NewValueMap(map[string]any{"text": "a"})},
		{"include with key", qdrant.NewWithPayloadInclude("user_id"), qdrant.NewWithPayloadInclude("user_id"), qdrant.NewValueMap(map[string]any{"user_id": "alice", "text": "a"})},
		{"exclude key", qdrant.NewWithPayloadExclude("user_id"), qdrant.NewWithPayload(true), qdrant.NewValueMap(map[string]any{"text": "a"})},
		{"exclude key and more", qdrant.NewWithPayloadExclude("user_id", "z"), qdrant.NewWithPayloadExclude("z"), qdrant.NewValueMap(map[string]any{"text": "a"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &qdrant.GetPoints{CollectionName: "mem", Ids: []*qdrant.PointId{qdrant.NewIDNum(1), qdrant.NewIDNum(2), qdrant.NewIDNum(3)}, WithPayload: tt.sel}
			g, err := p.ScopeGet(q, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantSel, q.WithPayload, protocmp.Transform()); diff != "" {
				t.Fatalf("selector (-want +got):\n%s", diff)
			}
			got := g.Filter(points())
			if len(got) != 1 || got[0].GetId().GetNum() != 1 {
				t.Fatalf("Filter kept %v, want point 1 only", got)
			}
			// points() stands for the upstream's answer to the widened
			// selector; what is checked is what Filter strips.
			if diff := cmp.Diff(tt.wantPayload, got[0].Payload, protocmp.Transform()); diff != "" {
				t.Fatalf("payload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := map[string]Class{
		"/qdrant.Points/Query":                    Scoped,
		"/qdrant.Points/Get":                      Scoped,
		"/qdrant.Points/Upsert":                   Scoped,
		"/qdrant.Points/ClearPayload":             Scoped,
		"/qdrant.Points/UpdateBatch":              Refused,
		"/qdrant.Points/Recommend":                Refused,
		"/qdrant.Points/SomethingNew":             Refused,
		"/qdrant.Points/CreateFieldIndex":         Admin,
		"/qdrant.Collections/Create":              Admin,
		"/qdrant.Collections/Delete":              Admin,
		"/qdrant.Collections/UpdateAliases":       Admin,
		"/qdrant.Collections/Get":                 Open,
		"/qdrant.Collections/CollectionExists":    Open,
		"/qdrant.Snapshots/Create":                Admin,
		"/qdrant.Qdrant/HealthCheck":              Open,
		"/grpc.health.v1.Health/Check":            Open,
		"/grpc.reflection.v1.ServerReflection/Se": Open,
		"/other.Service/Method":                   Admin,
		"garbage":                                 Refused,
	}
	for m, want := range tests {
		if got := Classify(m); got != want {
			t.Errorf("Classify(%q) = %v, want %v", m, got, want)
		}
	}
}

// TestConfigValidate: the section as a user writes it refuses everything
// Policy.Validate would refuse at start-up, so `memrank config validate`
// and serve agree, and names the key.
func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string // "" = valid
	}{
		{"off", DefaultConfig(), ""},
		{"header", Config{Key: "user_id", Header: "X-Tenant"}, ""},
		{"api keys", Config{Key: "user_id", APIKeys: map[string]string{"k": "alice"}}, ""},
		{"nested key", Config{Key: "meta.user", Header: "x-t"}, `key: "meta.user" is not a plain top-level payload key`},
		{"reserved header", Config{Key: "u", Header: "grpc-timeout"}, `header: "grpc-timeout" cannot carry a tenant`},
		{"api-key header", Config{Key: "u", Header: "Api-Key"}, `header: "Api-Key" cannot carry a tenant`},
		{"bad header name", Config{Key: "u", Header: "x tenant"}, `header: "x tenant" is not a valid HTTP header name`},
		{"tenant with a control character", Config{Key: "u", APIKeys: map[string]string{"k": "a\x01"}}, "api_keys.***1: the tenant contains control characters"},
		{"half set", Config{Key: "u"}, "none of header, api_keys and jwt.claim says where"},
		{"two sources", Config{Key: "u", Header: "X-Tenant", JWT: JWTConfig{Claim: "sub", HMACSecret: strings.Repeat("s", 32)}}, "set exactly one of header, api_keys and jwt.claim"},
		{"jwt without keys", Config{Key: "u", JWT: JWTConfig{Claim: "sub"}}, "jwt.hmac_secret: set exactly one of it and jwt.public_keys_file"},
		{"jwt short secret", Config{Key: "u", JWT: JWTConfig{Claim: "sub", HMACSecret: "short"}}, "jwt.hmac_secret: is shorter than 32 bytes"},
		{"jwt", Config{Key: "u", JWT: JWTConfig{Claim: "sub", HMACSecret: strings.Repeat("s", 32)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if err := mustPolicy(t, tt.c).Validate(); err != nil {
					t.Fatalf("the section is valid, its Policy is not: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
			// A short HMAC secret is the section's rule alone: the policy
			// works with it, it is just weak.
			if p, err := tt.c.Policy(); err == nil && p.Validate() == nil && !strings.Contains(tt.want, "shorter than 32 bytes") {
				t.Errorf("the section is refused, its Policy is not")
			}
		})
	}
}

func mustPolicy(t *testing.T, c Config) *Policy {
	t.Helper()
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
