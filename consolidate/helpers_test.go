package consolidate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is when the stories' last observations happen.
var t0 = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// harness is a write path and consolidation jobs on one embedded store.
type harness struct {
	client *qdrant.Client
	codec  *memory.Codec
	eng    *dedup.Engine
	clock  *clock
}

func newClient(t testing.TB) *qdrant.Client {
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
	return client
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{client: newClient(t), clock: &clock{now: t0}}
	var err error
	if h.codec, err = memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams()); err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	if h.eng, err = dedup.New(h.client, dedup.Config{Codec: h.codec, Embedder: emb, RequireSurfaceChange: true,
		Now: h.clock.Now}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) job(t testing.TB, cfg consolidate.Config, replica string) *consolidate.Job {
	t.Helper()
	if cfg.Interval == 0 {
		cfg = consolidate.DefaultConfig()
		cfg.Rate = 0
	}
	j, err := consolidate.New(h.client, consolidate.Options{Config: cfg, Codec: h.codec, Replica: replica, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// text is memory i's text: words of its own, so that no two memories are
// similar.
func text(i int) string { return fmt.Sprintf("q%dx z%dy k%dw", i, i, i) }

func (h *harness) observe(t testing.TB, o dedup.Observation) dedup.Outcome {
	t.Helper()
	if o.Collection == "" {
		o.Collection = "mem"
	}
	out, err := h.eng.Observe(context.Background(), o)
	if err != nil {
		t.Fatalf("observe %q: %v", o.Text, err)
	}
	return out
}

// seed stores n memories observed at ages spread over two years before t0,
// half of them direct statements of a sure extractor.
func (h *harness) seed(t testing.TB, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		age := time.Duration(i*730/n) * 24 * time.Hour
		o := dedup.Observation{Text: text(i), Source: scoring.SourceStrongInference,
			SessionID: fmt.Sprintf("s%d", i), ObservedAt: t0.Add(-age), Modality: "chat"}
		if i%2 == 0 {
			// Sure enough to pass through stale before the decay floor.
			lp := 0.0
			o.Source, o.ExtractorLogprob = scoring.SourceDirect, &lp
		}
		out := h.observe(t, o)
		ids[i] = out.MemoryID
	}
	return ids
}

func (h *harness) get(t testing.TB, id string) (memory.Memory, map[string]*qdrant.Value) {
	t.Helper()
	pts, err := h.client.Get(context.Background(), &qdrant.GetPoints{CollectionName: "mem",
		Ids: []*qdrant.PointId{qdrant.NewID(id)}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("get %s: %v (%d points)", id, err, len(pts))
	}
	return h.codec.DecodeQdrant(pts[0].GetPayload()), pts[0].GetPayload()
}

// expected is the state consolidation stores for a memory nobody took out
// of answers, at now: its tier label (archived past the decay floor) and
// retrievable true, since age never takes a memory out.
func (h *harness) expected(m *memory.Memory, now time.Time) (scoring.Tier, bool) {
	in := h.codec.Inputs(m)
	s := h.codec.Params().Evaluate(&in, 1, now)
	return s.Tier, true
}

// tierRecords counts each memory's audit records of reason.
func (h *harness) tierRecords(t testing.TB, reason string) map[string]int {
	t.Helper()
	out := map[string]int{}
	var offset *qdrant.PointId
	for {
		limit := uint32(500)
		pts, next, err := h.client.ScrollAndOffset(context.Background(), &qdrant.ScrollPoints{
			CollectionName: "mem" + memory.AuditSuffix, Limit: &limit, Offset: offset,
			Filter:      &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("reason", reason)}},
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			out[p.GetPayload()["memory_id"].GetStringValue()]++
		}
		if next == nil {
			return out
		}
		offset = next
	}
}
