package consolidate

import (
	"cmp"
	"container/heap"
	"slices"
)

// queueOrder is the review queue's order: least recently used first, then
// by id, so that equal idle times list the same way every time.
func queueOrder(a, b ReviewItem) int {
	return cmp.Or(-cmp.Compare(a.IdleDays, b.IdleDays), cmp.Compare(a.ID, b.ID))
}

// oldest keeps the first limit review items in queueOrder among those
// offered, in O(limit) memory: a heap whose root is the last one kept, so
// a better item replaces it.
type oldest struct {
	limit int
	items []ReviewItem
}

func (o *oldest) offer(it ReviewItem) {
	if len(o.items) < o.limit {
		heap.Push(o, it)
		return
	}
	if queueOrder(it, o.items[0]) < 0 {
		o.items[0] = it
		heap.Fix(o, 0)
	}
}

// sorted returns the items kept, in queueOrder (never nil: the JSON answer
// is a list).
func (o *oldest) sorted() []ReviewItem {
	out := append([]ReviewItem{}, o.items...)
	slices.SortFunc(out, queueOrder)
	return out
}

// heap.Interface, a max-heap in queueOrder: the root is the worst item kept.
func (o *oldest) Len() int           { return len(o.items) }
func (o *oldest) Less(i, k int) bool { return queueOrder(o.items[i], o.items[k]) > 0 }
func (o *oldest) Swap(i, k int)      { o.items[i], o.items[k] = o.items[k], o.items[i] }
func (o *oldest) Push(x any)         { o.items = append(o.items, x.(ReviewItem)) }
func (o *oldest) Pop() any {
	it := o.items[len(o.items)-1]
	o.items = o.items[:len(o.items)-1]
	return it
}
