package grpcfront

import (
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/upstream"
)

func TestCompanionTarget(t *testing.T) {
	enc := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name, method string
		req          []byte
		want         bool
	}{
		{"upsert", "/qdrant.Points/Upsert", enc(&qdrant.UpsertPoints{CollectionName: "m_memrank_audit", Wait: qdrant.PtrOf(true)}), true},
		{"upsert elsewhere", "/qdrant.Points/Upsert", enc(&qdrant.UpsertPoints{CollectionName: "m"}), false},
		// A job companion's originals are what a rollback restores.
		{"upsert into a backfill's originals", "/qdrant.Points/Upsert", enc(&qdrant.UpsertPoints{CollectionName: "m_memrank_backfill"}), true},
		{"drop a reembed's checkpoint", "/qdrant.Collections/Delete", enc(&qdrant.DeleteCollection{CollectionName: "m_memrank_reembed"}), true},
		{"a name merely containing memrank", "/qdrant.Points/Upsert", enc(&qdrant.UpsertPoints{CollectionName: "team_memrank_notes"}), false},
		{"delete", "/qdrant.Points/Delete", enc(&qdrant.DeletePoints{CollectionName: "m_memrank_audit", Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{})}), true},
		{"drop", "/qdrant.Collections/Delete", enc(&qdrant.DeleteCollection{CollectionName: "m_memrank_audit"}), true},
		{"alias", "/qdrant.Collections/UpdateAliases", enc(&qdrant.ChangeAliases{Actions: []*qdrant.AliasOperations{
			qdrant.NewAliasCreate("x", "m_memrank_audit")}}), true},
		{"alias elsewhere", "/qdrant.Collections/UpdateAliases", enc(&qdrant.ChangeAliases{Actions: []*qdrant.AliasOperations{
			qdrant.NewAliasCreate("x", "m")}}), false},
		// Protobuf keeps the last value of a repeated scalar field; so does
		// the check.
		{"name given twice", "/qdrant.Points/Upsert", append(enc(&qdrant.UpsertPoints{CollectionName: "m"}), enc(&qdrant.UpsertPoints{CollectionName: "m_memrank_audit"})...), true},
		{"garbage", "/qdrant.Points/Upsert", []byte{0xff, 0xff, 0xff}, false},
		{"alias taking a companion's name", "/qdrant.Collections/UpdateAliases", enc(&qdrant.ChangeAliases{Actions: []*qdrant.AliasOperations{
			qdrant.NewAliasCreate("m_memrank_audit", "decoy")}}), true},
		{"alias renamed onto a companion", "/qdrant.Collections/UpdateAliases", enc(&qdrant.ChangeAliases{Actions: []*qdrant.AliasOperations{
			qdrant.NewAliasRename("a", "m_memrank_audit")}}), true},
		{"alias change that does not decode", "/qdrant.Collections/UpdateAliases", []byte{0x0a, 0x05, 0xff}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := companionTarget(tt.method, tt.req); got != tt.want {
				t.Errorf("companionTarget = %v, want %v", got, tt.want)
			}
		})
	}
	for m, want := range map[string]bool{
		"/qdrant.Points/Upsert": true, "/qdrant.Points/UpdateBatch": true, "/qdrant.Points/NewWrite": true,
		"/qdrant.Collections/Create": true, "/qdrant.Points/Query": false, "/qdrant.Points/Scroll": false,
		"/qdrant.Snapshots/Create": false, "/qdrant.Qdrant/HealthCheck": false, "/grpc.health.v1.Health/Watch": false,
	} {
		if got := upstream.Writes(m); got != want {
			t.Errorf("Writes(%s) = %v, want %v", m, got, want)
		}
	}
}

// FuzzStringField1: the collection name read from raw bytes is what
// protobuf decodes, for any input that decodes.
func FuzzStringField1(f *testing.F) {
	for _, name := range []string{"m", "m_memrank_audit", ""} {
		b, _ := proto.Marshal(&qdrant.DeletePoints{CollectionName: name, Wait: qdrant.PtrOf(true)})
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := stringField1(b)
		var m qdrant.DeleteCollection
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		if got != m.GetCollectionName() {
			t.Fatalf("stringField1 = %q, protobuf %q", got, m.GetCollectionName())
		}
	})
}
