package grpcfront

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/rank"
)

// The intercepted methods. Each handler decodes the request and answers it
// with the ranker's points (Qdrant's replies have no place for its
// explanations, so the ranker is told not to build them); a request that does not decode is forwarded as it came,
// so the upstream answers it in its own words (the status Qdrant gives).
var intercepted = map[string]func(*call, []byte) ([]byte, error){
	"/qdrant.Points/Query":        decoded((*call).query),
	"/qdrant.Points/QueryBatch":   decoded((*call).queryBatch),
	"/qdrant.Points/QueryGroups":  decoded((*call).queryGroups),
	"/qdrant.Points/Search":       decoded((*call).search),
	"/qdrant.Points/SearchBatch":  decoded((*call).searchBatch),
	"/qdrant.Points/SearchGroups": decoded((*call).searchGroups),
}

// decoded adapts an answer on a typed request to raw bytes.
func decoded[T any, PT interface {
	*T
	proto.Message
}](answer func(*call, PT, []byte) ([]byte, error)) func(*call, []byte) ([]byte, error) {
	return func(c *call, in []byte) ([]byte, error) {
		req := PT(new(T))
		if err := proto.Unmarshal(in, req); err != nil {
			return c.forwardUnary(c.method, in)
		}
		return answer(c, req, in)
	}
}

// reranks reports whether the ranker answers for a collection.
func (c *call) reranks(collection string) bool {
	return c.f.ranker != nil && c.f.ranker.Reranks(c.ctx, collection)
}

// forward sends a decoded request upstream: its original bytes when the
// front did not change it, else re-encoded.
func (c *call) forward(req proto.Message, raw []byte) ([]byte, error) {
	if raw == nil || c.scoped {
		b, err := proto.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("grpcfront: encode %s: %w", c.method, err)
		}
		raw = b
	}
	return c.forwardUnary(c.method, raw)
}

// ranked notes how the ranker answered, for metrics.
func (c *call) ranked(reranked bool) {
	if reranked {
		c.route = routeReranked
	} else if c.route != routeReranked {
		c.route = routePassThrough
	}
}

func encode(m proto.Message) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("grpcfront: encode response: %w", err)
	}
	return b, nil
}

func seconds(since time.Time) float64 { return time.Since(since).Seconds() }

func (c *call) query(req *qdrant.QueryPoints, raw []byte) ([]byte, error) {
	if !c.reranks(req.GetCollectionName()) {
		return c.forward(req, raw)
	}
	start := time.Now()
	res, err := c.f.ranker.Query(rank.PointsOnly(c.ctx), req)
	if err != nil {
		return nil, err
	}
	c.ranked(res.Reranked)
	return qdrantwire.EncodeScoredWire(res.Points, res.PayloadWire, seconds(start))
}

func (c *call) search(req *qdrant.SearchPoints, raw []byte) ([]byte, error) {
	if !c.reranks(req.GetCollectionName()) {
		return c.forward(req, raw)
	}
	start := time.Now()
	res, err := c.f.ranker.Search(rank.PointsOnly(c.ctx), req)
	if err != nil {
		return nil, err
	}
	c.ranked(res.Reranked)
	return qdrantwire.EncodeScoredWire(res.Points, res.PayloadWire, seconds(start))
}

func (c *call) queryGroups(req *qdrant.QueryPointGroups, raw []byte) ([]byte, error) {
	if !c.reranks(req.GetCollectionName()) {
		return c.forward(req, raw)
	}
	start := time.Now()
	res, err := c.f.ranker.QueryGroups(rank.PointsOnly(c.ctx), req)
	if err != nil {
		return nil, err
	}
	c.ranked(res.Reranked)
	return encode(&qdrant.QueryGroupsResponse{Result: &qdrant.GroupsResult{Groups: res.Groups}, Time: seconds(start)})
}

