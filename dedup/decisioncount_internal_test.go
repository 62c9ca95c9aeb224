package dedup

import (
	"fmt"
	"testing"
)

// TestDecisionCountsBounded: past maxCountedCollections, new names go
// uncounted while the counted ones keep counting.
func TestDecisionCountsBounded(t *testing.T) {
	var d decisionCounts
	for i := range maxCountedCollections + 5 {
		d.add(fmt.Sprintf("c%d", i), DecisionInserted)
	}
	if len(d.by) != maxCountedCollections {
		t.Fatalf("%d collections counted, want the bound %d", len(d.by), maxCountedCollections)
	}
	d.add("c0", DecisionInserted)
	if got := d.of("c0")["inserted"]; got != 2 {
		t.Errorf("c0 inserted = %d, want 2", got)
	}
	if got := d.of(fmt.Sprintf("c%d", maxCountedCollections))["inserted"]; got != 0 {
		t.Errorf("a collection past the bound counted %d, want 0", got)
	}
}
