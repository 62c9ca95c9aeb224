package grpcfront

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/upstream"
)

// fakeRanker stands in for rank.Ranker where a test is about the front:
// it asks its source, like the ranker, and reverses the order so a test
// can tell a ranked answer from a forwarded one.
type fakeRanker struct {
	src *qdrant.Client
}

func (r *fakeRanker) Query(ctx context.Context, req *qdrant.QueryPoints) (*rank.Result, error) {
	pts, err := r.src.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	slices.Reverse(pts)
	return &rank.Result{Points: pts, Reranked: true}, nil
}

func (r *fakeRanker) Search(ctx context.Context, req *qdrant.SearchPoints) (*rank.Result, error) {
	resp, err := r.src.GetPointsClient().Search(ctx, req)
	if err != nil {
		return nil, err
	}
	pts := resp.GetResult()
	slices.Reverse(pts)
	return &rank.Result{Points: pts, Reranked: true}, nil
}

func (r *fakeRanker) QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) (*rank.GroupsResult, error) {
	groups, err := r.src.QueryGroups(ctx, req)
	if err != nil {
		return nil, err
	}
	return &rank.GroupsResult{Groups: groups, Reranked: true}, nil
}

// Reranks: every collection but "plain".
func (r *fakeRanker) Reranks(_ context.Context, name string) bool { return name != "plain" }

// sourceFor is the ranker's go-client on the upstream, built the way the
// wiring builds it.
func sourceFor(t testing.TB, target string, opts ...grpc.DialOption) *qdrant.Client {
	t.Helper()
	cfg, err := upstream.ClientConfig(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := qdrant.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func scored(ids ...uint64) []*qdrant.ScoredPoint {
	var pts []*qdrant.ScoredPoint
	for i, id := range ids {
		pts = append(pts, &qdrant.ScoredPoint{Id: qdrant.NewIDNum(id), Score: 1 - float32(i)/10, Version: 3})
	}
	return pts
}

func ids(pts []*qdrant.ScoredPoint) []uint64 {
	var out []uint64
	for _, p := range pts {
		out = append(out, p.GetId().GetNum())
	}
	return out
}

// The caller's metadata and deadline reach the upstream, on forwarded calls
// and on the ranker's calls alike, and go-client's own key is never added.
func TestMetadataAndDeadlineReachUpstream(t *testing.T) {
	up := &fakeUpstream{points: scored(1, 2, 3)}
	addr := startFake(t, up)
	front := startFront(t, addr, Config{ranker: &fakeRanker{src: sourceFor(t, addr)}})
	c := client(t, front, qdrant.Config{APIKey: "secret", Headers: map[string]string{"authorization": "Bearer tok", "x-custom": "v"}})

	calls := []struct {
		name, method string
		call         func(ctx context.Context) error
	}{
		{"forwarded Count", "Count", func(ctx context.Context) error {
			_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"})
			return err
		}},
		{"ranked Query", "Query", func(ctx context.Context) error {
			pts, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 0})})
			if err == nil && !slices.Equal(ids(pts), []uint64{3, 2, 1}) {
				t.Errorf("ranked Query returned %v, want the fake ranker's order [3 2 1]", ids(pts))
			}
			return err
		}},
		{"forwarded Query on a plain collection", "Query", func(ctx context.Context) error {
			pts, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "plain", Query: qdrant.NewQueryDense([]float32{1, 0})})
			if err == nil && !slices.Equal(ids(pts), []uint64{1, 2, 3}) {
				t.Errorf("forwarded Query returned %v, want the upstream's order [1 2 3]", ids(pts))
			}
			return err
		}},
		{"ranked Search", "Search", func(ctx context.Context) error {
			_, err := c.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "mem", Vector: []float32{1, 0}, Limit: 3})
			return err
		}},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := tc.call(ctx); err != nil {
				t.Fatal(err)
			}
			got := up.last(t, tc.method)
			for k, want := range map[string][]string{"api-key": {"secret"}, "authorization": {"Bearer tok"}, "x-custom": {"v"}} {
				if diff := cmp.Diff(want, got.md.Get(k)); diff != "" {
					t.Errorf("upstream metadata %s (-want +got):\n%s", k, diff)
				}
			}
			if got.deadline <= 2*time.Second || got.deadline > 3*time.Second {
				t.Errorf("upstream deadline %v, want the caller's 3s less the time on the way", got.deadline)
			}
		})
	}
}

