package vectors

import (
	"fmt"
	"strings"
)

// Bounds of what a vector may describe: what libmlx5 and the device
// format allow, so that a hostile file cannot make the replay allocate
// or index without limit.
const (
	// MaxFileSize bounds a vector file (the shared ones are under 300 KB).
	MaxFileSize = 16 << 20

	// MaxRingWQEBBs bounds sq.wqebb_count. libmlx5 refuses a send queue
	// of more than the device's max_send_wqebb WQEBBs
	// (providers/mlx5/verbs.c, mlx5_calc_sq_size), which the kernel sets
	// to 1 << log_max_qp_sz (2^15 on ConnectX devices); the 16-bit WQE
	// index of the control segment and of the doorbell record cannot
	// tell more than 2^16 WQEBBs apart on any device.
	MaxRingWQEBBs = 1 << 16

	// MaxWQEBytes bounds a WQE: the control segment's ds field has 6 bits
	// (mlx5dv.h, qpn_ds), so a WQE is at most 63 16-byte units, within 16
	// WQEBBs; devices report max_sq_desc_sz 1024 (the vectors' setup).
	MaxWQEBytes = 1024

	// MaxBFBufSize bounds bf.buf_size: a UAR's BlueFlame registers start
	// at MLX5_BF_OFFSET (0x800) of its MLX5_ADAPTER_PAGE_SIZE (4096) page,
	// two of them (MLX5_NUM_NON_FP_BFREGS_PER_UAR), each bf_reg_size =
	// 2 * buf_size bytes (providers/mlx5/mlx5.h, mlx5.c).
	MaxBFBufSize = 512

	// MaxMkeyEntries bounds an mkey's max_entries, a uint16_t in
	// struct mlx5dv_mkey_init_attr.
	MaxMkeyEntries = 1<<16 - 1
)

