package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

func idString(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	return fmt.Sprint(id.GetNum())
}

// TestDemoSetDecodes: every line decodes with memrank's codec, and the only
// decoding problems are the two intended ones (unscored, foreign points have
// none by design). It also checks that the set has what the demo promises.
func TestDemoSetDecodes(t *testing.T) {
	points, err := Points()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(points); n < 180 || n > 220 {
		t.Errorf("%d memories, want about 200", n)
	}
	params := scoring.DefaultParams()
	codec, err := memory.NewCodec(memory.DefaultKeys(), params)
	if err != nil {
		t.Fatal(err)
	}
	intended := map[string]bool{}
	for _, id := range ProblemIDs() {
		intended[fmt.Sprint(id)] = true
	}
	ids := map[string]bool{}
	types, sources, models, categories, replicas := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	hashes := map[string]int{}
	var logprobs, unscored, bigIDs, withProblems int
	var minAge, maxAge = math.Inf(1), 0.0
	var superseded []string
	anchor := Anchor()
	for _, p := range points {
		id := idString(p.ID)
		if ids[id] {
			t.Errorf("id %s twice", id)
		}
		ids[id] = true
		if p.ID.GetNum() > 1<<53 {
			bigIDs++
		}
		m := codec.DecodeQdrant(p.Payload)
		if m.Text == "" {
			t.Errorf("%s: no text", id)
		}
		if len(m.Problems) > 0 {
			withProblems++
			if !intended[id] {
				t.Errorf("%s (%q): unintended problems %v", id, m.Text, m.Problems)
			}
		} else if intended[id] {
			t.Errorf("%s: meant to show a problem, has none", id)
		}
		hashes[m.Hash()]++
		if m.Unscored() {
			unscored++
			continue
		}
		types[m.MemoryType]++
		sources[m.Source]++
		models[m.ExtractorModel]++
		categories[m.DecayCategory]++
		if m.HasLogprob {
			logprobs++
		}
		for _, a := range m.AccessCounts {
			replicas[a.Replica]++
		}
		age := scoring.AgeDays(m.CreatedAt, anchor)
		minAge, maxAge = min(minAge, age), max(maxAge, age)
		if m.SupersededBy != "" {
			superseded = append(superseded, m.SupersededBy)
		}
		if !m.LastObserved().After(m.CreatedAt) && m.Observations > 0 {
			t.Errorf("%s: %d observations but last observed at creation", id, m.Observations)
		}
		if len(m.SessionIDs) != m.Observations+1 {
			t.Errorf("%s: %d sessions for %d re-observations", id, len(m.SessionIDs), m.Observations)
		}
	}
	if withProblems != len(ProblemIDs()) {
		t.Errorf("%d records with problems, want %d", withProblems, len(ProblemIDs()))
	}
	for _, sup := range superseded {
		if !ids[sup] {
			t.Errorf("superseded_by %s names no demo point", sup)
		}
	}
	dupGroups := 0
	for _, n := range hashes {
		if n > 1 {
			dupGroups++
		}
	}
	checks := []struct {
		what     string
		got, min int
	}{
		{"memory types", len(types), 5},
		{"source levels", len(sources), 5},
		{"extractor models", len(models), 4},
		{"decay categories", len(categories), 7},
		{"replicas in access counts", len(replicas), 3},
		{"memories with a log-prob", logprobs, 3},
		{"unscored foreign points", unscored, 5},
		{"superseded memories", len(superseded), 3},
		{"groups of same-text duplicates", dupGroups, 8},
		{"ids above 2^53", bigIDs, 1},
	}
	for _, c := range checks {
		if c.got < c.min {
			t.Errorf("%s: %d, want at least %d", c.what, c.got, c.min)
		}
	}
	if minAge > 7 || maxAge < 500 {
		t.Errorf("ages from %.0f to %.0f days, want days to 18 months", minAge, maxAge)
	}
}

// TestStoredConfidences: the stored confidences are what memrank's formula
// gives for the stored fields (the write path stores it that way), so the
// demo's explanations add up.
func TestStoredConfidences(t *testing.T) {
	points, err := Points()
	if err != nil {
		t.Fatal(err)
	}
	params := scoring.DefaultParams()
	codec, err := memory.NewCodec(memory.DefaultKeys(), params)
	if err != nil {
		t.Fatal(err)
	}
	below := 0
	for _, p := range points {
		m := codec.DecodeQdrant(p.Payload)
		if !m.HasConfidence {
			continue
		}
		want := params.Grounded(scoring.Components{
			Source: m.Levels.Source, Observations: m.Observations, Extractor: m.Levels.Extractor, Type: m.Levels.Type,
		}, m.Grounding)
		if math.Abs(m.Confidence-want) > 0.0006 {
			t.Errorf("%s (%q): stored confidence %.3f, the formula gives %.4f", idString(p.ID), m.Text, m.Confidence, want)
		}
		if m.Confidence < params.RetrievalGate {
			below++
		}
	}
	if below < 10 {
		t.Errorf("%d memories below the gate, want at least 10", below)
	}
}

func TestParsePointsErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"bad JSON", `{"id": 1, "payload": {`, "line 1"},
		{"negative id", `{"id": -1, "payload": {}}`, "id"},
		{"fractional id", "\n{\"id\": 1.5, \"payload\": {}}", "line 2: id"},
		{"id beyond u64", `{"id": 18446744073709551616, "payload": {}}`, "id"},
		{"payload not an object", `{"id": 1, "payload": []}`, "payload"},
		{"unknown key", `{"id": 1, "payload": {}, "vector": [1]}`, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePoints(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	pts, err := ParsePoints(strings.NewReader(`{"id": 18446744073709551615, "payload": {"x": 3.0, "y": 3}}` + "\n\n" + `{"id": "553f9722-8ebe-5636-9720-a487cf263fc6", "payload": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].ID.GetNum() != math.MaxUint64 || pts[1].ID.GetUuid() == "" {
		t.Fatalf("points %v", pts)
	}
	if _, ok := pts[0].Payload["x"].GetKind().(*qdrant.Value_DoubleValue); !ok {
		t.Errorf("3.0 is not a float: %v", pts[0].Payload["x"])
	}
	if _, ok := pts[0].Payload["y"].GetKind().(*qdrant.Value_IntegerValue); !ok {
		t.Errorf("3 is not an integer: %v", pts[0].Payload["y"])
	}
}

func TestShift(t *testing.T) {
	pts, err := ParsePoints(strings.NewReader(`{"id": 1, "payload": {"created_at": "2026-01-01T00:00:00Z", "last_observed_at": "2026-02-01T00:00:00Z", "last_accessed_at": "junk", "other_at": "2026-01-01T00:00:00Z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	Shift(pts, 48*time.Hour)
	p := pts[0].Payload
	for k, want := range map[string]string{
		"created_at": "2026-01-03T00:00:00Z", "last_observed_at": "2026-02-03T00:00:00Z",
		"last_accessed_at": "junk", "other_at": "2026-01-01T00:00:00Z",
	} {
		if got := p[k].GetStringValue(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// fakeStore records what Load writes: points of the demo collection, and
// the audit companion's records apart.
type fakeStore struct {
	exists    map[string]bool
	created   *qdrant.CreateCollection // the demo collection
	companion []*qdrant.CreateCollection
	points    []*qdrant.PointStruct
	records   []*qdrant.PointStruct // written into the audit companion
	err       error
}

func (f *fakeStore) CollectionExists(_ context.Context, name string) (bool, error) {
	return f.exists[name], nil
}

func (f *fakeStore) CreateCollection(_ context.Context, req *qdrant.CreateCollection) error {
	if memory.IsAuditCollection(req.GetCollectionName()) {
		f.companion = append(f.companion, req)
	} else {
		f.created = req
	}
	return nil
}

func (f *fakeStore) Upsert(_ context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error) {
	if f.err != nil {
		return nil, f.err
	}
	if !req.GetWait() {
		return nil, errors.New("Load must wait for its writes")
	}
	if memory.IsAuditCollection(req.GetCollectionName()) {
		f.records = append(f.records, req.GetPoints()...)
	} else {
		f.points = append(f.points, req.GetPoints()...)
	}
	return &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}, nil
}

func TestLoad(t *testing.T) {
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	now := Anchor().Add(100 * 24 * time.Hour)
	st := &fakeStore{}
	res, err := Load(context.Background(), st, LoadOptions{Embedder: emb, Now: now, BatchSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := Points()
	if res.Points != len(all) || len(st.points) != len(all) || res.Collection != Collection || res.Existed {
		t.Fatalf("result %+v, %d points upserted", res, len(st.points))
	}
	params := st.created.GetVectorsConfig().GetParams()
	if st.created.GetCollectionName() != Collection || params.GetSize() != 64 || params.GetDistance() != qdrant.Distance_Cosine {
		t.Errorf("collection %v", st.created)
	}
	for i, p := range st.points {
		v := p.GetVectors().GetVector().GetDense().GetData()
		want := emb.EmbedOne(all[i].Payload["text"].GetStringValue(), nil)
		if !slices.Equal(v, want) {
			t.Fatalf("point %d: vector is not its text's", i)
		}
	}
	// The embedder is recorded in the audit companion, as the write path
	// records it, so the read path picks the guard calibrated for it.
	if len(st.companion) != 1 || st.companion[0].GetCollectionName() != Collection+memory.AuditSuffix || len(st.records) != 1 {
		t.Fatalf("companion %v, records %v: want one companion with one embedder record", st.companion, st.records)
	}
	if rec := memory.ParseEmbedderRecord(st.records[0].GetPayload()); rec != (memory.EmbedderRecord{Model: emb.Model(), Dimensions: 64, Collection: Collection}) {
		t.Errorf("embedder record %+v", rec)
	}
	// Ages are kept: created_at moved by 100 days.
	orig, _ := time.Parse(time.RFC3339, all[0].Payload["created_at"].GetStringValue())
	got, _ := time.Parse(time.RFC3339, st.points[0].GetPayload()["created_at"].GetStringValue())
	if got.Sub(orig) != 100*24*time.Hour {
		t.Errorf("created_at moved by %v", got.Sub(orig))
	}

	// An existing collection is kept; a missing embedder record is added.
	st2 := &fakeStore{exists: map[string]bool{"mine": true}}
	res, err = Load(context.Background(), st2, LoadOptions{Embedder: emb, Collection: "mine"})
	if err != nil || !res.Existed || res.Points != 0 || st2.created != nil || len(st2.records) != 1 {
		t.Errorf("existing collection: %+v, %v, records %v", res, err, st2.records)
	}
	st3 := &fakeStore{exists: map[string]bool{"mine": true, "mine" + memory.AuditSuffix: true}}
	if _, err := Load(context.Background(), st3, LoadOptions{Embedder: emb, Collection: "mine"}); err != nil || len(st3.records) != 0 || len(st3.companion) != 0 {
		t.Errorf("existing companion rewritten: %v, %v", st3.records, err)
	}
	if _, err := Load(context.Background(), &fakeStore{}, LoadOptions{}); err == nil {
		t.Error("Load without an embedder")
	}
	if _, err := Load(context.Background(), &fakeStore{err: errors.New("disk full")}, LoadOptions{Embedder: emb}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("upsert failure: %v", err)
	}
}

// TestLoadAudit: with an Audit hook, each batch is handed to it before it
// is upserted, with the payloads as upserted, and what it wrote is
// counted; a failing hook stops the load before the batch is written; an
// existing collection is not audited again.
func TestLoadAudit(t *testing.T) {
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := Points()
	tests := []struct {
		name        string
		exists      bool
		fail        error
		wantBatches int
		wantPoints  int
		wantAudited int
	}{
		{name: "every batch, before its upsert", wantBatches: (len(all) + 49) / 50, wantPoints: len(all), wantAudited: len(all)},
		{name: "a failing hook stops the load", fail: errors.New("audit store down"), wantBatches: 1},
		{name: "an existing collection is left alone", exists: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeStore{exists: map[string]bool{Collection: tc.exists}}
			var batches int
			audit := func(_ context.Context, coll string, pts []*qdrant.PointStruct) (int, error) {
				batches++
				if coll != Collection {
					t.Errorf("audited collection %q", coll)
				}
				if len(st.points) != (batches-1)*50 {
					t.Errorf("batch %d audited after %d points were upserted", batches, len(st.points))
				}
				for i, p := range pts {
					want := all[(batches-1)*50+i]
					if idString(p.GetId()) != idString(want.ID) || p.GetPayload()["text"].GetStringValue() != want.Payload["text"].GetStringValue() {
						t.Errorf("batch %d point %d: %v, want %v", batches, i, p.GetId(), want.ID)
					}
				}
				return len(pts), tc.fail
			}
			res, err := Load(context.Background(), st, LoadOptions{Embedder: emb, BatchSize: 50, Audit: audit})
			if tc.fail != nil {
				if !errors.Is(err, tc.fail) {
					t.Errorf("error %v, want %v", err, tc.fail)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if batches != tc.wantBatches || len(st.points) != tc.wantPoints || res.Audited != tc.wantAudited {
				t.Errorf("%d batches audited, %d points upserted, result %+v; want %d, %d, audited %d",
					batches, len(st.points), res, tc.wantBatches, tc.wantPoints, tc.wantAudited)
			}
		})
	}
}
