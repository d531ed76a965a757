package sim

// Overrun reports whether the engine found the CQ full when it had a CQE
// to write (it raised IBV_EVENT_CQ_ERR then, and writes no more CQEs to
// the CQ): device.CQ.Poll fails with device.ErrCQOverrun once it polled
// what the CQ holds. It takes the fabric's lock, as a Progress does.
func (q *simCQ) Overrun() bool {
	f := Fabric()
	f.Lock()
	defer f.Unlock()
	return q.cq.Overrun()
}
