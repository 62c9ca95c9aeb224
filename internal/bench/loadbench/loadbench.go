// Package loadbench is `memrank bench load`: an open-loop load generator
// for a running memrank (or anything that speaks Qdrant's gRPC API). It
// first finds the capacity (the closed-loop maximum: a fixed number of
// requests in flight, each sent when the previous answers), then offers a
// fixed arrival rate, by default three times that, whatever the answers:
// requests leave on schedule, as they do from many independent clients, so
// a server that slows down is not rewarded with less load. It reports
// goodput, how much was shed, latency percentiles of the successes and of
// the refusals, and the resident memory of the given processes and the
// target's goroutines over time. Loops are bounded in time and in
// outstanding requests.
package loadbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/internal/bench/randvec"
	"github.com/memrank/memrank/upstream"
)

// Options configures a run.
type Options struct {
	GRPC       string // target's gRPC address, host:port (required: set-up goes there)
	REST       string // target's REST base URL; set: the queries go there instead
	MetricsURL string // target's /metrics, for its goroutines; "" none
	Pids       []int  // processes whose resident memory is sampled
	Collection string // queried collection (default "loadbench")
	Setup      int    // points to create the collection with first; 0: it exists
	Plain      bool   // set up plain points, not memrank memories (served raw)
	Dim        int    // vector dimension (default 384)
	Limit      int    // top-k (default 10)
	// Capacity phase: InFlight requests in flight for CapacityFor.
	InFlight    int
	CapacityFor time.Duration
	// Open-loop phase: Rate requests per second (0: Multiple x capacity)
	// for Duration; at most MaxOutstanding requests at once (a request
	// due past it is counted as not sent).
	Rate           float64
	Multiple       float64
	Duration       time.Duration
	MaxOutstanding int
	Timeout        time.Duration // each request's deadline (default 10s)
	Conns          int           // gRPC connections (default 8)
	Seed           uint64
}

// DefaultOptions are the defaults of `memrank bench load`.
func DefaultOptions() Options {
	return Options{Collection: "loadbench", Dim: 384, Limit: 10, InFlight: 16, CapacityFor: 10 * time.Second,
		Multiple: 3, Duration: 30 * time.Second, MaxOutstanding: 20000, Timeout: 10 * time.Second, Conns: 8, Seed: 1}
}

// Validate reports options a run cannot work with.
func (o Options) Validate() error {
	switch {
	case o.GRPC == "":
		return errors.New("loadbench: the target's gRPC address is required")
	case o.Dim < 1 || o.Limit < 1 || o.InFlight < 1 || o.Conns < 1 || o.MaxOutstanding < 1:
		return errors.New("loadbench: dim, limit, in-flight, conns and max outstanding must be at least 1")
	case o.CapacityFor <= 0 || o.Duration <= 0 || o.Timeout <= 0:
		return errors.New("loadbench: durations must be positive")
	case o.Rate < 0 || o.Multiple <= 0 && o.Rate == 0:
		return errors.New("loadbench: give a positive rate, or a positive multiple of the capacity")
	}
	return nil
}

// Latency is a distribution of answer times.
type Latency struct {
	N        int
	P50, P99 time.Duration
}

func summarise(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(math.Ceil(q*float64(len(d))))-1)] }
	return Latency{N: len(d), P50: at(0.50), P99: at(0.99)}
}

// Sample is the watched processes at one moment.
type Sample struct {
	At         time.Duration // since the open-loop phase began
	RSS        []int64       // bytes, one per Options.Pids (-1: unreadable)
	Goroutines int           // the target's (-1: unknown)
}

// Report is a run's outcome.
type Report struct {
	Capacity         float64 // closed-loop answers per second
	CapacityLatency  Latency
	Offered          float64 // open-loop arrivals per second
	Sent, NotSent    int     // NotSent: due while MaxOutstanding were outstanding
	OK, Shed, Failed int     // Shed: ResourceExhausted (or Unavailable "at capacity")
	Goodput          float64 // OK per second of the phase
	OKLatency        Latency
	ShedLatency      Latency
	FailedExample    string
	Before, After    Sample // idle, before and a few seconds after the phase
	Peak             Sample // the largest RSS and goroutines seen during it
	Samples          []Sample
	Pids             []int
}

type outcome int

const (
	ok outcome = iota
	shed
	failed
)

type runner struct {
	o       Options
	http    *http.Client
	clients []*qdrant.Client
	queries [][]float32
	next    atomic.Uint64
}

