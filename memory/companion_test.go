package memory

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
)

// TestEmbedderRecordRoundTrip: a record reads back as written, bands and
// the reembed mark included; bands memrank would not write are ignored.
func TestEmbedderRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		rec, want EmbedderRecord
	}{
		{"plain", EmbedderRecord{Model: "m:4", Dimensions: 4, Collection: "c"}, EmbedderRecord{Model: "m:4", Dimensions: 4, Collection: "c"}},
		{"caller-supplied", EmbedderRecord{Dimensions: 8, Collection: "c"}, EmbedderRecord{Dimensions: 8, Collection: "c"}},
		{"bands", EmbedderRecord{Model: "m:4", Dimensions: 4, Collection: "c", SameThreshold: 0.74, JudgeThreshold: 0.62},
			EmbedderRecord{Model: "m:4", Dimensions: 4, Collection: "c", SameThreshold: 0.74, JudgeThreshold: 0.62}},
		{"moving", EmbedderRecord{Model: "a:4", Dimensions: 4, Collection: "c", MigratingTo: "b:4"},
			EmbedderRecord{Model: "a:4", Dimensions: 4, Collection: "c", MigratingTo: "b:4"}},
		{"judge above same", EmbedderRecord{Model: "m:4", SameThreshold: 0.6, JudgeThreshold: 0.7}, EmbedderRecord{Model: "m:4"}},
		{"same above 1", EmbedderRecord{Model: "m:4", SameThreshold: 1.5, JudgeThreshold: 0.7}, EmbedderRecord{Model: "m:4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseEmbedderRecord(tt.rec.Point().GetPayload())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Bands written by hand as integers still read.
	p := EmbedderRecord{Model: "m:4"}.Point().GetPayload()
	p[companionSame], p[companionJudge] = qdrant.NewValueInt(1), qdrant.NewValueDouble(0.5)
	if got := ParseEmbedderRecord(p); got.SameThreshold != 1 || got.JudgeThreshold != 0.5 {
		t.Errorf("integer band: %+v", got)
	}
}

func TestIsCompanion(t *testing.T) {
	for name, want := range map[string]bool{
		"m_memrank_audit": true, "m_memrank_backfill": true, "m_memrank_reembed": true,
		"m": false, "team_memrank_notes": false, "m_memrank_backfills": false, "_memrank_audit_x": false,
	} {
		if got := IsCompanion(name); got != want {
			t.Errorf("IsCompanion(%q) = %v, want %v", name, got, want)
		}
	}
	if CompanionWhat("m_memrank_audit") != "audit trail" || CompanionWhat("m_memrank_backfill") != "job state" {
		t.Error("CompanionWhat names the wrong kind")
	}
}
