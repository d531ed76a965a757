package cqreplay

import (
	"fmt"
)

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Check checks that a case compares something and that every size, index
// and buffer it names is within the bounds and within the case, so that
// the replay indexes nothing it has not checked.
func (c *Case) Check() error {
	if c.ID == "" {
		return fmt.Errorf("id: missing")
	}
	if len(c.Calls) == 0 {
		return fmt.Errorf("calls: none; a case must make calls and compare their result")
	}
	s := &c.Setup
	if s.Context.CQEVersion != 0 && s.Context.CQEVersion != 1 {
		return fmt.Errorf("setup.context.cqe_version: %d (0 or 1)", s.Context.CQEVersion)
	}
	q := &s.CQ
	if !pow2(q.NCQE) || q.NCQE < 2 || q.NCQE > MaxCQEs || (q.CQESz != 64 && q.CQESz != 128) {
		return fmt.Errorf("setup.cq: %d entries of %d bytes (a power of two from 2 to %d, of 64 or 128 bytes)", q.NCQE, q.CQESz, MaxCQEs)
	}
	if _, err := decodeHex("setup.cq_buffer_hex", s.CQBufferHex, q.NCQE*q.CQESz); err != nil {
		return err
	}
	if _, err := decodeHex("setup.cq.initial_dbrec_hex", q.InitialDBRecHex, 8); err != nil {
		return err
	}
	if len(s.QPs) > MaxObjects || len(s.SRQs) > MaxObjects || len(s.Mkeys) > MaxObjects || len(s.ScatterBuffers) > MaxObjects {
		return fmt.Errorf("setup: more than %d QPs, SRQs, mkeys or scatter buffers", MaxObjects)
	}
	for i := range s.QPs {
		if err := s.QPs[i].check(fmt.Sprintf("setup.qps[%d]", i), s); err != nil {
			return err
		}
	}
	for i := range s.SRQs {
		if err := s.SRQs[i].check(fmt.Sprintf("setup.srqs[%d]", i)); err != nil {
			return err
		}
	}
	for i, b := range s.ScatterBuffers {
		if b.Length <= 0 || b.Length > MaxBuffer || b.Addr+uint64(b.Length) < b.Addr {
			return fmt.Errorf("setup.scatter_buffers[%d]: length %d (1 to %d bytes, not wrapping)", i, b.Length, MaxBuffer)
		}
	}
	compares := false
	for i := range c.Calls {
		if err := c.Calls[i].check(fmt.Sprintf("calls[%d]", i), q.NCQE*q.CQESz, q.CQESz); err != nil {
			return err
		}
		compares = compares || c.Calls[i].After != nil
	}
	if !compares {
		return fmt.Errorf("calls: only hardware writes; a case must make a call and compare its result")
	}
	return nil
}

func (p *QP) check(at string, s *Setup) error {
	if p.Name == "" {
		return fmt.Errorf("%s.name: missing", at)
	}
	if p.SRQ != "" && findSRQ(s, p.SRQ) < 0 {
		return fmt.Errorf("%s.srq: no SRQ %q in the setup", at, p.SRQ)
	}
	if q := p.SQ; q != nil {
		if !pow2(q.WQECnt) || q.WQECnt > MaxQueue {
			return fmt.Errorf("%s.sq.wqe_cnt: %d (a power of two up to %d)", at, q.WQECnt, MaxQueue)
		}
		for j, sl := range q.Slots {
			if sl.Slot < 0 || sl.Slot >= q.WQECnt {
				return fmt.Errorf("%s.sq.slots[%d].slot: %d outside the %d-slot ring", at, j, sl.Slot, q.WQECnt)
			}
		}
		for j, w := range q.WQEs {
			for k, sl := range w.Slots {
				if sl.Slot < 0 || sl.Slot >= q.WQECnt {
					return fmt.Errorf("%s.sq.wqes[%d].slots[%d].slot: %d outside the ring", at, j, k, sl.Slot)
				}
				if _, err := decodeHex(fmt.Sprintf("%s.sq.wqes[%d].slots[%d].hex", at, j, k), sl.Hex, 64); err != nil {
					return err
				}
			}
		}
	}
	if q := p.RQ; q != nil && q.WQECnt != 0 {
		if !pow2(q.WQECnt) || q.WQECnt > MaxQueue || q.WQEShift < 4 || q.WQEShift > MaxWQEShift {
			return fmt.Errorf("%s.rq: %d WQEs of shift %d (a power of two up to %d; shift 4 to %d)", at, q.WQECnt, q.WQEShift, MaxQueue, MaxWQEShift)
		}
		if len(q.WRID) != q.WQECnt {
			return fmt.Errorf("%s.rq.wrid: %d entries for %d WQEs", at, len(q.WRID), q.WQECnt)
		}
		for j, w := range q.WQEs {
			if w.Slot < 0 || w.Slot >= q.WQECnt {
				return fmt.Errorf("%s.rq.wqes[%d].slot: %d outside the ring", at, j, w.Slot)
			}
			if _, err := decodeHex(fmt.Sprintf("%s.rq.wqes[%d].hex", at, j), w.Hex, 1<<q.WQEShift); err != nil {
				return err
			}
		}
	}
	return nil
}

