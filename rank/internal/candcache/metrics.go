package candcache

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

type metrics struct {
	hits, misses, evictions, off metric.Int64Counter
	// The misses' reasons, built once.
	absent, mismatched metric.AddOption
}

func newMetrics(m metric.Meter, c *Cache) (*metrics, error) {
	var out metrics
	var err error
	if out.hits, err = m.Int64Counter("memrank.rank.candidate_cache.hits",
		metric.WithUnit("{candidate}"), metric.WithDescription("Candidates served from the candidate cache (their payload and vector not fetched).")); err != nil {
		return nil, err
	}
	if out.misses, err = m.Int64Counter("memrank.rank.candidate_cache.misses",
		metric.WithUnit("{candidate}"), metric.WithDescription("Candidates fetched from the upstream, by reason: the cache did not hold them (absent) or held a copy that failed the score check (score_mismatch).")); err != nil {
		return nil, err
	}
	out.absent = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", "absent")))
	out.mismatched = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", "score_mismatch")))
	if out.off, err = m.Int64Counter("memrank.rank.candidate_cache.off",
		metric.WithUnit("{query}"), metric.WithDescription("Queries fetched in one call because the cache was off for their collection: most of its cached copies had failed the score check (an upstream scoring quantized vectors without rescoring, say), or a collection change had ended without its outcome.")); err != nil {
		return nil, err
	}
	if out.evictions, err = m.Int64Counter("memrank.rank.candidate_cache.evictions",
		metric.WithUnit("{entry}"), metric.WithDescription("Entries evicted from the candidate cache to stay within its byte bound.")); err != nil {
		return nil, err
	}
	_, err = m.Int64ObservableGauge("memrank.rank.candidate_cache.bytes",
		metric.WithUnit("By"), metric.WithDescription("Estimated bytes held by the candidate cache."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(c.Bytes())
			return nil
		}))
	if err != nil {
		return nil, err
	}
	return &out, nil
}
