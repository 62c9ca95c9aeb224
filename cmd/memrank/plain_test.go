package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// plainVec is a unit vector at cosine c to the query e0, leaning on axis.
func plainVec(c float64, axis int) []float32 {
	v := make([]float32, 8)
	v[0] = float32(c)
	v[axis] = float32(math.Sqrt(1 - c*c))
	return v
}

// TestPlainCollectionsUntouched: collections that are not memories, served
// through memrank over gRPC and REST with no configuration, answer exactly
// what the store answers (points, order, scores, payloads) for every read
// memrank intercepts, and their stored payloads are byte-identical after the
// reads and an access flush. A collection of memory records next to them is
// still re-ranked.
func TestPlainCollectionsUntouched(t *testing.T) {
	compat, _ := startQdrantCompat(t, t.TempDir(), []string{"gRPC", "REST"}, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0")
	httpAddr, grpcAddr, _ := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=100ms"},
		"--upstream", compat["gRPC"], "--replica-id", "plain")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	direct, viaMemrank := grpcClient(t, compat["gRPC"]), grpcClient(t, grpcAddr)

	// Plain payloads (LangChain's, mem0's, and one with fields memories
	// also carry), near-duplicates a memory re-ranker would fold, and a
	// negative similarity.
	payloads := []map[string]any{
		{"page_content": "Dana works at Acme", "metadata": map[string]any{"source": "notes.md"}},
		{"page_content": "Dana works at Acme.", "metadata": map[string]any{"source": "notes.md"}},
		{"data": "Likes tea", "hash": "h1", "created_at": "2025-01-01T00:00:00Z", "user_id": "u1"},
		{"text": "old note", "created_at": "2020-01-01T00:00:00Z", "user_id": "u2", "hash": "h2", "access_counts": map[string]any{"r": 500}},
		{"text": "far away"},
	}
	sims := []float64{0.9, 0.9, 0.7, 0.5, -0.6}
	if err := direct.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "docs",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 8, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	var pts []*qdrant.PointStruct
	for i, p := range payloads {
		v := plainVec(sims[i], 1+i)
		if i == 1 {
			v = plainVec(0.9, 1) // the same vector as point 1
			v[2] = 0.01
		}
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense(v), Payload: qdrant.NewValueMap(p)})
	}
	if _, err := direct.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "docs", Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
		t.Fatal(err)
	}
	// A memory collection beside it: an old, never-read memory nearest, a
	// fresh, much-read one just behind (inside the relevance band).
	mem := func(id uint64, sim float64, ageDays, reads int) *qdrant.PointStruct {
		at := time.Now().Add(-time.Duration(ageDays) * 24 * time.Hour).UTC().Format(time.RFC3339)
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectorsDense(plainVec(sim, int(id))), Payload: qdrant.NewValueMap(map[string]any{
			"text": fmt.Sprintf("memory %d", id), "memory_type": "fact", "source": "direct", "extractor_model": "gpt-4o",
			"confidence": 0.9, "created_at": at, "last_observed_at": at, "access_counts": map[string]any{"r": reads}, "memrank_schema": 1,
		})}
	}
	if err := direct.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mem",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 8, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true),
		Points: []*qdrant.PointStruct{mem(1, 0.9, 120, 0), mem(2, 0.89, 1, 40)}}); err != nil {
		t.Fatal(err)
	}

	scrollBytes := func() []byte {
		out, err := direct.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "docs", Limit: qdrant.PtrOf(uint32(100)),
			WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		for _, p := range out {
			pb, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, pb...)
		}
		return b
	}
	before := scrollBytes()

	q := plainVec(1, 1)
	q[1] = 0
	thr := float32(0.1)
	grpcReads := []struct {
		name string
		call func(*qdrant.Client) (any, error)
	}{
		{"query", func(c *qdrant.Client) (any, error) {
			return c.Query(ctx, &qdrant.QueryPoints{CollectionName: "docs", Query: qdrant.NewQueryDense(q), Limit: qdrant.PtrOf(uint64(5)), WithPayload: qdrant.NewWithPayload(true)})
		}},
		{"query by id", func(c *qdrant.Client) (any, error) {
			return c.Query(ctx, &qdrant.QueryPoints{CollectionName: "docs", Query: qdrant.NewQueryID(qdrant.NewIDNum(3)), Limit: qdrant.PtrOf(uint64(3)), WithPayload: qdrant.NewWithPayload(true)})
		}},
		{"query with a threshold and vectors", func(c *qdrant.Client) (any, error) {
			return c.Query(ctx, &qdrant.QueryPoints{CollectionName: "docs", Query: qdrant.NewQueryDense(q), ScoreThreshold: &thr, WithVectors: qdrant.NewWithVectors(true)})
		}},
		{"query batch", func(c *qdrant.Client) (any, error) {
			return c.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "docs", QueryPoints: []*qdrant.QueryPoints{
				{CollectionName: "docs", Query: qdrant.NewQueryDense(q), Limit: qdrant.PtrOf(uint64(2))},
				{CollectionName: "docs", Query: qdrant.NewQueryDense(q), Limit: qdrant.PtrOf(uint64(4)), Offset: qdrant.PtrOf(uint64(1))},
			}})
		}},
		{"query groups", func(c *qdrant.Client) (any, error) {
			return c.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: "docs", Query: qdrant.NewQueryDense(q), GroupBy: "user_id", WithPayload: qdrant.NewWithPayload(true)})
		}},
		{"search", func(c *qdrant.Client) (any, error) {
			res, err := c.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "docs", Vector: q, Limit: 5, ScoreThreshold: &thr, WithPayload: qdrant.NewWithPayload(true)})
			return res.GetResult(), err
		}},
	}
	var restBody = `{"query":[1,0,0,0,0,0,0,0],"limit":5,"with_payload":true}`
	restReads := []struct{ path, body string }{
		{"/collections/docs/points/query", restBody},
		{"/collections/docs/points/search", `{"vector":[1,0,0,0,0,0,0,0],"limit":5,"with_payload":true,"score_threshold":0.1}`},
		{"/collections/docs/points/search/batch", `{"searches":[{"vector":[1,0,0,0,0,0,0,0],"limit":3}]}`},
		{"/collections/docs/points/query/groups", `{"query":[1,0,0,0,0,0,0,0],"group_by":"user_id","with_payload":true}`},
	}
	restResult := func(base, path, body string) any {
		resp, err := http.Post("http://"+base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var v map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %s%s: %d %s", base, path, resp.StatusCode, raw)
		}
		delete(v, "time")
		return v
	}
	for round := range 3 { // repeated, so an access count would have something to grow
		for _, r := range grpcReads {
			want, err := r.call(direct)
			if err != nil {
				t.Fatalf("%s on the store: %v", r.name, err)
			}
			got, err := r.call(viaMemrank)
			if err != nil {
				t.Fatalf("%s through memrank: %v", r.name, err)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" && round == 0 {
				t.Errorf("gRPC %s: memrank's answer differs from the store's (-store +memrank):\n%s", r.name, diff)
			}
		}
		for _, r := range restReads {
			want, got := restResult(compat["REST"], r.path, r.body), restResult(httpAddr, r.path, r.body)
			if diff := cmp.Diff(want, got); diff != "" && round == 0 {
				t.Errorf("REST %s: memrank's answer differs from the store's (-store +memrank):\n%s", r.path, diff)
			}
		}
	}
	time.Sleep(400 * time.Millisecond) // past several access flushes
	if after := scrollBytes(); !bytes.Equal(before, after) {
		t.Errorf("the plain collection's stored points changed while memrank served reads")
	}

	memQuery := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(q), Limit: qdrant.PtrOf(uint64(2))}
	raw, err := direct.Query(ctx, memQuery)
	if err != nil {
		t.Fatal(err)
	}
	ranked, err := viaMemrank.Query(ctx, memQuery)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2 || len(ranked) != 2 || raw[0].GetId().GetNum() != 1 || ranked[0].GetId().GetNum() != 2 {
		t.Errorf("the memory collection: store %v, memrank %v; want 1 then 2 from the store and 2 first from memrank", raw, ranked)
	}
}
