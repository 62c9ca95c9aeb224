package dedup_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/tenancy"
)

const bfDims = 8

// seedForeign creates coll (Cosine, bfDims) and writes payloads as another
// tool would, with ids 1..n.
func seedForeign(t testing.TB, c *qdrant.Client, coll string, payloads []map[string]any) {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: coll,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: bfDims, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatalf("create %s: %v", coll, err)
	}
	for start := 0; start < len(payloads); start += 1000 {
		end := min(start+1000, len(payloads))
		pts := make([]*qdrant.PointStruct, 0, end-start)
		for i := start; i < end; i++ {
			v := make([]float32, bfDims)
			for j := range v {
				v[j] = float32((i*7+j*3)%11) + 1
			}
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense(v),
				Payload: qdrant.NewValueMap(payloads[i])})
		}
		wait := true
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: pts}); err != nil {
			t.Fatalf("seed %s: %v", coll, err)
		}
	}
}

// pointPayloads reads every point's payload by id ("42" or the UUID).
func pointPayloads(t testing.TB, c *qdrant.Client, coll string) map[string]map[string]*qdrant.Value {
	t.Helper()
	out := map[string]map[string]*qdrant.Value{}
	var offset *qdrant.PointId
	for {
		limit := uint32(2001)
		pts, err := c.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: coll, Limit: &limit, Offset: offset,
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatalf("scroll %s: %v", coll, err)
		}
		offset = nil
		if len(pts) == int(limit) {
			offset = pts[len(pts)-1].GetId()
			pts = pts[:len(pts)-1]
		}
		for _, p := range pts {
			id := p.GetId().GetUuid()
			if id == "" {
				id = fmt.Sprint(p.GetId().GetNum())
			}
			out[id] = p.GetPayload()
		}
		if offset == nil {
			return out
		}
	}
}

