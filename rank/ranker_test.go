package rank_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/rank"
)

// mdSource records the outgoing metadata and deadline each call carried.
type mdSource struct {
	fakeSource
	seen []string // "method api-key authorization has-deadline"
}

func (s *mdSource) note(ctx context.Context, method string) {
	md, _ := metadata.FromOutgoingContext(ctx)
	_, dl := ctx.Deadline()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, method+" "+first(md.Get("api-key"))+" "+first(md.Get("authorization"))+" "+map[bool]string{true: "deadline", false: "none"}[dl])
}

func first(v []string) string {
	if len(v) == 0 {
		return "-"
	}
	return v[0]
}

func (s *mdSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	s.note(ctx, "Query")
	return s.fakeSource.Query(ctx, req)
}

func (s *mdSource) GetCollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error) {
	s.note(ctx, "GetCollectionInfo")
	return s.fakeSource.GetCollectionInfo(ctx, name)
}

func (s *mdSource) CollectionExists(ctx context.Context, name string) (bool, error) {
	s.note(ctx, "CollectionExists")
	return s.fakeSource.CollectionExists(ctx, name)
}

func (s *mdSource) Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error) {
	s.note(ctx, "Scroll")
	return s.fakeSource.Scroll(ctx, req)
}

// TestCallerContextReachesTheSource: the caller's credentials and deadline
// travel to every upstream call, re-ranked or passed through, including
// the look-ups that recognise the collection (cached after the first
// query); rank adds none of its own.
func TestCallerContextReachesTheSource(t *testing.T) {
	tests := []struct {
		name string
		info *qdrant.CollectionInfo
		want []string
	}{
		{name: "re-ranked", info: cosineInfo(), want: []string{"CollectionExists k1 Bearer-x deadline", "Scroll k1 Bearer-x deadline", "GetCollectionInfo k1 Bearer-x deadline", "Query k1 Bearer-x deadline"}},
		{name: "passed through", info: infoWith(qdrant.Distance_Euclid), want: []string{"CollectionExists k1 Bearer-x deadline", "Scroll k1 Bearer-x deadline", "GetCollectionInfo k1 Bearer-x deadline", "Query k1 Bearer-x deadline"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &mdSource{fakeSource: fakeSource{info: tc.info, points: []*qdrant.ScoredPoint{scored(1, 0.9, memoryPayload("m", 0.9, 1, nil), nil)}}}
			r := newRanker(t, src, nil)
			ctx := metadata.AppendToOutgoingContext(context.Background(), "api-key", "k1", "authorization", "Bearer-x")
			ctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			if _, err := r.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}); err != nil {
				t.Fatal(err)
			}
			// Without credentials, none are added.
			if _, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}); err != nil {
				t.Fatal(err)
			}
			want := append(tc.want, "Query - - none")
			if diff := cmp.Diff(want, src.seen); diff != "" {
				t.Errorf("upstream calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCollectionInfoCache: a collection's distance is read once, then
// again after the TTL, so a collection re-created with another distance
// is served by its new rule.
func TestCollectionInfoCache(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", pt{id: 1, vec: vecAt(0.9, 1), payload: memoryPayload("one", 0.9, 10, nil)})
	clock := now
	src := &recSource{Source: e.client}
	r := newRanker(t, src, func(c *rank.Config) {
		c.Now = func() time.Time { return clock }
		c.InfoTTL = time.Minute
	})
	q := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}
	var got []string
	for _, step := range []struct {
		advance  time.Duration
		recreate bool
	}{{0, false}, {30 * time.Second, false}, {0, true}, {29 * time.Second, false}, {time.Second, false}} {
		clock = clock.Add(step.advance)
		if step.recreate {
			if err := e.client.DeleteCollection(context.Background(), "mem"); err != nil {
				t.Fatal(err)
			}
			e.create(t, "mem", dim, qdrant.Distance_Euclid)
			e.upsert(t, "mem", pt{id: 1, vec: vecAt(0.9, 1), payload: memoryPayload("one", 0.9, 10, nil)})
		}
		res, err := r.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.PassThrough)
	}
	// Cached as Cosine until the minute is over, then Euclid.
	want := []string{"", "", "", "", rank.PassThroughEuclid}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pass-through per step (-want +got):\n%s", diff)
	}
	if src.infos != 2 {
		t.Errorf("%d collection info calls, want 2", src.infos)
	}
}

