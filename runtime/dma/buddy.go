package dma

import "math/bits"

// buddy is a binary buddy allocator over offsets, in units of blocks of
// 1<<minShift bytes. tree is a heap (root 1, children 2i and 2i+1, leaves
// nleaves..2*nleaves-1); tree[i] is 1 + the order of the largest free block
// in i's subtree, 0 when there is none. A node at order k is "full" (its
// whole subtree free) when tree[i] == k+1. Descendants of an allocated
// node keep the full values they had, so climbing from a block's first
// leaf meets the allocated node first.
type buddy struct {
	minShift uint
	top      uint     // order of the root
	nleaves  int      // a power of two
	tree     []uint8  // 2*nleaves entries; tree[0] unused
	tags     []uint32 // per leaf: tag of the live allocation starting there, 0 for none
	nextTag  uint32
	live     int
}

// newBuddy manages blocks whole blocks (the ones past it, up to the next
// power of two, are never free).
func newBuddy(blocks int, minShift uint) *buddy {
	top := uint(bits.Len(uint(blocks - 1)))
	n := 1 << top
	b := &buddy{minShift: minShift, top: top, nleaves: n,
		tree: make([]uint8, 2*n), tags: make([]uint32, n)}
	for i := 0; i < blocks; i++ {
		b.tree[n+i] = 1
	}
	for i, order := n-1, uint(0); i >= 1; i-- {
		order = top - uint(bits.Len(uint(i))-1)
		b.tree[i] = merge(b.tree[2*i], b.tree[2*i+1], order)
	}
	return b
}

// merge is a node's value at order k from its children's.
func merge(l, r uint8, k uint) uint8 {
	if uint(l) == k && uint(r) == k { // both children full
		return uint8(k + 1)
	}
	return max(l, r)
}

// alloc takes the lowest free block of the order and returns its offset in
// bytes and its tag.
func (b *buddy) alloc(order uint) (int, uint32, bool) {
	if order > b.top || uint(b.tree[1]) < order+1 {
		return 0, 0, false
	}
	i := 1
	for k := b.top; k > order; k-- {
		i *= 2
		if uint(b.tree[i]) < order+1 {
			i++
		}
	}
	b.tree[i] = 0
	b.fixUp(i, order)
	leaf := i<<order - b.nleaves
	b.nextTag++
	if b.nextTag == 0 {
		b.nextTag = 1
	}
	b.tags[leaf] = b.nextTag
	b.live++
	return leaf << b.minShift, b.nextTag, true
}

// fixUp recomputes the ancestors of node i (at the order).
func (b *buddy) fixUp(i int, order uint) {
	for i, k := i/2, order+1; i >= 1; i, k = i/2, k+1 {
		b.tree[i] = merge(b.tree[2*i], b.tree[2*i+1], k)
	}
}

// free releases the allocation whose first leaf and tag are given; false if
// there is none (freed already, or never handed out).
func (b *buddy) free(leaf int, tag uint32) bool {
	if leaf < 0 || leaf >= b.nleaves || tag == 0 || b.tags[leaf] != tag {
		return false
	}
	i, order := leaf+b.nleaves, uint(0)
	for b.tree[i] != 0 {
		if i == 1 {
			return false
		}
		i, order = i/2, order+1
	}
	if i<<order-b.nleaves != leaf { // defensive: the tag says it starts here
		return false
	}
	b.tags[leaf] = 0
	b.tree[i] = uint8(order + 1)
	b.fixUp(i, order)
	b.live--
	return true
}

// blockSize is the size of the allocation starting at the leaf (0 if none).
func (b *buddy) blockSize(leaf int) int {
	if leaf < 0 || leaf >= b.nleaves || b.tags[leaf] == 0 {
		return 0
	}
	i, order := leaf+b.nleaves, uint(0)
	for b.tree[i] != 0 && i > 1 {
		i, order = i/2, order+1
	}
	return 1 << (order + b.minShift)
}