func exists(t testing.TB, c *qdrant.Client, coll string) bool {
	t.Helper()
	ok, err := c.CollectionExists(context.Background(), coll)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func mem0Payload(text, user, created, updated string) map[string]any {
	sum := md5.Sum([]byte(text))
	p := map[string]any{"data": text, "hash": hex.EncodeToString(sum[:]), "user_id": user}
	if created != "" {
		p["created_at"] = created
	}
	if updated != "" {
		p["updated_at"] = updated
	}
	return p
}

func (h *harness) backfill(t testing.TB, b dedup.Backfill) dedup.BackfillReport {
	t.Helper()
	rep, err := h.eng.Backfill(context.Background(), b)
	if err != nil {
		t.Fatalf("backfill %s: %v", b.Collection, err)
	}
	return rep
}

// TestBackfillMem0 maps a mem0 collection: every original key stays as it
// was, the memory fields are those the write path computes for the same
// observation, the embedder is recorded and each memory has one audit
// record.
func TestBackfillMem0(t *testing.T) {
	h := newHarness(t)
	procedural := mem0Payload("Summary of the agent's run", "dana", "2026-04-01T10:00:00-07:00", "")
	procedural["memory_type"] = "procedural_memory"
	assistant := mem0Payload("Dana might move to Porto", "dana", "2026-04-02T10:00:00.5-07:00", "")
	assistant["role"] = "assistant"
	seedForeign(t, h.client, "m0", []map[string]any{
		mem0Payload("Dana uses Neovim", "dana", "2026-04-01T10:00:00.123456-07:00", "2026-04-20T09:00:00-07:00"),
		assistant,
		procedural,
		mem0Payload("Dana has two cats", "dana", "", ""),
	})
	before := pointPayloads(t, h.client, "m0")
	rep := h.backfill(t, dedup.Backfill{Collection: "m0", Mapping: foreign.Mem0(), EmbedderModel: "text-embedding-3-small",
		ExtractorModel: "gpt-4o-mini", LeaveUnscored: true})

	want := dedup.BackfillReport{Collection: "m0", Mapping: "mem0", Embedder: "text-embedding-3-small:8", Total: 4, Points: 4,
		Backfilled: 2, Unscored: 2, Problems: map[string]int{"invalid_memory_type": 1, "no_time": 1}}
	got := rep
	got.Assumptions, got.Tiers, got.Buckets, got.Gated, got.Decayed, got.Archived = nil, nil, nil, 0, 0, 0
	got.CreatedAudit, got.CreatedRecord, got.CreatedIndexes = false, false, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if !rep.CreatedAudit || !rep.CreatedRecord || !slices.Contains(rep.CreatedIndexes, "text_hash") {
		t.Errorf("created audit %t, record %t, indexes %v; want all, text_hash among them", rep.CreatedAudit, rep.CreatedRecord, rep.CreatedIndexes)
	}

	after := pointPayloads(t, h.client, "m0")
	for id, orig := range before {
		for k, v := range orig {
			if diff := cmp.Diff(v, after[id][k], protocmp.Transform()); diff != "" {
				t.Errorf("point %s key %s changed (-orig +now):\n%s", id, k, diff)
			}
		}
	}
	for _, id := range []string{"3", "4"} {
		if diff := cmp.Diff(before[id], after[id], protocmp.Transform()); diff != "" {
			t.Errorf("unscored point %s changed:\n%s", id, diff)
		}
	}

	// The same observation through the write path gives the same memory.
	created := time.Date(2026, 4, 1, 17, 0, 0, 123456000, time.UTC)
	out := h.observe(t, dedup.Observation{Collection: "ref", Text: "Dana uses Neovim", Source: "direct",
		ExtractorModel: "gpt-4o-mini", ObservedAt: created})
	ref := h.get(t, "ref", out.MemoryID)
	m := h.get(t, "m0", "1")
	if m.Confidence != ref.Confidence || m.Source != "direct" || m.MemoryType != "fact" || m.ExtractorModel != "gpt-4o-mini" {
		t.Errorf("backfilled %+v\nwant the write path's %+v", m, ref)
	}
	if m.TextHash != memory.TextHash("Dana uses Neovim") || m.Observations != 0 || !m.Retrievable || m.Schema != 1 {
		t.Errorf("text_hash %q, n %d, retrievable %t, schema %d", m.TextHash, m.Observations, m.Retrievable, m.Schema)
	}
	if !m.CreatedAt.Equal(created) || !m.LastObservedAt.Equal(time.Date(2026, 4, 20, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("created %s, last observed %s", m.CreatedAt, m.LastObservedAt)
	}
	if got := after["1"]["text"].GetStringValue(); got != "Dana uses Neovim" {
		t.Errorf("text = %q", got)
	}
	if a := h.get(t, "m0", "2"); a.Source != "weak_inference" {
		t.Errorf("assistant's memory: source %q, want weak_inference", a.Source)
	}

	rec := embedderRecord(t, h.client, "m0")
	if rec.Model != "text-embedding-3-small:8" || rec.Dimensions != bfDims {
		t.Errorf("embedder record %+v", rec)
	}
	audit := h.audit(t, "m0", "1")
	if len(audit) != 1 || audit[0].Reason != "backfill" || audit[0].New != m.Confidence || audit[0].Decision != dedup.DecisionBackfilled {
		t.Errorf("audit %+v", audit)
	}
}

// TestBackfillLangChain maps LangChain's page_content / metadata payloads.
func TestBackfillLangChain(t *testing.T) {
	h := newHarness(t)
	seedForeign(t, h.client, "lc", []map[string]any{
		{"page_content": "The deploy runs on Fridays", "metadata": map[string]any{"source": "notes.md", "created_at": "2026-04-10", "user_id": "u1"}},
		{"page_content": "Kubernetes 1.30 is the target", "metadata": map[string]any{"source": "wiki/k8s.md"}},
	})
	before := pointPayloads(t, h.client, "lc")
	assumed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := h.backfill(t, dedup.Backfill{Collection: "lc", Mapping: foreign.LangChain(), EmbedderModel: "all-MiniLM-L6-v2:8",
		AssumeTime: assumed})
	if rep.Backfilled != 2 || rep.Problems["time_assumed"] != 1 || rep.Problems["unknown_extractor"] != 2 {
		t.Errorf("report %+v", rep)
	}
	after := pointPayloads(t, h.client, "lc")
	for id := range before {
		if diff := cmp.Diff(before[id]["metadata"], after[id]["metadata"], protocmp.Transform()); diff != "" {
			t.Errorf("metadata of %s changed:\n%s", id, diff)
		}
	}
	m1, m2 := h.get(t, "lc", "1"), h.get(t, "lc", "2")
	if m1.Source != "weak_inference" || !m1.CreatedAt.Equal(time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC)) || m1.Text != "The deploy runs on Fridays" {
		t.Errorf("first: %+v", m1)
	}
	if !m2.CreatedAt.Equal(assumed) {
		t.Errorf("second created_at %s, want the assumed %s", m2.CreatedAt, assumed)
	}
}

// TestBackfillMappingFile reads any payload through a mapping file.
func TestBackfillMappingFile(t *testing.T) {
	h := newHarness(t)
	mp, err := foreign.Parse([]byte(`
name: notes-app
text: body
created_at: [meta.written, ts]
scope: owner
memory_type: kind
defaults:
  source: strong_inference
  memory_type: preference
  extractor_model: claude-sonnet-4
`))
	if err != nil {
		t.Fatal(err)
	}
	seedForeign(t, h.client, "notes", []map[string]any{
		{"body": "Prefers tea", "ts": 1775000000, "owner": "ann"},
		{"body": "Met Bob in Lisbon", "meta": map[string]any{"written": "2026-04-02T08:00:00Z"}, "kind": "event", "owner": "ann"},
	})
	rep := h.backfill(t, dedup.Backfill{Collection: "notes", Mapping: mp, EmbedderModel: "m"})
	if rep.Backfilled != 2 || rep.Mapping != "notes-app" {
		t.Fatalf("report %+v", rep)
	}
	p := scoring.DefaultParams()
	m1, m2 := h.get(t, "notes", "1"), h.get(t, "notes", "2")
	wantConf := p.Grounded(scoring.Components{Source: p.SourceLevels["strong_inference"], Extractor: p.Extractor("claude-sonnet-4", 0, false),
		Type: p.TypePriors["preference"]}, scoring.GroundingSupported)
	if m1.MemoryType != "preference" || m1.Source != "strong_inference" || !near(m1.Confidence, wantConf) ||
		!m1.CreatedAt.Equal(time.Unix(1775000000, 0)) {
		t.Errorf("first %+v (want confidence %v)", m1, wantConf)
	}
	if m2.MemoryType != "event" || !m2.CreatedAt.Equal(time.Date(2026, 4, 2, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("second %+v", m2)
	}
}

// tierSet is a collection whose memories land in known tiers at t0: three
// observed a day before, two two years before.
func tierSet() []map[string]any {
	var out []map[string]any
	for i, text := range []string{"Fresh one", "Fresh two", "Fresh three", "Old one", "Old two"} {
		at := t0.Add(-24 * time.Hour)
		if i >= 3 {
			at = t0.AddDate(-2, 0, 0)
		}
		out = append(out, mem0Payload(text, "u", at.Format(time.RFC3339), ""))
	}
	return out
}

// TestBackfillDryRun changes nothing and reports what a run then does.
func TestBackfillDryRun(t *testing.T) {
	h := newHarness(t)
	seedForeign(t, h.client, "d", append(tierSet(), map[string]any{"hash": "x"}))
	before := pointPayloads(t, h.client, "d")
	b := dedup.Backfill{Collection: "d", Mapping: foreign.Mem0(), EmbedderModel: "e", ExtractorModel: "gpt-4o-mini", DryRun: true}
	dry := h.backfill(t, b)
	if diff := cmp.Diff(before, pointPayloads(t, h.client, "d"), protocmp.Transform()); diff != "" {
		t.Errorf("a dry run changed points:\n%s", diff)
	}
	for _, c := range []string{"d_memrank_audit", "d_memrank_backfill"} {
		if exists(t, h.client, c) {
			t.Errorf("a dry run created %s", c)
		}
	}
	p := scoring.DefaultParams()
	conf := p.Grounded(scoring.Components{Source: p.SourceLevels["direct"], Extractor: p.Extractor("gpt-4o-mini", 0, false),
		Type: p.TypePriors["fact"]}, scoring.GroundingSupported)
	want := map[string]int{p.BucketOf(conf).String(): 5}
	if dry.Backfilled != 5 || dry.Unscored != 1 || dry.Problems["no_text"] != 1 || !cmp.Equal(dry.Buckets, want) ||
		!cmp.Equal(dry.Tiers, map[string]int{"active": 3, "archived": 2}) || dry.Archived != 2 || dry.Decayed != 2 {
		t.Errorf("dry run report %+v", dry)
	}
	b.DryRun, b.LeaveUnscored = false, true
	run := h.backfill(t, b)
	if run.Backfilled != dry.Backfilled || !cmp.Equal(run.Tiers, dry.Tiers) || !cmp.Equal(run.Buckets, dry.Buckets) {
		t.Errorf("run %+v\ndiffers from the dry run %+v", run, dry)
	}
	if m := h.get(t, "d", "4"); m.Tier != scoring.TierArchived {
		t.Errorf("old memory stored as %s, want archived", m.Tier)
	}
}

// TestBackfillRefuses names what is missing and writes nothing.
func TestBackfillRefuses(t *testing.T) {
	tests := []struct {
		name string
		b    dedup.Backfill
		want string
	}{
		{"no embedder", dedup.Backfill{}, "say which model made its vectors"},
		{"another dimension", dedup.Backfill{EmbedderModel: "text-embedding-3-small:1536"}, "makes 1536 dimensions"},
		{"no time", dedup.Backfill{EmbedderModel: "e"}, "has no time"},
		{"no mapping", dedup.Backfill{EmbedderModel: "e", Mapping: &foreign.Mapping{}}, "no key names the text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			seedForeign(t, h.client, "r", []map[string]any{mem0Payload("Has a time", "u", "2026-04-01", ""), mem0Payload("Has none", "u", "", "")})
			before := pointPayloads(t, h.client, "r")
			tc.b.Collection = "r"
			if tc.b.Mapping == nil {
				tc.b.Mapping = foreign.Mem0()
			}
			_, err := h.eng.Backfill(context.Background(), tc.b)
			if !errors.Is(err, dedup.ErrBackfill) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBackfill saying %q", err, tc.want)
			}
			if diff := cmp.Diff(before, pointPayloads(t, h.client, "r"), protocmp.Transform()); diff != "" {
				t.Errorf("points changed:\n%s", diff)
			}
		})
	}
}