// Cancelling a call cancels the upstream's.
func TestCancellationReachesUpstream(t *testing.T) {
	arrived, ended := make(chan struct{}), make(chan error, 1)
	up := &fakeUpstream{answer: func(ctx context.Context, method string) error {
		close(arrived)
		select {
		case <-ctx.Done():
			ended <- ctx.Err()
		case <-time.After(10 * time.Second):
			ended <- errors.New("not cancelled")
		}
		return ctx.Err()
	}}
	front := startFront(t, startFake(t, up), Config{})
	c := client(t, front, qdrant.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"})
		errc <- err
	}()
	<-arrived
	cancel()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("upstream call ended with %v, want context.Canceled", err)
	}
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("caller got %v, want Canceled", err)
	}
}

// Statuses, headers and trailers of the upstream reach the caller
// unchanged: go-client's retry-after handling works through the front.
func TestStatusAndTrailersPassThrough(t *testing.T) {
	const limited = "Rate limiting exceeded: Write rate limit exceeded: Operation requires 1 tokens but only 0 were available."
	const missing = "Not found: Collection `mem` doesn't exist!"
	answer := codes.OK
	up := &fakeUpstream{answer: func(ctx context.Context, method string) error {
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-upstream", "h"))
		switch answer {
		case codes.ResourceExhausted:
			_ = grpc.SetTrailer(ctx, metadata.Pairs("retry-after", "7"))
			return status.Error(codes.ResourceExhausted, limited)
		case codes.NotFound:
			return status.Error(codes.NotFound, missing)
		}
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "t"))
		return nil
	}}
	addr := startFake(t, up)
	front := startFront(t, addr, Config{ranker: &fakeRanker{src: sourceFor(t, addr)}})
	c := client(t, front, qdrant.Config{})
	ctx := testCtx(t)

	for _, path := range []struct {
		name string
		call func(opts ...grpc.CallOption) error
	}{
		{"forwarded", func(opts ...grpc.CallOption) error {
			_, err := c.GetPointsClient().Count(ctx, &qdrant.CountPoints{CollectionName: "mem"}, opts...)
			return err
		}},
		{"ranked", func(opts ...grpc.CallOption) error {
			_, err := c.GetPointsClient().Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 0})}, opts...)
			return err
		}},
	} {
		t.Run(path.name, func(t *testing.T) {
			answer = codes.ResourceExhausted
			var trailer metadata.MD
			err := path.call(grpc.Trailer(&trailer))
			wantStatus(t, err, codes.ResourceExhausted, limited)
			if got := trailer.Get("retry-after"); !slices.Equal(got, []string{"7"}) {
				t.Fatalf("retry-after trailer = %v, want [7]", got)
			}
			answer = codes.NotFound
			wantStatus(t, path.call(), codes.NotFound, missing)
			if path.name == "forwarded" {
				answer = codes.OK
				var header metadata.MD
				if err := path.call(grpc.Header(&header), grpc.Trailer(&trailer)); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(header.Get("x-upstream"), []string{"h"}) || !slices.Equal(trailer.Get("x-trailer"), []string{"t"}) {
					t.Fatalf("header %v / trailer %v, want the upstream's", header, trailer)
				}
			}
		})
	}
	// The high-level client sees its typed error through the front.
	answer = codes.ResourceExhausted
	_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"})
	var ex *qdrant.QdrantResourceExhaustedError
	if !errors.As(err, &ex) || ex.RetryAfterS != 7 {
		t.Fatalf("go-client error = %v, want a QdrantResourceExhaustedError with retry after 7", err)
	}
}

// Streams of every kind are forwarded: server reflection (a bidi stream)
// through the front lists the upstream's services, several requests on one
// stream.
func TestBidiStreamForwarded(t *testing.T) {
	front := startFront(t, startFake(t, &fakeUpstream{}), Config{})
	conn := dial(t, front)
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	reqs := []*reflectionpb.ServerReflectionRequest{
		{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}},
		{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "qdrant.Points"}},
		{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "no.Such"}},
	}
	var services []string
	for i, req := range reqs {
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			for _, s := range resp.GetListServicesResponse().GetService() {
				services = append(services, s.GetName())
			}
		case 1:
			if len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
				t.Fatalf("no descriptor for qdrant.Points: %v", resp)
			}
		case 2:
			if resp.GetErrorResponse().GetErrorCode() != int32(codes.NotFound) {
				t.Fatalf("unknown symbol answered %v", resp)
			}
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseSend: %v, want io.EOF", err)
	}
	for _, want := range []string{"qdrant.Points", "qdrant.Collections", "qdrant.Qdrant", "grpc.reflection.v1.ServerReflection"} {
		if !slices.Contains(services, want) {
			t.Errorf("services %v lack %s", services, want)
		}
	}
}

