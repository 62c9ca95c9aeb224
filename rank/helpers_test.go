package rank_test

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// now is the fixed clock of every test.
var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return now }

// daysAgo formats a timestamp d days before now.
func daysAgo(d float64) string {
	return memory.FormatTime(now.Add(-time.Duration(d * 24 * float64(time.Hour))))
}

// env is an embedded store reached through the real go-client.
type env struct {
	db     *store.DB
	inproc *upstream.InProcess
	client *qdrant.Client
}

// newClient is one more go-client on the same store, closed with the test.
func (e *env) newClient(t testing.TB) *qdrant.Client {
	t.Helper()
	c, err := qdrant.NewClient(e.inproc.ClientConfig())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newEnv(t testing.TB) *env {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	client, err := qdrant.NewClient(p.ClientConfig())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() {
		_ = client.Close()
		_ = p.Close()
		_ = db.Close()
	})
	return &env{db: db, inproc: p, client: client}
}

func (e *env) create(t testing.TB, name string, dim uint64, d qdrant.Distance) {
	t.Helper()
	err := e.client.CreateCollection(context.Background(), &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: dim, Distance: d}),
	})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// pt is a point to upsert.
type pt struct {
	id      uint64
	vec     []float32
	payload map[string]any
}

func (e *env) upsert(t testing.TB, coll string, pts ...pt) {
	t.Helper()
	wait := true
	req := &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait}
	for _, p := range pts {
		payload, err := qdrant.TryValueMap(p.payload)
		if err != nil {
			t.Fatalf("payload of %d: %v", p.id, err)
		}
		req.Points = append(req.Points, &qdrant.PointStruct{Id: qdrant.NewIDNum(p.id), Vectors: qdrant.NewVectorsDense(p.vec), Payload: payload})
	}
	if _, err := e.client.Upsert(context.Background(), req); err != nil {
		t.Fatalf("upsert: %v", err)
	}
}

// dim is the fixtures' vector size: axis 0 is the query direction, every
// point gets its own orthogonal axis so unrelated points stay far apart.
const dim = 32

// query is the fixtures' query vector.
func query() []float32 {
	v := make([]float32, dim)
	v[0] = 1
	return v
}

// vecAt returns a unit vector whose cosine with the query is score and
// whose remaining length lies on its own axis.
func vecAt(score float64, axis int) []float32 {
	v := make([]float32, dim)
	v[0] = float32(score)
	v[axis] = float32(math.Sqrt(1 - score*score))
	return v
}

// near returns a unit vector with cosine c to v (v a unit vector), moving
// towards a fresh axis.
func near(v []float32, c float64, axis int) []float32 {
	out := make([]float32, dim)
	for i := range v {
		out[i] = float32(c) * v[i]
	}
	out[axis] += float32(math.Sqrt(1 - c*c))
	return out
}

// memoryPayload is a scored memory with the given stored confidence, age
// in days (last observed), and access counts.
func memoryPayload(text string, conf float64, ageDays float64, counts map[string]any) map[string]any {
	p := map[string]any{
		"text":             text,
		"memory_type":      "fact",
		"source":           "direct",
		"extractor_model":  "claude-3-5-sonnet",
		"confidence":       conf,
		"created_at":       daysAgo(ageDays),
		"last_observed_at": daysAgo(ageDays),
		"decay_category":   "technical", // half-life 120 days
	}
	if counts != nil {
		p["access_counts"] = counts
	}
	return p
}

// weight is the expected weight of a scored memory observed ageDays ago
// in the "technical" category, accessed n times in all, against base, for
// a query of the given focus on recent memories: computed with the scoring
// package's default factors, not with the pipeline. A negative base is
// the weight as it is.
func weight(base float32, ageDays float64, n int64, focus float64) float64 {
	p := scoring.DefaultParams()
	f := scoring.FreshnessFactor(p.FreshnessWeight, focus, scoring.Freshness(ageDays, 120))
	return scoring.Weight(float64(base), f, scoring.AccessBoost(p.AccessWeight, n))
}

// focusCand is a kept candidate as a query's focus sees it: its base
// score and its freshness.
type focusCand struct{ base, fresh float64 }

// expectedFocus is the focus on recent memories of a query whose kept
// candidates are cands (docs/scoring.md): the mean freshness of the
// FocusTop most similar against that of the FocusPool most similar, through
// Params.Focus. Computed here from the fixture, not by the ranker.
func expectedFocus(p *scoring.Params, cands []focusCand) float64 {
	if len(cands) == 0 {
		return 1
	}
	c := slices.Clone(cands)
	slices.SortStableFunc(c, func(a, b focusCand) int {
		switch {
		case a.base > b.base:
			return -1
		case a.base < b.base:
			return 1
		}
		return 0
	})
	pool := min(p.FocusPool, len(c))
	top := min(p.FocusTop, pool)
	var sumTop, sumPool float64
	for i := range pool {
		if i < top {
			sumTop += c[i].fresh
		}
		sumPool += c[i].fresh
	}
	return p.Focus(sumTop/float64(top), sumPool/float64(pool))
}

