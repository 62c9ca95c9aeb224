package dedup

// Judging is tier 3: the judge behind a verdict cache, a per-collection
// budget, a timeout and in-flight coalescing. (Being written.)
type Judging struct{}