// TestBackfillRerunResumeRollback: a second run changes nothing, an
// interrupted run resumes with every point done once, and a rollback
// brings every payload back exactly.
func TestBackfillRerunResumeRollback(t *testing.T) {
	h := newHarness(t)
	var set []map[string]any
	for i := range 50 {
		p := mem0Payload(fmt.Sprintf("Fact number %d", i), fmt.Sprintf("u%d", i%3), "2026-04-01T10:00:00Z", "")
		p["score"], p["tags"], p["nothing"] = float64(i)+0.5, []any{"a", int64(i)}, nil
		set = append(set, p)
	}
	seedForeign(t, h.client, "r", set)
	before := pointPayloads(t, h.client, "r")
	ctx, cancel := context.WithCancel(context.Background())
	b := dedup.Backfill{Collection: "r", Mapping: foreign.Mem0(), EmbedderModel: "e", BatchSize: 7,
		Progress: func(done int) {
			if done >= 21 {
				cancel()
			}
		}}
	if _, err := h.eng.Backfill(ctx, b); err == nil || ctx.Err() == nil {
		t.Fatalf("interrupted run: %v", err)
	}
	b.Progress = nil
	rep := h.backfill(t, b)
	if !rep.Resumed || rep.Points != 50 || rep.Backfilled != 50 || rep.Already != 0 {
		t.Errorf("resumed run %+v", rep)
	}
	auditN := h.count(t, "r_memrank_audit")
	if auditN != 51 { // one per point and the embedder record
		t.Errorf("%d audit points, want 51", auditN)
	}
	done := pointPayloads(t, h.client, "r")
	again := h.backfill(t, b)
	if again.Resumed || again.Already != 50 || again.Backfilled != 0 {
		t.Errorf("second run %+v", again)
	}
	if diff := cmp.Diff(done, pointPayloads(t, h.client, "r"), protocmp.Transform()); diff != "" {
		t.Errorf("a second run changed points:\n%s", diff)
	}
	if n := h.count(t, "r_memrank_audit"); n != auditN {
		t.Errorf("audit grew from %d to %d", auditN, n)
	}

	rb, err := h.eng.RollbackBackfill(context.Background(), dedup.BackfillRollback{Collection: "r", BatchSize: 9})
	if err != nil {
		t.Fatal(err)
	}
	if rb.Restored != 50 || !rb.RemovedAudit || !rb.RemovedRecord || len(rb.RemovedIndexes) == 0 {
		t.Errorf("rollback %+v", rb)
	}
	if diff := cmp.Diff(before, pointPayloads(t, h.client, "r"), protocmp.Transform()); diff != "" {
		t.Errorf("after rollback (-orig +now):\n%s", diff)
	}
	for _, c := range []string{"r_memrank_audit", "r_memrank_backfill"} {
		if exists(t, h.client, c) {
			t.Errorf("%s still exists after the rollback", c)
		}
	}
}