// focusFloor is the default scoring parameters with the focus never below
// floor: 1 pins every query's focus at 1 (age weighs fully).
func focusFloor(floor float64) *scoring.Params {
	p := scoring.DefaultParams()
	p.FocusFloor = floor
	return p
}

// testGuard is the relevance guard of the tests that expect its order:
// fixed here, so tuning the defaults does not move them.
var testGuard = rank.Guard{Band: 0.15, Floor: 0.30, RelativeBand: 0.25}

func newRanker(t testing.TB, src rank.Source, mut func(*rank.Config)) *rank.Ranker {
	t.Helper()
	cfg := rank.Config{Now: fixedNow}
	if mut != nil {
		mut(&cfg)
	}
	r, err := rank.New(src, cfg)
	if err != nil {
		t.Fatalf("rank.New: %v", err)
	}
	return r
}

func ids(pts []*qdrant.ScoredPoint) []uint64 {
	out := make([]uint64, len(pts))
	for i, p := range pts {
		out[i] = p.GetId().GetNum()
	}
	return out
}

func numIDs(list []*qdrant.PointId) []uint64 {
	out := make([]uint64, len(list))
	for i, id := range list {
		out[i] = id.GetNum()
	}
	return out
}

func u64(v uint64) *uint64 { return &v }

// recSource wraps a Source and records every upstream request.
type recSource struct {
	rank.Source
	mu     sync.Mutex
	reqs   []*qdrant.QueryPoints
	groups []*qdrant.QueryPointGroups
	infos  int
}

func (s *recSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return s.Source.Query(ctx, req)
}

// listingSource is a recSource whose listings are read from the wire
// (qdrantwire), as serve reads them; it records them apart.
type listingSource struct {
	*recSource
	wire     *qdrantwire.Client
	listings []*qdrant.QueryPoints
	wires    int // fetches through QueryWire
}

func (s *listingSource) QueryListing(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	s.mu.Lock()
	s.listings = append(s.listings, req)
	s.mu.Unlock()
	return s.wire.QueryListing(ctx, req)
}

func (s *listingSource) QueryWire(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, [][]byte, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.wires++
	s.mu.Unlock()
	return s.wire.QueryWire(ctx, req)
}

func (s *recSource) GetCollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error) {
	s.mu.Lock()
	s.infos++
	s.mu.Unlock()
	return s.Source.GetCollectionInfo(ctx, name)
}

// The Prober methods go to the wrapped source, so detection sees the store.
func (s *recSource) CollectionExists(ctx context.Context, name string) (bool, error) {
	return s.Source.(rank.Prober).CollectionExists(ctx, name)
}

func (s *recSource) Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error) {
	return s.Source.(rank.Prober).Scroll(ctx, req)
}

func (s *recSource) Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error) {
	return s.Source.(rank.Prober).Get(ctx, req)
}

func (s *recSource) QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) ([]*qdrant.PointGroup, error) {
	s.mu.Lock()
	s.groups = append(s.groups, req)
	s.mu.Unlock()
	return s.Source.(rank.GroupSource).QueryGroups(ctx, req)
}

// fakeSource answers every query with prepared points, for cases a store
// cannot produce (exact score ties, named vectors, upstream failures).
type fakeSource struct {
	info   *qdrant.CollectionInfo
	points []*qdrant.ScoredPoint
	err    error
	mu     sync.Mutex
	reqs   []*qdrant.QueryPoints
}

func (f *fakeSource) Query(_ context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	n := len(f.points)
	if req.Limit != nil {
		n = min(n, int(req.GetLimit()))
	}
	return f.points[:n], nil
}

func (f *fakeSource) GetCollectionInfo(context.Context, string) (*qdrant.CollectionInfo, error) {
	return f.info, nil
}

// The fake has no audit companion and lets detection sample its points.
func (f *fakeSource) CollectionExists(context.Context, string) (bool, error) { return false, nil }

func (f *fakeSource) Scroll(_ context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error) {
	var out []*qdrant.RetrievedPoint
	for _, p := range f.points[:min(len(f.points), int(req.GetLimit()))] {
		out = append(out, &qdrant.RetrievedPoint{Id: p.GetId(), Payload: p.GetPayload()})
	}
	return out, nil
}

func (f *fakeSource) Get(context.Context, *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error) {
	return nil, nil
}

func cosineInfo() *qdrant.CollectionInfo {
	return &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: dim, Distance: qdrant.Distance_Cosine}),
	}}}
}

