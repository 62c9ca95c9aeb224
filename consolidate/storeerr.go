package consolidate

import (
	"errors"
	"fmt"
	"strings"
)

// ErrIndexRequired: the store refused a filter on a field without a
// payload index (Qdrant's strict mode with unindexed filtering off). The
// compare-and-set writes and the compaction filter on fields memrank does
// not index; docs/consolidation.md ("Real Qdrant") lists them.
var ErrIndexRequired = errors.New("consolidate: the store requires payload indexes for the job's filters")

// indexRequiredText is how Qdrant words the strict mode's refusal of a
// filter on an unindexed field ("Index required but not found for ...").
const indexRequiredText = "Index required"

// storeError wraps a store call's error with what the job was doing; a
// strict-mode refusal says what the operator can do about it.
func storeError(op string, err error) error {
	if strings.Contains(err.Error(), indexRequiredText) {
		return fmt.Errorf("%w: %s: create payload indexes on the fields the job filters by, or turn off the collection's "+
			"strict mode (docs/consolidation.md, \"Real Qdrant\"): %w", ErrIndexRequired, op, err)
	}
	return fmt.Errorf("consolidate: %s: %w", op, err)
}