// grpc.health.v1 is memrank's own: it answers although the fake upstream
// has no health service.
func TestHealthServedByFront(t *testing.T) {
	up := startFake(t, &fakeUpstream{})
	front := startFront(t, up, Config{})
	resp, err := healthpb.NewHealthClient(dial(t, front)).Check(testCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("front health = %v, %v; want SERVING", resp, err)
	}
	if _, err := healthpb.NewHealthClient(dial(t, up)).Check(testCtx(t), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("the fake upstream has a health service (%v): the test proves nothing", err)
	}
}

// Unknown methods and services reach the upstream, whose Unimplemented
// comes back word for word.
func TestUnknownMethodsReachUpstream(t *testing.T) {
	up := startFake(t, &fakeUpstream{})
	front := startFront(t, up, Config{ranker: &fakeRanker{}})
	for _, method := range []string{"/qdrant.Points/NoSuchMethod", "/qdrant.Points/UpdateBatch", "/no.Such/Service"} {
		t.Run(method, func(t *testing.T) {
			direct := dial(t, up).Invoke(testCtx(t), method, &emptypb.Empty{}, &emptypb.Empty{})
			proxied := dial(t, front).Invoke(testCtx(t), method, &emptypb.Empty{}, &emptypb.Empty{})
			if status.Code(direct) != codes.Unimplemented {
				t.Fatalf("direct call: %v, want the upstream's Unimplemented", direct)
			}
			wantStatus(t, proxied, codes.Unimplemented, status.Convert(direct).Message())
		})
	}
}

// Compressed calls and large messages go through.
func TestGzipAndMessageSize(t *testing.T) {
	db, addr := openStore(t)
	_ = db
	front := startFront(t, addr, Config{})
	c := client(t, front, qdrant.Config{GrpcOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.UseCompressor(gzip.Name), grpc.MaxCallSendMsgSize(64<<20), grpc.MaxCallRecvMsgSize(64<<20))}})
	ctx := testCtx(t)
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "big", VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 6<<20) // over grpc-go's 4 MiB default
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "big", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"text": big})},
	}}); err != nil {
		t.Fatal(err)
	}
	pts, err := c.Get(ctx, &qdrant.GetPoints{CollectionName: "big", Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 || len(pts[0].GetPayload()["text"].GetStringValue()) != len(big) {
		t.Fatalf("Get of a 6 MiB payload through the front: %v", err)
	}

	small := startFront(t, addr, Config{MaxMessageSize: 1 << 20})
	_, err = client(t, small, qdrant.Config{}).Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "big", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"text": big[:2<<20]})},
	}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a 2 MiB message through a 1 MiB front: %v, want ResourceExhausted", err)
	}
}

// Collection and point methods the front does not intercept pass through
// unchanged: what the go-client gets through the front equals what it gets
// from the store directly.
func TestPassThroughUnchanged(t *testing.T) {
	_, addr := openStore(t)
	direct := client(t, addr, qdrant.Config{})
	proxied := client(t, startFront(t, addr, Config{ranker: &fakeRanker{src: sourceFor(t, addr)}}), qdrant.Config{})
	ctx := testCtx(t)
	vc := qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 3, Distance: qdrant.Distance_Cosine})
	if err := proxied.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mem", VectorsConfig: vc}); err != nil {
		t.Fatal(err)
	}
	errDirect := direct.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mem", VectorsConfig: vc})
	errProxied := proxied.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mem", VectorsConfig: vc})
	if status.Code(errDirect) != codes.AlreadyExists || status.Convert(errDirect).Message() != status.Convert(errProxied).Message() || status.Code(errProxied) != codes.AlreadyExists {
		t.Fatalf("second create: direct %v, proxied %v", errDirect, errProxied)
	}

	var points []*qdrant.PointStruct
	for i := range 20 {
		points = append(points, &qdrant.PointStruct{
			Id:      qdrant.NewIDNum(uint64(i + 1)),
			Vectors: qdrant.NewVectors(float32(i), 1, float32(20-i)),
			Payload: qdrant.NewValueMap(map[string]any{"i": i, "f": 3.0, "kind": []string{"a", "b"}[i%2]}),
		})
	}
	res, err := proxied.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: points})
	if err != nil || res.GetStatus() != qdrant.UpdateStatus_Completed {
		t.Fatalf("upsert through the front: %v, %v", res, err)
	}

	info := func(c *qdrant.Client) (any, error) { return c.GetCollectionInfo(ctx, "mem") }
	scroll := func(c *qdrant.Client) (any, error) {
		return c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "mem", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "a")}},
			Limit: qdrant.PtrOf(uint32(5)), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	}
	count := func(c *qdrant.Client) (any, error) { return c.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"}) }
	get := func(c *qdrant.Client) (any, error) {
		return c.Get(ctx, &qdrant.GetPoints{CollectionName: "mem", Ids: []*qdrant.PointId{qdrant.NewIDNum(3), qdrant.NewIDNum(99)}, WithPayload: qdrant.NewWithPayload(true)})
	}
	exists := func(c *qdrant.Client) (any, error) { return c.CollectionExists(ctx, "mem") }
	for name, op := range map[string]func(*qdrant.Client) (any, error){"collection info": info, "scroll": scroll, "count": count, "get": get, "exists": exists} {
		t.Run(name, func(t *testing.T) {
			want, err := op(direct)
			if err != nil {
				t.Fatal(err)
			}
			got, err := op(proxied)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Fatalf("through the front (-direct +front):\n%s", diff)
			}
		})
	}
	if n, _ := direct.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"}); n != 20 {
		t.Fatalf("the store holds %d points after an upsert of 20 through the front", n)
	}
}

