package rank

import "context"

type uncountedKey struct{}

// WithoutAccess asks the queries run under ctx not to count what they
// return as accessed. A person looking at the ranking (the explain page,
// memrank explain) is not the agent using a memory: counting their reads
// would raise the access boost of whatever they inspect, and so change the
// ranking they came to look at.
func WithoutAccess(ctx context.Context) context.Context {
	return context.WithValue(ctx, uncountedKey{}, true)
}

// CountsAccess reports whether the queries run under ctx count what they
// return as accessed: true unless ctx came from WithoutAccess.
func CountsAccess(ctx context.Context) bool {
	v, _ := ctx.Value(uncountedKey{}).(bool)
	return !v
}
