package consolidate

import "context"

// Due is the scheduler's due check, for the tests.
func (s *Scheduler) Due(ctx context.Context, c string) (bool, error) { return s.due(ctx, c) }