func (c *call) searchGroups(req *qdrant.SearchPointGroups, raw []byte) ([]byte, error) {
	if !c.reranks(req.GetCollectionName()) {
		return c.forward(req, raw)
	}
	start := time.Now()
	res, err := c.f.ranker.QueryGroups(rank.PointsOnly(c.ctx), rank.SearchGroupsToQueryGroups(req))
	if err != nil {
		return nil, err
	}
	c.ranked(res.Reranked)
	return encode(&qdrant.SearchGroupsResponse{Result: &qdrant.GroupsResult{Groups: res.Groups}, Time: seconds(start)})
}

// batchNamesValid reports whether every sub-request names a collection as
// Qdrant requires (1 to 255 characters, although it searches the batch's
// collection): a batch that fails this is forwarded whole, so the caller
// gets the upstream's own validation error with its field path.
func batchNamesValid(names func(i int) string, n int) bool {
	for i := range n {
		if l := len(names(i)); l < 1 || l > 255 {
			return false
		}
	}
	return true
}

func (c *call) queryBatch(req *qdrant.QueryBatchPoints, raw []byte) ([]byte, error) {
	subs := req.GetQueryPoints()
	if !c.reranks(req.GetCollectionName()) || !batchNamesValid(func(i int) string { return subs[i].GetCollectionName() }, len(subs)) {
		return c.forward(req, raw)
	}
	start := time.Now()
	points, wires, err := c.rankBatch(len(subs), func(ctx context.Context, i int) (*rank.Result, error) {
		sub := subs[i]
		sub.CollectionName = req.GetCollectionName()
		if sub.ReadConsistency == nil {
			sub.ReadConsistency = req.ReadConsistency
		}
		if sub.Timeout == nil {
			sub.Timeout = req.Timeout
		}
		return c.f.ranker.Query(ctx, sub)
	})
	if err != nil {
		return nil, err
	}
	return qdrantwire.EncodeBatchWire(points, wires, seconds(start))
}

func (c *call) searchBatch(req *qdrant.SearchBatchPoints, raw []byte) ([]byte, error) {
	subs := req.GetSearchPoints()
	if !c.reranks(req.GetCollectionName()) || !batchNamesValid(func(i int) string { return subs[i].GetCollectionName() }, len(subs)) {
		return c.forward(req, raw)
	}
	start := time.Now()
	points, wires, err := c.rankBatch(len(subs), func(ctx context.Context, i int) (*rank.Result, error) {
		sub := subs[i]
		sub.CollectionName = req.GetCollectionName()
		if sub.ReadConsistency == nil {
			sub.ReadConsistency = req.ReadConsistency
		}
		if sub.Timeout == nil {
			sub.Timeout = req.Timeout
		}
		return c.f.ranker.Search(ctx, sub)
	})
	if err != nil {
		return nil, err
	}
	return qdrantwire.EncodeBatchWire(points, wires, seconds(start))
}

// rankBatch runs the n sub-requests of a batch through run, a few at a time,
// and collects their points, and the payload bytes the ranker kept for
// them, in order; the call counts as re-ranked when any sub-request was.
func (c *call) rankBatch(n int, run func(ctx context.Context, i int) (*rank.Result, error)) ([][]*qdrant.ScoredPoint, [][][]byte, error) {
	points, wires := make([][]*qdrant.ScoredPoint, n), make([][][]byte, n)
	var reranked atomic.Bool
	err := c.each(n, func(ctx context.Context, i int) error {
		res, err := run(rank.PointsOnly(ctx), i)
		if err != nil {
			return err
		}
		if res.Reranked {
			reranked.Store(true)
		}
		points[i], wires[i] = res.Points, res.PayloadWire
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	c.ranked(reranked.Load())
	return points, wires, nil
}

// each runs fn for 0..n-1, at most the front's batch concurrency at once,
// and returns the first error in time (the others are cancelled: a batch
// answers whole or not at all, as Qdrant's does). Every goroutine it starts
// has ended when it returns (errgroup's Wait).
func (c *call) each(n int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	g, ctx := errgroup.WithContext(c.ctx)
	g.SetLimit(c.f.batch)
	for i := range n {
		// Go waits for a free slot; once a sub-request has failed or the
		// caller has gone, the rest are not started.
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(ctx, i)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// No sub-request failed, but a caller that has gone may have left some
	// unstarted: the batch is not whole.
	return c.ctx.Err()
}