// TestConfigValidate: the section's values are checked as they are; New
// checks a Config after putting in the defaults of its zero values.
func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mut     func(*rank.Config)
		wantErr string // "" for none
	}{
		{name: "defaults", mut: func(*rank.Config) {}},
		{name: "explicit", mut: func(c *rank.Config) {
			c.Oversample, c.MaxCandidates, c.SameThreshold, c.JudgeThreshold = 10, 500, 0.95, 0.85
			c.Collections = map[string]rank.CollectionConfig{"a": {Mode: rank.ModeShadow, Guard: rank.GuardPatch{Band: ptr(0.1), Floor: ptr(0.2)}}}
			c.EmbedderGuards = map[string]rank.GuardPatch{"m": {Off: ptr(true)}}
		}},
		{name: "oversample too large", mut: func(c *rank.Config) { c.Oversample = 101 }, wantErr: "oversample: 101 is more than 100"},
		{name: "oversample negative", mut: func(c *rank.Config) { c.Oversample = -1 }, wantErr: "oversample: -1 is less than 1"},
		{name: "max candidates negative", mut: func(c *rank.Config) { c.MaxCandidates = -5 }, wantErr: "max_candidates: -5 is less than 1"},
		{name: "empty collection name", mut: func(c *rank.Config) { c.Collections = map[string]rank.CollectionConfig{" ": {}} }, wantErr: "collections: has an entry with an empty name"},
		{name: "an audit companion listed", mut: func(c *rank.Config) { c.Collections = map[string]rank.CollectionConfig{"m_memrank_audit": {}} }, wantErr: "collections.m_memrank_audit: names a companion (audit trail)"},
		{name: "unknown mode", mut: func(c *rank.Config) { c.Mode = 9 }, wantErr: "mode: 9 is not a mode"},
		{name: "negative band", mut: func(c *rank.Config) { c.Guard.Band = -0.1 }, wantErr: "guard.band: -0.1 is not a non-negative number"},
		{name: "relative band above 1", mut: func(c *rank.Config) { c.Guard.RelativeBand = 2 }, wantErr: "guard.relative_band: 2 is outside [0, 1]"},
		{name: "bad collection guard", mut: func(c *rank.Config) {
			c.Collections = map[string]rank.CollectionConfig{"a": {Guard: rank.GuardPatch{Floor: ptr(math.NaN())}}}
		}, wantErr: "collections.a.guard.floor: NaN is not a finite number"},
		{name: "shadow sample rate above 1", mut: func(c *rank.Config) { c.Shadow.SampleRate = 1.5 }, wantErr: "shadow.sample_rate: 1.5 is outside (0, 1]"},
		{name: "detect sample too large", mut: func(c *rank.Config) { c.Detect.SampleSize = 5000 }, wantErr: "detect.sample_size: 5000 is outside [1, 1000]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := rank.DefaultConfig()
			tc.mut(&c)
			err := c.Validate()
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate: %v, want %q", err, tc.wantErr)
			}
			if _, err := rank.New(&fakeSource{info: cosineInfo()}, c); (err != nil) != (tc.wantErr != "") {
				t.Errorf("New: %v, want error %v", err, tc.wantErr != "")
			}
		})
	}
	// Settings New owns (the wiring's): checked by New.
	for name, c := range map[string]rank.Config{
		"same threshold above 1": {SameThreshold: 1.5},
		"judge above same":       {SameThreshold: 0.9, JudgeThreshold: 0.95},
		"negative info ttl":      {InfoTTL: -time.Second},
	} {
		if _, err := rank.New(&fakeSource{info: cosineInfo()}, c); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := rank.New(&fakeSource{info: cosineInfo()}, rank.Config{}); err != nil {
		t.Errorf("New with the zero Config (every default): %v", err)
	}
	if _, err := rank.New(nil, rank.Config{}); err == nil {
		t.Error("New(nil source) succeeded")
	}
}