func scored(id uint64, score float32, payload map[string]any, vec []float32) *qdrant.ScoredPoint {
	p := &qdrant.ScoredPoint{Id: qdrant.NewIDNum(id), Score: score, Payload: qdrant.NewValueMap(payload)}
	if vec != nil {
		p.Vectors = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
			Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: vec}},
		}}}
	}
	return p
}

// scoredNamed is scored with its vector under a name.
func scoredNamed(id uint64, score float32, payload map[string]any, name string, vec []float32) *qdrant.ScoredPoint {
	p := &qdrant.ScoredPoint{Id: qdrant.NewIDNum(id), Score: score, Payload: qdrant.NewValueMap(payload)}
	p.Vectors = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{
		Vectors: map[string]*qdrant.VectorOutput{name: {Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: vec}}}},
	}}}
	return p
}

func infoWith(d qdrant.Distance) *qdrant.CollectionInfo {
	return &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: dim, Distance: d}),
	}}}
}

// fakeVerdicts is a VerdictCache over a fixed table keyed by text (hashed
// here), that records the pairs it was asked about.
type fakeVerdicts struct {
	table map[[2]string]dedup.Verdict
	mu    sync.Mutex
	asked int
}

func newVerdicts(pairs map[[2]string]dedup.Verdict) *fakeVerdicts {
	f := &fakeVerdicts{table: map[[2]string]dedup.Verdict{}}
	for k, v := range pairs {
		f.table[[2]string{memory.TextHash(k[0]), memory.TextHash(k[1])}] = v
	}
	return f
}

func (f *fakeVerdicts) Lookup(a, b string) (dedup.Verdict, bool) {
	f.mu.Lock()
	f.asked++
	f.mu.Unlock()
	if v, ok := f.table[[2]string{a, b}]; ok {
		return v, true
	}
	v, ok := f.table[[2]string{b, a}]
	return v, ok
}

// fakePayloads records SetPayload calls; fail decides, per call, whether
// it fails; block, when set, holds every call until it is closed.
type fakePayloads struct {
	mu      sync.Mutex
	calls   []*qdrant.SetPayloadPoints // every attempt
	ok      []*qdrant.SetPayloadPoints // the successful ones
	fail    func(req *qdrant.SetPayloadPoints) error
	block   chan struct{}
	entered chan struct{} // receives once per call, when set (buffered)
}

func (f *fakePayloads) SetPayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.UpdateResult, error) {
	f.mu.Lock()
	entered, block := f.entered, f.block
	f.mu.Unlock()
	if entered != nil {
		select {
		case entered <- struct{}{}:
		default:
		}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := proto.Clone(req).(*qdrant.SetPayloadPoints)
	f.calls = append(f.calls, c)
	if f.fail != nil {
		if err := f.fail(req); err != nil {
			return nil, err
		}
	}
	f.ok = append(f.ok, c)
	return &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}, nil
}

func (f *fakePayloads) setFail(fn func(*qdrant.SetPayloadPoints) error) {
	f.mu.Lock()
	f.fail = fn
	f.mu.Unlock()
}

// totals are the access_counts totals last written successfully, by
// "collection/id" and replica.
func (f *fakePayloads) totals() map[string]map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]map[string]int64{}
	for _, c := range f.ok {
		if c.GetKey() != "access_counts" {
			continue
		}
		for _, id := range c.GetPointsSelector().GetPoints().GetIds() {
			k := c.GetCollectionName() + "/" + idString(id)
			if out[k] == nil {
				out[k] = map[string]int64{}
			}
			for rep, v := range c.GetPayload() {
				out[k][rep] = v.GetIntegerValue()
			}
		}
	}
	return out
}

// lastAccessed are the last_accessed_at values written, by "collection/id".
func (f *fakePayloads) lastAccessed() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, c := range f.ok {
		v, ok := c.GetPayload()["last_accessed_at"]
		if !ok || c.Key != nil {
			continue
		}
		for _, id := range c.GetPointsSelector().GetPoints().GetIds() {
			out[c.GetCollectionName()+"/"+idString(id)] = v.GetStringValue()
		}
	}
	return out
}

func (f *fakePayloads) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func idString(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	return strconv.FormatUint(id.GetNum(), 10)
}

func newRecorder(t testing.TB, dst rank.Payloads, mut func(*rank.RecorderConfig)) *rank.Recorder {
	t.Helper()
	cfg := rank.RecorderConfig{ReplicaID: "a", FlushInterval: time.Hour}
	if mut != nil {
		mut(&cfg)
	}
	r, err := rank.NewRecorder(dst, cfg)
	if err != nil {
		t.Fatalf("NewRecorder: %v", err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	return r
}