// restQuery is one query over REST: a 503 or 429 is shed.
func (r *runner) restQuery(ctx context.Context, q []float32) (outcome, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	b := []byte(`{"limit":` + strconv.Itoa(r.o.Limit) + `,"with_payload":true,"query":[`)
	for i, x := range q {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	b = append(b, "]}"...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(r.o.REST, "/")+"/collections/"+r.o.Collection+"/points/query", bytes.NewReader(b))
	if err != nil {
		return failed, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := r.http.Do(req)
	if err != nil {
		return failed, time.Since(start), err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	switch resp.StatusCode {
	case http.StatusOK:
		return ok, took, nil
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return shed, took, nil
	}
	return failed, took, fmt.Errorf("HTTP %d", resp.StatusCode)
}

func (r *runner) query(ctx context.Context) (outcome, time.Duration, error) {
	i := r.next.Add(1)
	if r.o.REST != "" {
		return r.restQuery(ctx, r.queries[i%uint64(len(r.queries))])
	}
	c := r.clients[i%uint64(len(r.clients))]
	q := r.queries[i%uint64(len(r.queries))]
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	start := time.Now()
	_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: r.o.Collection, Query: qdrant.NewQueryDense(q),
		Limit: qdrant.PtrOf(uint64(r.o.Limit)), WithPayload: qdrant.NewWithPayload(true)})
	took := time.Since(start)
	switch {
	case err == nil:
		return ok, took, nil
	case status.Code(err) == codes.ResourceExhausted:
		return shed, took, err
	}
	var qe *qdrant.QdrantResourceExhaustedError
	if errors.As(err, &qe) {
		return shed, took, err
	}
	return failed, took, err
}

func (r *runner) close() {
	for _, c := range r.clients {
		_ = c.Close()
	}
	r.clients = nil
	r.http.CloseIdleConnections()
}

// Run runs both phases against the target.
func Run(ctx context.Context, o Options) (Report, error) {
	if err := o.Validate(); err != nil {
		return Report{}, err
	}
	r := &runner{o: o, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 512}}}
	defer r.close()
	for range o.Conns {
		cfg, err := upstream.ClientConfig(o.GRPC)
		if err != nil {
			return Report{}, err
		}
		cfg.PoolSize = 1
		c, err := qdrant.NewClient(cfg)
		if err != nil {
			return Report{}, fmt.Errorf("loadbench: client: %w", err)
		}
		r.clients = append(r.clients, c)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 7))
	for range 256 {
		r.queries = append(r.queries, randvec.Unit(rng, o.Dim))
	}
	if o.Setup > 0 {
		if err := r.setup(ctx, rng); err != nil {
			return Report{}, err
		}
	}
	rep := Report{Pids: o.Pids}
	rep.Before = sample(ctx, o, 0)
	var err error
	if rep.Capacity, rep.CapacityLatency, err = r.capacity(ctx); err != nil {
		return rep, err
	}
	rep.Offered = o.Rate
	if rep.Offered == 0 {
		rep.Offered = o.Multiple * rep.Capacity
	}
	r.openLoop(ctx, &rep)
	// The generator's own connections go first: the target's goroutines
	// after the load are then its own.
	r.close()
	// Give the target a moment to let go of what the load held.
	select {
	case <-time.After(3 * time.Second):
	case <-ctx.Done():
	}
	rep.After = sample(ctx, o, 0)
	return rep, ctx.Err()
}

func (r *runner) setup(ctx context.Context, rng *rand.Rand) error {
	c := r.clients[0]
	if ok, err := c.CollectionExists(ctx, r.o.Collection); err != nil {
		return fmt.Errorf("loadbench: setup: %w", err)
	} else if !ok {
		if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: r.o.Collection,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(r.o.Dim), Distance: qdrant.Distance_Cosine})}); err != nil {
			return fmt.Errorf("loadbench: setup: %w", err)
		}
	}
	for start := 0; start < r.o.Setup; start += 500 {
		var pts []*qdrant.PointStruct
		for i := start; i < min(start+500, r.o.Setup); i++ {
			payload := map[string]any{"text": "memory " + strconv.Itoa(i), "n": i}
			if !r.o.Plain {
				// A memory record as the write path stores it, so that the
				// target re-ranks: the read path under test.
				payload["memory_type"] = []string{"fact", "preference", "event"}[i%3]
				payload["source"] = []string{"direct", "confirmed", "strong_inference"}[i%3]
				payload["extractor_model"] = "gpt-4o"
				payload["grounding"] = "supported"
				payload["observations"] = i % 4
				payload["confidence"] = 0.6 + float64(i%4)/10
				payload["created_at"] = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
			}
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense(randvec.Unit(rng, r.o.Dim)),
				Payload: qdrant.NewValueMap(payload)})
		}
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: r.o.Collection, Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
			return fmt.Errorf("loadbench: setup: %w", err)
		}
	}
	return nil
}

// capacity is the closed-loop rate: InFlight workers, each sending its
// next request when the previous answers.
func (r *runner) capacity(ctx context.Context) (float64, Latency, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.CapacityFor)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range r.o.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				out, took, err := r.query(context.WithoutCancel(ctx))
				mu.Lock()
				if out == ok {
					lat = append(lat, took)
				} else if out == failed && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(lat) == 0 {
		return 0, Latency{}, fmt.Errorf("loadbench: no query succeeded in the capacity phase: %v", firstErr)
	}
	return float64(len(lat)) / elapsed.Seconds(), summarise(lat), nil
}