// TestUnreachableUpstream: a dead upstream is Unavailable in the REST
// fronts' words, on forwarded and intercepted calls alike; grpc-go's
// transport text, which names the upstream's address, stays in the log.
func TestUnreachableUpstream(t *testing.T) {
	dead := "127.0.0.1:1"
	for _, withRanker := range []bool{false, true} {
		cfg := Config{}
		if withRanker {
			cfg.ranker = &fakeRanker{src: sourceFor(t, dead)}
		}
		c := client(t, startFront(t, dead, cfg), qdrant.Config{})
		ctx := testCtx(t)
		_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "x", Query: qdrant.NewQueryDense([]float32{1})})
		wantStatus(t, err, codes.Unavailable, unreachableText)
		_, err = c.ListCollections(ctx)
		wantStatus(t, err, codes.Unavailable, unreachableText)
	}
}

// TestCallBudget: against an upstream that never answers, a call without a
// deadline gets the front's budget (the long one for a write), in the REST
// fronts' words; a caller's own deadline, longer or shorter, is kept.
func TestCallBudget(t *testing.T) {
	hung := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		<-ss.Context().Done() // answers nothing, ever
		return ss.Context().Err()
	}))
	c := client(t, startFront(t, serve(t, hung), Config{CallTimeout: 100 * time.Millisecond, LongCallTimeout: 2 * time.Second}), qdrant.Config{})
	query := func(ctx context.Context) error {
		_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "x", Query: qdrant.NewQueryDense([]float32{1})})
		return err
	}
	upsert := func(ctx context.Context) error {
		_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "x", Points: []*qdrant.PointStruct{
			{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1})}}})
		return err
	}
	for _, tt := range []struct {
		name     string
		call     func(context.Context) error
		deadline time.Duration // the caller's; 0: none
		min, max time.Duration
	}{
		// Generous upper bounds: they only have to tell the budgets apart
		// on a loaded machine under -race.
		{"read without a deadline", query, 0, 100 * time.Millisecond, 1500 * time.Millisecond},
		{"write without a deadline", upsert, 0, 2 * time.Second, 6 * time.Second},
		{"a longer deadline is kept", query, 800 * time.Millisecond, 800 * time.Millisecond, 1900 * time.Millisecond},
		{"a shorter deadline is kept", upsert, 50 * time.Millisecond, 50 * time.Millisecond, 1500 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			start := time.Now()
			err := tt.call(ctx)
			took := time.Since(start)
			if status.Code(err) != codes.DeadlineExceeded {
				t.Fatalf("error %v, want DeadlineExceeded", err)
			}
			if took < tt.min || took > tt.max {
				t.Errorf("answered after %v, want between %v and %v", took, tt.min, tt.max)
			}
			if tt.deadline == 0 {
				wantStatus(t, err, codes.DeadlineExceeded, timeoutText)
			}
		})
	}
}

// TestSilentStream: a call whose request message never comes is answered
// DeadlineExceeded after FirstMessageTimeout, even with the caller's
// deadline far off, so it cannot hold an admission slot for long.
func TestSilentStream(t *testing.T) {
	_, addr := openStore(t)
	front := startFront(t, addr, Config{FirstMessageTimeout: 200 * time.Millisecond})
	conn := dial(t, front)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, method := range []string{"/qdrant.Points/Upsert", "/qdrant.Points/Query", "/qdrant.Collections/List"} {
		start := time.Now()
		cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method, grpc.ForceCodecV2(rawCodec{}))
		if err != nil {
			t.Fatal(err)
		}
		var f frame
		err = cs.RecvMsg(&f) // sends nothing, waits for the answer
		if status.Code(err) != codes.DeadlineExceeded || time.Since(start) > 5*time.Second {
			t.Errorf("%s: %v after %v", method, err, time.Since(start))
		}
	}
}
