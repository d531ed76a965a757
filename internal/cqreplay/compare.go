package cqreplay

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
)

// field compares one observed value with the vector's: a null (a field
// libmlx5 did not write) must be 0, the value the poller defines for it.
func field(name string, want Value, got uint64) error {
	n, ok, err := num(want)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !ok {
		if got != 0 {
			return fmt.Errorf("%s: %#x, want 0 (libmlx5 leaves it unwritten; the poller defines 0)", name, got)
		}
		return nil
	}
	if uint64(n) != got {
		return fmt.Errorf("%s: %#x, want %#x", name, got, uint64(n))
	}
	return nil
}

// union returns ibv_wc's imm_data / invalidated_rkey union as the vectors
// give it, recorded on x86-64: imm_data is be32toh of the four bytes,
// invalidated_rkey the same bytes read in host (little-endian) order. The
// poller's Imm is the immediate as a number, or the rkey with WITH_INV.
func union(imm uint32, inv bool) (immData, rkey uint32) {
	if inv {
		return bits.ReverseBytes32(imm), imm
	}
	return imm, bits.ReverseBytes32(imm)
}

func (w *world) poll(c *Call) error {
	wc := make([]cq.WC, c.NumEntries)
	n, err := w.cq.Poll(wc)
	ret, _, rerr := num(c.Returned)
	if rerr != nil {
		return fmt.Errorf("returned: %w", rerr)
	}
	switch {
	case ret == -2:
		if !errors.As(err, &errUnknown) {
			return fmt.Errorf("returned %d, %v; want CQ_POLL_ERR (an unknown CQE)", n, err)
		}
		if n < len(c.WC) && !touched(c.WC[n]) {
			return fmt.Errorf("stopped after %d completions; libmlx5 did not reach wc[%d]", n, n)
		}
		for i := n + 1; i < len(c.WC); i++ {
			if touched(c.WC[i]) {
				return fmt.Errorf("stopped at wc[%d] (%v); libmlx5 went on to wc[%d]", n, err, i)
			}
		}
	case err != nil || int64(n) != ret:
		return fmt.Errorf("returned %d, %v; want %d", n, err, ret)
	}
	for i := 0; i < n && i < len(c.WC); i++ {
		if err := compareWC(&wc[i], c.WC[i]); err != nil {
			return fmt.Errorf("wc[%d].%w", i, err)
		}
	}
	return nil
}

func touched(m map[string]Value) bool { return string(m["touched"]) == "true" }

func compareWC(g *cq.WC, want map[string]Value) error {
	for _, f := range []struct {
		name string
		got  uint64
	}{
		{"wr_id", g.WRID}, {"status", uint64(g.Status)}, {"opcode", uint64(g.Opcode)},
		{"vendor_err", uint64(g.VendorErr)}, {"byte_len", uint64(g.ByteLen)}, {"qp_num", uint64(g.QPNum)},
		{"src_qp", uint64(g.SrcQP)}, {"wc_flags", uint64(g.Flags)}, {"pkey_index", uint64(g.PkeyIndex)},
		{"slid", uint64(g.SLID)}, {"sl", uint64(g.SL)}, {"dlid_path_bits", uint64(g.DLIDPathBits)},
	} {
		if err := field(f.name, want[f.name], f.got); err != nil {
			return err
		}
	}
	// imm_data and invalidated_rkey are one union: compare the views
	// libmlx5 wrote; if it wrote neither, Imm is 0.
	imm, rkey := union(g.Imm, g.Flags&mlx.IBV_WC_WITH_INV != 0)
	_, immOK, _ := num(want["imm_data"])
	_, rkeyOK, _ := num(want["invalidated_rkey"])
	if !immOK && !rkeyOK {
		return field("imm_data", nil, uint64(g.Imm))
	}
	if immOK {
		if err := field("imm_data", want["imm_data"], uint64(imm)); err != nil {
			return err
		}
	}
	if rkeyOK {
		return field("invalidated_rkey", want["invalidated_rkey"], uint64(rkey))
	}
	return nil
}

