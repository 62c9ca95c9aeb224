package dedup

import (
	"strings"
	"testing"
)

// A tier transition's record (consolidation's, a reviewer's archive) shows
// its tiers; the write path's records do not carry the keys.
func TestAuditJSONTiers(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  AuditRecord
		want string
		not  string
	}{
		{"transition", AuditRecord{Reason: "tier", OldTier: "active", NewTier: "archived"}, `,"old_tier":"active","new_tier":"archived"}`, ""},
		{"write path", AuditRecord{Reason: "insert"}, `}`, `old_tier`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.rec.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(b), tc.want) || tc.not != "" && strings.Contains(string(b), tc.not) {
				t.Errorf("%s", b)
			}
		})
	}
}
