package sq

import "fmt"

// outstanding records the work requests a queue starts with (Head-Tail
// of them): where each starts, for the ring room, and its bookkeeping
// slot's work request counter. Like libmlx5's mlx5_wq_overflow, the
// work-request budget is max_post: with Head-Tail == MaxPost the queue is
// full and the next builder fails with sq_room until Completed.
func (q *SQ) outstanding(c *Config) error {
	n := c.Head - c.Tail
	if n > q.n || c.QP.MaxPost > 0 && uint64(n) > uint64(c.QP.MaxPost) {
		return fmt.Errorf("sq: %d work requests outstanding (head %d, tail %d); the queue holds %d WQEBBs and max_post %d",
			n, c.Head, c.Tail, q.n, c.QP.MaxPost)
	}
	starts := c.Starts
	if starts == nil {
		starts = make([]uint32, n)
		for i := range starts {
			starts[i] = c.CurPost - n + uint32(i)
		}
	}
	if uint32(len(starts)) != n {
		return fmt.Errorf("sq: %d starts for %d outstanding work requests", len(starts), n)
	}
	prev := q.n + 1 // distance back from CurPost of the previous start
	for i, s := range starts {
		d := c.CurPost - s
		if d == 0 || d > q.n || d >= prev {
			return fmt.Errorf("sq: outstanding work request %d starts at producer index %d: not after the previous one and within the %d WQEBBs before %d",
				i, s, q.n, c.CurPost)
		}
		prev = d
		w := c.Tail + uint32(i)
		q.start[w&q.mask] = s
		q.Slots[s&q.mask] = Slot{WQEHead: w}
	}
	return nil
}