func (w *world) lazy(c *Call) error {
	ret, _, err := num(c.Returned)
	if err != nil {
		return fmt.Errorf("returned: %w", err)
	}
	if c.AttrCompMask != 0 {
		// StartPoll takes no attributes; libmlx5 refuses any with EINVAL
		// and leaves the CQ alone, as nothing is called here.
		if ret != int64(syscall.EINVAL) {
			return fmt.Errorf("attr_comp_mask %#x returned %d, want EINVAL", c.AttrCompMask, ret)
		}
		return nil
	}
	if c.Fn == "ibv_start_poll" {
		err = w.cq.StartPoll()
	} else {
		err = w.cq.NextPoll()
	}
	switch {
	case ret == -2:
		if !errors.As(err, &errUnknown) {
			return fmt.Errorf("returned %v, want CQ_POLL_ERR (an unknown CQE)", err)
		}
		return nil
	case ret == int64(syscall.ENOENT):
		if err != cq.ErrEmpty {
			return fmt.Errorf("returned %v, want ENOENT", err)
		}
		return nil
	case ret != 0 || err != nil:
		return fmt.Errorf("returned %v, want %d", err, ret)
	}
	if err := field("cq_ex.wr_id", c.CQEx["wr_id"], w.cq.WRID()); err != nil {
		return err
	}
	if err := field("cq_ex.status", c.CQEx["status"], uint64(w.cq.Status())); err != nil {
		return err
	}
	return w.reads(c.Reads)
}

