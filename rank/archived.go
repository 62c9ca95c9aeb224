package rank

import "context"

type archivedKey struct{}

// WithArchived asks the queries run under ctx to return archived memories
// too (docs/consolidation.md): memories stored as not retrievable (a
// person's or a review's archive, another writer's exclusion) are kept in
// the ranking instead of excluded, each with its Explanation.Archived
// saying why. Age archives nothing, so nothing else changes. Superseded
// memories stay out, and reading an archived memory this way does not
// count as an access (it would keep alive what was let go).
func WithArchived(ctx context.Context) context.Context {
	return context.WithValue(ctx, archivedKey{}, true)
}

func includesArchived(ctx context.Context) bool {
	v, _ := ctx.Value(archivedKey{}).(bool)
	return v
}
