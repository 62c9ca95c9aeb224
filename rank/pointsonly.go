package rank

import "context"

type pointsOnlyKey struct{}

// PointsOnly tells the queries run under ctx that the caller reads only
// Result.Points (a front answering Qdrant's API, which has no place for the
// rest): the Explanations and Dropped of Query's and Search's results are
// left nil, and the per-result explanation work and its allocations are
// skipped (grouped queries still build theirs). The points, their
// order and what counts as accessed are the same as without it.
func PointsOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, pointsOnlyKey{}, true)
}

// explains reports whether queries under ctx build explanations.
func explains(ctx context.Context) bool {
	v, _ := ctx.Value(pointsOnlyKey{}).(bool)
	return !v
}