func (w *world) reads(want map[string]Value) error {
	q := w.cq
	inv := q.ReadOpcode() == mlx.IBV_WC_RECV && q.ReadFlags()&mlx.IBV_WC_WITH_INV != 0
	imm, rkey := q.ReadImmData(), q.ReadInvalidatedRKey()
	if inv {
		imm = bits.ReverseBytes32(imm) // returned in host order, given as be32toh
	} else {
		rkey = bits.ReverseBytes32(rkey) // the big-endian field read as a host uint32
	}
	got := map[string]uint64{
		"ibv_wc_read_opcode": uint64(q.ReadOpcode()), "ibv_wc_read_vendor_err": uint64(q.ReadVendorErr()),
		"ibv_wc_read_wc_flags": uint64(q.ReadFlags()), "ibv_wc_read_byte_len": uint64(q.ReadByteLen()),
		"ibv_wc_read_imm_data": uint64(imm), "ibv_wc_read_invalidated_rkey": uint64(rkey),
		"ibv_wc_read_qp_num": uint64(q.ReadQPNum()), "ibv_wc_read_src_qp": uint64(q.ReadSrcQP()),
		"ibv_wc_read_slid": uint64(q.ReadSLID()), "ibv_wc_read_sl": uint64(q.ReadSL()),
		"ibv_wc_read_dlid_path_bits": uint64(q.ReadDLIDPathBits()), "ibv_wc_read_completion_ts": q.ReadCompletionTS(),
		"ibv_wc_read_cvlan": uint64(q.ReadCVLAN()), "ibv_wc_read_flow_tag": uint64(q.ReadFlowTag()),
	}
	for _, name := range sortedKeys(want) {
		g, ok := got[name]
		if !ok {
			return fmt.Errorf("reads.%s: not a read the poller offers", name)
		}
		if err := field("reads."+name, want[name], g); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) mkeyCheck(c *Call) error {
	mk := w.mkeys[c.Mkey]
	if mk == nil {
		return fmt.Errorf("mkey %q: not in the setup", c.Mkey)
	}
	r, err := mk.Check()
	ret, _, nerr := num(c.Returned)
	if nerr != nil {
		return fmt.Errorf("returned: %w", nerr)
	}
	got := int64(0)
	if err != nil {
		got = int64(err.(syscall.Errno))
	}
	if got != ret {
		return fmt.Errorf("returned %d, want %d", got, ret)
	}
	if err != nil {
		return nil // err_info is not written
	}
	for _, f := range []struct {
		name string
		got  uint64
	}{{"err_type", uint64(r.Type)}, {"expected_value", r.Expected}, {"actual_value", r.Actual}, {"offset", r.Offset}} {
		if err := field("err_info."+f.name, c.ErrInfo[f.name], f.got); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) after(a *After, setCI, arm bool) error {
	switch {
	case a.ConsIndex != w.cq.ConsIndex():
		return fmt.Errorf("cons_index: %d, want %d", w.cq.ConsIndex(), a.ConsIndex)
	case setCI != a.SetCIWritten || arm != a.ArmWritten:
		return fmt.Errorf("dbrec written (SET_CI %v, ARM %v), want (%v, %v)", setCI, arm, a.SetCIWritten, a.ArmWritten)
	case hex.EncodeToString(w.mem.CQDBR) != a.DBRecHex:
		return fmt.Errorf("dbrec_hex: %x, want %s", w.mem.CQDBR, a.DBRecHex)
	case bytes.Equal(w.mem.CQ, w.cqBuf) != a.CQBufferUnchanged:
		return fmt.Errorf("cq_buffer_unchanged: %v", !a.CQBufferUnchanged)
	case w.log.String() != a.Log:
		return fmt.Errorf("log: %q, want %q", w.log.String(), a.Log)
	}
	for _, q := range a.QPs {
		if q.SQTail != nil {
			if s := w.sqs[q.Name]; s == nil || s.tail != *q.SQTail {
				return fmt.Errorf("qps[%s].sq_tail: %v, want %d", q.Name, tailOf(s), *q.SQTail)
			}
		}
		if q.RQTail != nil {
			if r := w.rqs[q.Name]; r != nil && r.tail != *q.RQTail {
				return fmt.Errorf("qps[%s].rq_tail: %d, want %d", q.Name, r.tail, *q.RQTail)
			}
		}
	}
	if err := w.afterSRQs(a); err != nil {
		return err
	}
	for _, m := range a.Mkeys {
		mk := w.mkeys[m.Name]
		if mk == nil {
			return fmt.Errorf("mkeys[%s]: not in the setup", m.Name)
		}
		if mk.ErrCount != m.ErrCount || mk.ErrExists != m.ErrExists || mk.ErrCountUpdated != m.ErrCountUpdated {
			return fmt.Errorf("mkeys[%s]: err_count %d, err_exists %v, err_count_updated %v; want %d, %v, %v", m.Name,
				mk.ErrCount, mk.ErrExists, mk.ErrCountUpdated, m.ErrCount, m.ErrExists, m.ErrCountUpdated)
		}
		if e := m.ErrInfo; e != nil {
			want := cq.SigErr{Syndrome: e.Syndrome, Expected: e.Expected, Actual: e.Actual, Offset: e.Offset, SigType: e.SigType, Domain: e.Domain}
			if mk.ErrInfo != want {
				return fmt.Errorf("mkeys[%s].err_info: %+v, want %+v", m.Name, mk.ErrInfo, want)
			}
		}
	}
	for _, b := range a.ScatterBuffers {
		i, ok := w.scatBy[b.Name]
		if !ok {
			return fmt.Errorf("scatter_buffers[%s]: not in the setup", b.Name)
		}
		if got := hex.EncodeToString(w.scat.buf[i]); got != b.Hex {
			return fmt.Errorf("scatter_buffers[%s]: byte %d differs: %s, want %s", b.Name, firstDiff(got, b.Hex)/2, got, b.Hex)
		}
	}
	return nil
}

func tailOf(s *fakeSQ) any {
	if s == nil {
		return "no send queue"
	}
	return s.tail
}

func (w *world) afterSRQs(a *After) error {
	for _, q := range a.SRQs {
		s := w.srqs[q.Name]
		if s == nil {
			return fmt.Errorf("srqs[%s]: not in the setup", q.Name)
		}
		var db [4]byte
		binary.BigEndian.PutUint32(db[:], s.db)
		if s.head != q.Head || s.tail != q.Tail || s.counter != q.Counter || hex.EncodeToString(db[:]) != q.DBHex {
			return fmt.Errorf("srqs[%s]: head %d tail %d counter %d db %x; want %d %d %d %s", q.Name, s.head, s.tail, s.counter, db, q.Head, q.Tail, q.Counter, q.DBHex)
		}
		for i, id := range q.WRID {
			if i >= len(s.wrid) || s.wrid[i] != id {
				return fmt.Errorf("srqs[%s].wrid[%d]: differs, want %#x", q.Name, i, id)
			}
		}
		orig := w.c.Setup.SRQs[findSRQ(&w.c.Setup, q.Name)].BufferHex
		ob, _ := hex.DecodeString(orig)
		changed := map[int]string{}
		for _, cw := range q.ChangedWQEs {
			changed[cw.WQEIndex] = cw.Hex
		}
		for i := 0; i < s.max; i++ {
			got := s.wqe(i)
			want, ok := changed[i]
			if !ok {
				want = hex.EncodeToString(ob[i<<s.shift : (i+1)<<s.shift])
			}
			if g := hex.EncodeToString(got); g != want {
				return fmt.Errorf("srqs[%s] WQE %d byte %d: %s, want %s", q.Name, i, firstDiff(g, want)/2, g, want)
			}
		}
	}
	return nil
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
