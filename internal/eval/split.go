package eval

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/zeebo/xxh3"
)

// Part is which side of the split is evaluated.
type Part uint8

// Parts.
const (
	PartAll Part = iota
	PartTrain
	PartTest
)

var partNames = [...]string{"all", "train", "test"}

func (p Part) String() string {
	if int(p) < len(partNames) {
		return partNames[p]
	}
	return fmt.Sprintf("part(%d)", uint8(p))
}

// ParsePart reads all, train or test.
func ParsePart(s string) (Part, error) {
	for i, n := range partNames {
		if s == n {
			return Part(i), nil
		}
	}
	return 0, fmt.Errorf("%q: want all, train or test", s)
}

// TestFraction is the share of the units that are held out.
const TestFraction = 0.2

// Split assigns each unit (a topic, or the id of an item without one) to
// train or test.
type Split struct {
	test map[string]bool
}

// NewSplit splits units 80/20: ordered by a hash of seed and the unit
// (then by the unit, should two hashes collide), the first fifth, rounded
// to the nearest whole unit, are test. The same seed and units always give
// the same split, whatever order the units come in.
func NewSplit(seed int64, units []string) Split {
	type hashed struct {
		h    uint64
		unit string
	}
	seen := map[string]bool{}
	var hs []hashed
	var buf []byte
	for _, u := range units {
		if seen[u] {
			continue
		}
		seen[u] = true
		buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(seed))
		buf = append(buf, u...)
		hs = append(hs, hashed{xxh3.Hash(buf), u})
	}
	slices.SortFunc(hs, func(a, b hashed) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.unit, b.unit))
	})
	n := int(float64(len(hs))*TestFraction + 0.5)
	s := Split{test: make(map[string]bool, n)}
	for _, h := range hs[:n] {
		s.test[h.unit] = true
	}
	return s
}

// Test reports whether unit is held out.
func (s Split) Test(unit string) bool { return s.test[unit] }

// In reports whether unit belongs to part.
func (s Split) In(unit string, part Part) bool {
	switch part {
	case PartTrain:
		return !s.test[unit]
	case PartTest:
		return s.test[unit]
	}
	return true
}

// Unit is the split unit of a memory: its topic, else its id.
func (m *Memory) Unit() string {
	if m.Topic != "" {
		return "topic:" + m.Topic
	}
	return "memory:" + m.ID
}

// Unit is the split unit of a query: its topic, else its id.
func (q *Query) Unit() string {
	if q.Topic != "" {
		return "topic:" + q.Topic
	}
	return "query:" + q.ID
}

// Split splits the set's units with seed.
func (s *Set) Split(seed int64) Split {
	units := make([]string, 0, len(s.Memories)+len(s.Queries))
	for i := range s.Memories {
		units = append(units, s.Memories[i].Unit())
	}
	for i := range s.Queries {
		units = append(units, s.Queries[i].Unit())
	}
	return NewSplit(seed, units)
}
