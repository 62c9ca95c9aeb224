package memory

import (
	"sync"
	"sync/atomic"

	"github.com/memrank/memrank/scoring"
)

// keyTable finds the field of a payload key. Decode looks up every key of
// every candidate's payload, and Go's string-keyed map (AES hashing of the
// whole key) was a third of decode time; this table hashes only the length
// and three bytes, then confirms with one string comparison.
type keyTable struct {
	slots [64]keySlot
}

type keySlot struct {
	key   string
	field Field
	used  bool
}

func keyHash(k string) uint32 {
	n := len(k)
	if n == 0 {
		return 0
	}
	return uint32(n)*31 + uint32(k[0])*7 + uint32(k[n-1])*3 + uint32(k[n/2])
}

// newKeyTable places the keys with linear probing; 64 slots for at most
// numFields keys keeps probe chains short.
func newKeyTable(keys [numFields]string) keyTable {
	var t keyTable
	for f, k := range keys {
		i := keyHash(k) % uint32(len(t.slots))
		for t.slots[i].used {
			i = (i + 1) % uint32(len(t.slots))
		}
		t.slots[i] = keySlot{key: k, field: Field(f), used: true}
	}
	return t
}

func (t *keyTable) lookup(k string) (Field, bool) {
	i := keyHash(k) % uint32(len(t.slots))
	for t.slots[i].used {
		if t.slots[i].key == k {
			return t.slots[i].field, true
		}
		i = (i + 1) % uint32(len(t.slots))
	}
	return 0, false
}

// modelCache remembers the table quality of extractor model names: a
// collection has a handful of models, and matching the pattern list for every
// candidate of every read was a sixth of decode-and-score time. It stops
// growing at maxModels names, past which lookups fall through to the patterns.
type modelCache struct {
	m    sync.Map // model name -> float64
	size atomic.Int32
}

const maxModels = 1024

func (c *Codec) extractor(m *Memory) float64 {
	if m.HasLogprob {
		return scoring.ExtractorFromLogprob(m.ExtractorLogprob)
	}
	if q, ok := c.models.m.Load(m.ExtractorModel); ok {
		return q.(float64)
	}
	q := c.params.ExtractorFromModel(m.ExtractorModel)
	if c.models.size.Load() < maxModels {
		if _, loaded := c.models.m.LoadOrStore(m.ExtractorModel, q); !loaded {
			c.models.size.Add(1)
		}
	}
	return q
}