// Check checks that a file has cases and that each can be replayed in
// full (Case.Check).
func (f *File) Check() error {
	if len(f.Cases) == 0 {
		return fmt.Errorf("no cases: a vector file must hold at least one")
	}
	seen := map[string]bool{}
	for i := range f.Cases {
		c := &f.Cases[i]
		if err := c.Check(); err != nil {
			if c.ID == "" {
				return fmt.Errorf("case %d: %w", i, err)
			}
			return fmt.Errorf("case %q: %w", c.ID, err)
		}
		if seen[c.ID] {
			return fmt.Errorf("case %d: id %q repeats an earlier case's", i, c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// Check checks that a case compares something and that every size, index
// and buffer it gives is within the bounds above and within the case:
// the replay indexes nothing it has not checked here.
func (c *Case) Check() error {
	if c.ID == "" {
		return fmt.Errorf("id: missing")
	}
	if len(c.Calls) == 0 {
		return fmt.Errorf("calls: none; a case must make calls and compare their result")
	}
	if err := c.Setup.check("setup"); err != nil {
		return err
	}
	if c.SetupNewest != nil {
		if err := c.SetupNewest.check("setup_at_newest_commit"); err != nil {
			return err
		}
	}
	if err := c.Result.check("result", c); err != nil {
		return err
	}
	if c.AtNewest != nil {
		return c.AtNewest.check("result_at_newest_commit", c)
	}
	return nil
}

func (s *Setup) check(where string) error {
	q := &s.SQ
	n := q.WQEBBCount
	switch {
	case s.QPType != "RC" && !s.DCI():
		return fmt.Errorf("%s.qp_type: %q; the replay knows RC and DCI", where, s.QPType)
	case n < 1 || n > MaxRingWQEBBs || n&(n-1) != 0:
		return fmt.Errorf("%s.sq.wqebb_count: %d; a ring is a power of two of at most %d WQEBBs", where, n, MaxRingWQEBBs)
	case q.WQEBBSize != 64:
		return fmt.Errorf("%s.sq.wqebb_size: %d, not 64", where, q.WQEBBSize)
	case q.MaxWQESize < 0 || q.MaxWQESize > MaxWQEBytes:
		return fmt.Errorf("%s.sq.max_wqe_size: %d; a WQE is at most %d bytes", where, q.MaxWQESize, MaxWQEBytes)
	case s.Device.MaxSQDescSz < 0 || s.Device.MaxSQDescSz > 0 && q.MaxWQESize > s.Device.MaxSQDescSz:
		// libmlx5 refuses a QP whose WQE exceeds it (verbs.c, mlx5_calc_sq_size).
		return fmt.Errorf("%s.sq.max_wqe_size: %d, more than device_context.max_sq_desc_sz %d", where, q.MaxWQESize, s.Device.MaxSQDescSz)
	case q.MaxPost < 1 || q.MaxPost > n:
		return fmt.Errorf("%s.sq.max_post: %d; between 1 and the ring's %d WQEBBs", where, q.MaxPost, n)
	case q.MaxGS < 0 || q.MaxGS > MaxWQEBytes/16:
		return fmt.Errorf("%s.sq.max_gs: %d; at most %d fit a WQE", where, q.MaxGS, MaxWQEBytes/16)
	case q.MaxInlineData < 0 || q.MaxInlineData > MaxWQEBytes:
		return fmt.Errorf("%s.sq.max_inline_data: %d; at most %d", where, q.MaxInlineData, MaxWQEBytes)
	case q.InitialHead-q.InitialTail > uint32(q.MaxPost):
		return fmt.Errorf("%s.sq.initial_head %d, initial_tail %d: more work requests outstanding than max_post %d",
			where, q.InitialHead, q.InitialTail, q.MaxPost)
	case s.BF.UUARN < 0 || s.BF.BufSize < 0 || s.BF.BufSize > MaxBFBufSize || s.BF.BufSize%64 != 0:
		return fmt.Errorf("%s.bf: uuarn %d, buf_size %d; buf_size is a multiple of 64 of at most %d", where, s.BF.UUARN, s.BF.BufSize, MaxBFBufSize)
	}
	names := map[string]string{}
	name := func(kind, n string) error {
		if n == "" {
			return fmt.Errorf("%s.%s: an object without a name", where, kind)
		}
		if k, ok := names[kind+" "+n]; ok {
			return fmt.Errorf("%s.%s: two objects named %q (%s)", where, kind, n, k)
		}
		names[kind+" "+n] = kind
		return nil
	}
	for _, m := range s.Mkeys {
		if err := name("mkeys", m.Name); err != nil {
			return err
		}
		if m.MaxEntries < 0 || m.MaxEntries > MaxMkeyEntries {
			return fmt.Errorf("%s.mkeys: %s: max_entries %d; at most %d", where, m.Name, m.MaxEntries, MaxMkeyEntries)
		}
	}
	for _, a := range s.AHs {
		if err := name("ahs", a.Name); err != nil {
			return err
		}
	}
	for _, d := range s.DEKs {
		if err := name("deks", d.Name); err != nil {
			return err
		}
	}
	for kind, l := range map[string][]Args{"mrs": s.MRs, "mws": s.MWs} {
		for i, o := range l {
			n, err := o.String("name")
			if err != nil {
				return fmt.Errorf("%s.%s[%d].name: %v", where, kind, i, err)
			}
			if err := name(kind, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Result) check(where string, c *Case) error {
	if len(r.Batches) == 0 {
		return fmt.Errorf("%s.batches: none; a case must compare at least one batch", where)
	}
	ring := c.Setup.SQ.WQEBBCount
	bf := max(2*c.Setup.BF.BufSize, 64) // qmem.Plain's BlueFlame window
	prev := -1
	for i := range r.Batches {
		b := &r.Batches[i]
		at := fmt.Sprintf("%s.batches[%d]", where, i)
		s, e := b.Calls[0], b.Calls[1]
		switch {
		case s <= prev || e < s || e >= len(c.Calls):
			return fmt.Errorf("%s.calls: [%d, %d]: not calls of the case (0 to %d) after the previous batch's", at, s, e, len(c.Calls)-1)
		case c.Calls[s].Fn != "ibv_wr_start":
			return fmt.Errorf("%s.calls: call %d is %s, not ibv_wr_start", at, s, c.Calls[s].Fn)
		case b.EndedBy != "ibv_wr_complete" && b.EndedBy != "ibv_wr_abort":
			return fmt.Errorf("%s.ended_by: %q, not ibv_wr_complete or ibv_wr_abort", at, b.EndedBy)
		case c.Calls[e].Fn != b.EndedBy:
			return fmt.Errorf("%s.calls: call %d is %s, not %s (ended_by)", at, e, c.Calls[e].Fn, b.EndedBy)
		}
		prev = e
		for j := range b.WQEs {
			if err := b.WQEs[j].check(fmt.Sprintf("%s.wqes[%d]", at, j), ring); err != nil {
				return err
			}
		}
		if len(b.BFWrites) > 1 {
			return fmt.Errorf("%s.bf_writes: %d writes; a batch makes at most one", at, len(b.BFWrites))
		}
		for j, w := range b.BFWrites {
			wat := fmt.Sprintf("%s.bf_writes[%d]", at, j)
			if w.Offset < 0 || w.Length < 0 || w.Offset+w.Length > bf {
				return fmt.Errorf("%s: %d bytes at offset %d: outside the %d-byte BlueFlame window", wat, w.Length, w.Offset, bf)
			}
			if err := checkHex(wat+".hex", w.Hex, w.Length, w.Unwritten); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *WQE) check(at string, ring int) error {
	if len(w.Slots) == 0 || len(w.Slots) > MaxWQEBytes/64 {
		return fmt.Errorf("%s.slots: %d slots; a WQE takes 1 to %d", at, len(w.Slots), MaxWQEBytes/64)
	}
	for _, s := range w.Slots {
		if s < 0 || s >= ring {
			return fmt.Errorf("%s.slots: slot %d is outside the ring of %d WQEBBs", at, s, ring)
		}
	}
	return checkHex(at+".hex", w.Hex, 64*len(w.Slots), w.Unwritten)
}

// checkHex checks a hex buffer of n bytes and its unwritten ranges.
func checkHex(at, s string, n int, unwritten []Range) error {
	if len(s) != 2*n {
		return fmt.Errorf("%s: %d hex digits, want %d (%d bytes)", at, len(s), 2*n, n)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) }); i >= 0 {
		return fmt.Errorf("%s: not a hex digit at offset %d", at, i)
	}
	for _, u := range unwritten {
		if u[0] < 0 || u[0] > u[1] || u[1] > n {
			return fmt.Errorf("%s: unwritten range [%d, %d) outside its %d bytes", at, u[0], u[1], n)
		}
	}
	return nil
}
