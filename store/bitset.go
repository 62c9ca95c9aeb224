package store

import "math/bits"

// bitset is a growable set of slot numbers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i uint32) bool {
	w := int(i >> 6)
	return w < len(b) && b[w]&(1<<(i&63)) != 0
}

func (b *bitset) set(i uint32) {
	w := int(i >> 6)
	for w >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[w] |= 1 << (i & 63)
}

func (b bitset) clear(i uint32) {
	if w := int(i >> 6); w < len(b) {
		b[w] &^= 1 << (i & 63)
	}
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// and keeps only members of o.
func (b *bitset) and(o bitset) {
	for i := range *b {
		if i < len(o) {
			(*b)[i] &= o[i]
		} else {
			(*b)[i] = 0
		}
	}
}

// or adds the members of o.
func (b *bitset) or(o bitset) {
	for len(*b) < len(o) {
		*b = append(*b, 0)
	}
	for i, w := range o {
		(*b)[i] |= w
	}
}

// andNot removes the members of o.
func (b *bitset) andNot(o bitset) {
	for i := range *b {
		if i < len(o) {
			(*b)[i] &^= o[i]
		}
	}
}

// each calls fn for every member in ascending order, from start (inclusive)
// to end (exclusive).
func (b bitset) each(start, end uint32, fn func(uint32)) {
	if start >= end {
		return
	}
	for w := int(start >> 6); w < len(b) && uint32(w)<<6 < end; w++ {
		word := b[w]
		if uint32(w)<<6 < start {
			word &^= (1 << (start & 63)) - 1
		}
		for word != 0 {
			i := uint32(w)<<6 | uint32(bits.TrailingZeros64(word))
			if i >= end {
				return
			}
			fn(i)
			word &= word - 1
		}
	}
}

// postings is a sorted list of slots, the inverted-index entry of one value.
type postings []uint32

func (p postings) find(slot uint32) (int, bool) {
	lo, hi := 0, len(p)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p[m] < slot {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(p) && p[lo] == slot
}

func (p postings) add(slot uint32) postings {
	if n := len(p); n == 0 || p[n-1] < slot {
		return append(p, slot) // the common case: new slots are appended
	}
	i, ok := p.find(slot)
	if ok {
		return p
	}
	p = append(p, 0)
	copy(p[i+1:], p[i:])
	p[i] = slot
	return p
}

func (p postings) remove(slot uint32) postings {
	i, ok := p.find(slot)
	if !ok {
		return p
	}
	return append(p[:i], p[i+1:]...)
}
