package tenancy

import (
	"errors"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"
)

// FuzzScopeQuery feeds arbitrary request bytes to the scoping of a Query:
// it must never panic, and whenever it accepts a request, every filter the
// request carries (the top one and each prefetch's) must end its must
// clauses with the tenant condition.
func FuzzScopeQuery(f *testing.F) {
	seeds := []*qdrant.QueryPoints{
		{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 0}), Limit: qdrant.PtrOf(uint64(3))},
		{CollectionName: "mem", Filter: &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "a")}}},
		{CollectionName: "mem", Prefetch: []*qdrant.PrefetchQuery{{Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "x")}}}}},
		{CollectionName: "mem", Query: qdrant.NewQueryID(qdrant.NewIDNum(3)), LookupFrom: &qdrant.LookupLocation{CollectionName: "o"}},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	p := headerPolicy()
	tenant := p.Condition("alice")
	f.Fuzz(func(t *testing.T, b []byte) {
		var q qdrant.QueryPoints
		if proto.Unmarshal(b, &q) != nil {
			return
		}
		_ = ReferencedIDs(&q)
		err := p.ScopeQuery(&q, "alice")
		if err != nil {
			if !errors.Is(err, ErrTenantFilter) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("ScopeQuery error %v is none of the policy's errors", err)
			}
			return
		}
		check := func(f *qdrant.Filter, where string) {
			if f == nil || len(f.GetMust()) == 0 || !proto.Equal(f.GetMust()[len(f.GetMust())-1], tenant) {
				t.Fatalf("%s is not scoped: %v", where, f)
			}
		}
		check(q.GetFilter(), "filter")
		var walkPrefetch func(pfs []*qdrant.PrefetchQuery)
		walkPrefetch = func(pfs []*qdrant.PrefetchQuery) {
			for _, pf := range pfs {
				check(pf.GetFilter(), "prefetch filter")
				walkPrefetch(pf.GetPrefetch())
			}
		}
		walkPrefetch(q.GetPrefetch())
		if _, err := proto.Marshal(&q); err != nil {
			t.Fatalf("the scoped query does not encode: %v", err)
		}
	})
}