// TestBackfillMergeDuplicates merges equal texts of one user, across pages
// and within one, and never across users.
func TestBackfillMergeDuplicates(t *testing.T) {
	h := newHarness(t)
	seedForeign(t, h.client, "dup", []map[string]any{
		mem0Payload("Dana uses Neovim", "dana", "2026-04-01T10:00:00Z", ""),
		mem0Payload("Something else", "dana", "2026-04-01T10:00:00Z", ""),
		mem0Payload("dana uses neovim.", "dana", "2026-03-01T10:00:00Z", ""),
		mem0Payload("Dana uses Neovim!", "dana", "2026-04-03T10:00:00Z", ""),
		mem0Payload("Dana uses Neovim", "bob", "2026-04-01T10:00:00Z", ""),
	})
	// Tier 2: point 1's vector with another wording merges; with a negation
	// it does not.
	v1 := pointVector(t, h.client, "dup", 1)
	wait := true
	if _, err := h.client.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "dup", Wait: &wait, Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(6), Vectors: qdrant.NewVectorsDense(v1),
			Payload: qdrant.NewValueMap(mem0Payload("Dana's main editor is Neovim", "dana", "2026-04-05T10:00:00Z", ""))},
		{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectorsDense(v1),
			Payload: qdrant.NewValueMap(mem0Payload("Dana does not use Neovim", "dana", "2026-04-06T10:00:00Z", ""))},
	}}); err != nil {
		t.Fatal(err)
	}
	before := pointPayloads(t, h.client, "dup")
	rep := h.backfill(t, dedup.Backfill{Collection: "dup", Mapping: foreign.Mem0(), EmbedderModel: "e", MergeDuplicates: true, BatchSize: 3})
	if rep.Merged != 3 || rep.Backfilled != 7 {
		t.Errorf("report %+v", rep)
	}
	win := h.get(t, "dup", "1")
	// created_at is mem0's own key: it keeps the survivor's value although
	// a duplicate is older; last_observed_at is memrank's and moves.
	if win.SupersededBy != "" || win.Observations != 0 || !win.CreatedAt.Equal(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)) ||
		!win.LastObservedAt.Equal(time.Date(2026, 4, 5, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("survivor %+v", win)
	}
	for _, id := range []string{"3", "4", "6"} {
		if m := h.get(t, "dup", id); m.SupersededBy != "1" || m.Retrievable {
			t.Errorf("duplicate %s: superseded_by %q, retrievable %t", id, m.SupersededBy, m.Retrievable)
		}
	}
	if m := h.get(t, "dup", "5"); m.SupersededBy != "" {
		t.Errorf("another user's memory was merged into %s", m.SupersededBy)
	}
	if m := h.get(t, "dup", "7"); m.SupersededBy != "" {
		t.Errorf("a negated claim was merged into %s", m.SupersededBy)
	}
	var reasons []string
	for _, r := range h.audit(t, "dup", "1") {
		reasons = append(reasons, r.Reason)
	}
	if !cmp.Equal(reasons, []string{"backfill", "merge", "merge", "merge"}) {
		t.Errorf("survivor's audit %v", reasons)
	}
	if _, err := h.eng.RollbackBackfill(context.Background(), dedup.BackfillRollback{Collection: "dup"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, pointPayloads(t, h.client, "dup"), protocmp.Transform()); diff != "" {
		t.Errorf("after rollback (-orig +now):\n%s", diff)
	}
}

func pointVector(t testing.TB, c *qdrant.Client, coll string, id uint64) []float32 {
	t.Helper()
	pts, err := c.Get(context.Background(), &qdrant.GetPoints{CollectionName: coll, Ids: []*qdrant.PointId{qdrant.NewIDNum(id)},
		WithVectors: qdrant.NewWithVectors(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("get %d: %v", id, err)
	}
	return pts[0].GetVectors().GetVector().GetDense().GetData()
}

// TestBackfillTenancy: with tenancy on, each memory's tenant is its
// payload's tenancy key; a point without one is left unscored; the audit
// is read in the tenant, and a rollback removes it.
func TestBackfillTenancy(t *testing.T) {
	h := newHarness(t, func(c *dedup.Config, _ *harness) {
		c.Tenancy = &tenancy.Policy{Key: "user_id", Header: "x-tenant"}
	})
	seedForeign(t, h.client, "tn", []map[string]any{
		mem0Payload("Dana uses Neovim", "dana", "2026-04-01T10:00:00Z", ""),
		mem0Payload("Dana uses Neovim", "bob", "2026-04-01T10:00:00Z", ""),
		{"data": "Nobody's fact", "created_at": "2026-04-01T10:00:00Z"},
	})
	before := pointPayloads(t, h.client, "tn")
	rep := h.backfill(t, dedup.Backfill{Collection: "tn", Mapping: foreign.Mem0(), EmbedderModel: "e", MergeDuplicates: true, LeaveUnscored: true})
	if rep.Backfilled != 2 || rep.Merged != 0 || rep.Unscored != 1 || rep.Problems["no_tenant"] != 1 {
		t.Errorf("report %+v", rep)
	}
	v, err := h.eng.Memory(context.Background(), "tn", "dana", "1")
	if err != nil || len(v.Audit) != 1 || v.Audit[0].Reason != "backfill" {
		t.Fatalf("dana's memory: %+v, %v", v, err)
	}
	if _, err := h.eng.Memory(context.Background(), "tn", "dana", "2"); !errors.Is(err, dedup.ErrNotFound) {
		t.Errorf("bob's memory read as dana's: %v", err)
	}
	rb, err := h.eng.RollbackBackfill(context.Background(), dedup.BackfillRollback{Collection: "tn"})
	if err != nil || !rb.RemovedAudit {
		t.Fatalf("rollback %+v, %v", rb, err)
	}
	if diff := cmp.Diff(before, pointPayloads(t, h.client, "tn"), protocmp.Transform()); diff != "" {
		t.Errorf("after rollback:\n%s", diff)
	}
}