func (q *SRQ) check(at string) error {
	if q.Name == "" {
		return fmt.Errorf("%s.name: missing", at)
	}
	if q.Max <= 0 || q.Max > MaxQueue || q.WQEShift < 5 || q.WQEShift > MaxWQEShift || q.MaxGS < 0 || q.MaxGS > 1<<(q.WQEShift-4)-1 {
		return fmt.Errorf("%s: %d WQEs of shift %d with %d SGEs (up to %d WQEs, shift 5 to %d)", at, q.Max, q.WQEShift, q.MaxGS, MaxQueue, MaxWQEShift)
	}
	if q.Head < 0 || q.Head >= q.Max || q.Tail < 0 || q.Tail >= q.Max || len(q.WRID) != q.Max {
		return fmt.Errorf("%s: head %d, tail %d or %d wr_ids do not fit %d WQEs", at, q.Head, q.Tail, len(q.WRID), q.Max)
	}
	if q.WaitqHead != -1 {
		return fmt.Errorf("%s.waitq_head: %d; the replay has no SRQ wait queue (-1)", at, q.WaitqHead)
	}
	_, err := decodeHex(at+".buffer_hex", q.BufferHex, q.Max<<q.WQEShift)
	return err
}

func (c *Call) check(at string, cqBytes, cqeSz int) error {
	switch c.Fn {
	case "ibv_poll_cq":
		if c.NumEntries < 0 || c.NumEntries > MaxEntries || len(c.WC) > c.NumEntries {
			return fmt.Errorf("%s: num_entries %d (0 to %d) with %d wc entries", at, c.NumEntries, MaxEntries, len(c.WC))
		}
	case "ibv_start_poll", "ibv_next_poll", "ibv_end_poll", "mlx5dv_mkey_check":
	case "(hardware) write CQE":
		if c.Slot < 0 || (c.Slot+1)*cqeSz > cqBytes {
			return fmt.Errorf("%s.slot: %d outside the CQ", at, c.Slot)
		}
		if _, err := decodeHex(at+".hex", c.Hex, cqeSz); err != nil {
			return err
		}
		return nil
	default:
		return fmt.Errorf("%s.fn: %q is not a call the replay knows", at, c.Fn)
	}
	if c.After == nil {
		return fmt.Errorf("%s.after: missing; every call compares the state after it", at)
	}
	if _, err := decodeHex(at+".after.dbrec_hex", c.After.DBRecHex, 8); err != nil {
		return err
	}
	if c.Fn != "ibv_end_poll" && len(c.Returned) == 0 {
		return fmt.Errorf("%s.returned: missing", at)
	}
	return nil
}

func findSRQ(s *Setup, name string) int {
	for i := range s.SRQs {
		if s.SRQs[i].Name == name {
			return i
		}
	}
	return -1
}