// openLoop sends requests on a fixed schedule for Duration.
func (r *runner) openLoop(ctx context.Context, rep *Report) {
	interval := time.Duration(float64(time.Second) / rep.Offered)
	total := int(r.o.Duration / interval)
	var mu sync.Mutex
	var okLat, shedLat []time.Duration
	var wg sync.WaitGroup
	slots := make(chan struct{}, r.o.MaxOutstanding)
	sampler := make(chan struct{})
	samplerDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(samplerDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-sampler:
				return
			case <-t.C:
				s := sample(ctx, r.o, time.Since(start))
				mu.Lock()
				rep.Samples = append(rep.Samples, s)
				mu.Unlock()
			}
		}
	}()
	for i := 0; i < total && ctx.Err() == nil; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		select {
		case slots <- struct{}{}:
		default:
			rep.NotSent++
			continue
		}
		rep.Sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			out, took, err := r.query(ctx)
			mu.Lock()
			defer mu.Unlock()
			switch out {
			case ok:
				rep.OK++
				okLat = append(okLat, took)
			case shed:
				rep.Shed++
				shedLat = append(shedLat, took)
			default:
				rep.Failed++
				if rep.FailedExample == "" {
					rep.FailedExample = err.Error()
				}
			}
		}()
	}
	phase := time.Since(start)
	wg.Wait()
	close(sampler)
	<-samplerDone
	rep.Goodput = float64(rep.OK) / phase.Seconds()
	rep.OKLatency, rep.ShedLatency = summarise(okLat), summarise(shedLat)
	for _, s := range rep.Samples {
		for i, v := range s.RSS {
			if len(rep.Peak.RSS) <= i {
				rep.Peak.RSS = append(rep.Peak.RSS, v)
			}
			rep.Peak.RSS[i] = max(rep.Peak.RSS[i], v)
		}
		rep.Peak.Goroutines = max(rep.Peak.Goroutines, s.Goroutines)
	}
}

// sample reads the resident memory of the watched processes (Linux
// /proc) and the target's goroutines (its Prometheus go_goroutines).
func sample(ctx context.Context, o Options, at time.Duration) Sample {
	s := Sample{At: at, Goroutines: -1}
	for _, pid := range o.Pids {
		s.RSS = append(s.RSS, rss(pid))
	}
	if o.MetricsURL != "" {
		s.Goroutines = goroutines(ctx, o.MetricsURL)
	}
	return s
}

func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && len(f) == 2 && f[1] == "kB" {
				return n << 10
			}
		}
	}
	return -1
}

func goroutines(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return -1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
				return int(f)
			}
		}
	}
	return -1
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

func mib(b int64) string {
	if b < 0 {
		return "?"
	}
	return strconv.FormatInt(b>>20, 10) + " MiB"
}

// WriteTo prints the report as a table.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "capacity (closed loop)  %8.0f req/s   p50 %s  p99 %s\n", r.Capacity, ms(r.CapacityLatency.P50), ms(r.CapacityLatency.P99))
	fmt.Fprintf(&b, "offered (open loop)     %8.0f req/s   %.1fx capacity\n", r.Offered, r.Offered/r.Capacity)
	fmt.Fprintf(&b, "sent %d, not sent %d (generator's bound), ok %d, shed %d, failed %d\n", r.Sent, r.NotSent, r.OK, r.Shed, r.Failed)
	fmt.Fprintf(&b, "goodput                 %8.0f req/s   %.0f%% of capacity\n", r.Goodput, 100*r.Goodput/r.Capacity)
	fmt.Fprintf(&b, "successes               p50 %s  p99 %s\n", ms(r.OKLatency.P50), ms(r.OKLatency.P99))
	fmt.Fprintf(&b, "refusals                p50 %s  p99 %s\n", ms(r.ShedLatency.P50), ms(r.ShedLatency.P99))
	if r.FailedExample != "" {
		fmt.Fprintf(&b, "a failure: %.200s\n", r.FailedExample)
	}
	for i, pid := range r.Pids {
		at := func(s Sample) int64 {
			if i < len(s.RSS) {
				return s.RSS[i]
			}
			return -1
		}
		line := fmt.Sprintf("pid %-7d RSS before %s, peak %s, after %s", pid, mib(at(r.Before)), mib(at(r.Peak)), mib(at(r.After)))
		if n := len(r.Samples); n >= 2 {
			// Growth under load: the first second of the phase against its last.
			line += fmt.Sprintf("; under load %s at %v, %s at %v", mib(at(r.Samples[0])), r.Samples[0].At.Round(time.Second),
				mib(at(r.Samples[n-1])), r.Samples[n-1].At.Round(time.Second))
		}
		b.WriteString(line + "\n")
	}
	if r.Before.Goroutines >= 0 {
		fmt.Fprintf(&b, "target goroutines before %d, peak %d, after %d\n", r.Before.Goroutines, r.Peak.Goroutines, r.After.Goroutines)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
