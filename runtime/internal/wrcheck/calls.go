package wrcheck

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// closeWR checks that the open work request is whole: an mkey
// configuration got the setters it announced, and a work request got the
// setters its builder requires (its data; on a DCI, its address).
func (c *Chain) closeWR() {
	w := &c.wr
	if !w.isOpen() {
		return
	}
	switch {
	case w.isCounting() && !w.isFinalized():
		c.fail(mlx5rules.ChainNumSetters, w.fn(), what{field: "setters called", test: mlx.TestEqual,
			value: uint64(w.setters), limit: uint64(w.numSetters), limitName: "num_setters"})
	case w.need()&mlx5rules.GroupData != 0 && w.got()&mlx5rules.GroupData == 0:
		c.fail(mlx5rules.ChainRequiresData, w.fn(), what{field: "data setter", test: mlx.TestMissing})
	case w.need()&mlx5rules.GroupDCAddr != 0 && w.got()&mlx5rules.GroupDCAddr == 0:
		c.fail(mlx5rules.ChainRequiresDCAddr, w.fn(), what{field: "DC address setter", test: mlx.TestMissing})
	}
	w.meta &^= metaOpen
	w.st = uint64(w.busy())
}

// needsAddr reports whether a work request of builder fn needs a DC
// address: on a DCI, every builder that moves data to the peer.
func (c *Chain) needsAddr(fn mlx.Func) bool {
	return c.qp.Type == mlx.QPDCI && mlx5rules.Funcs[fn].Takes&mlx5rules.GroupData != 0
}

// addrGroup is the QP-specific setter group a data-moving work request
// takes on this QP's type: the DC address on a DCI, the UD address on UD,
// the remote SRQ on XRC.
func (c *Chain) addrGroup() mlx5rules.SetterGroup {
	switch c.qp.Type {
	case mlx.QPDCI:
		return mlx5rules.GroupDCAddr
	case mlx.QPUD:
		return mlx5rules.GroupUDAddr
	case mlx.QPXRCSend:
		return mlx5rules.GroupXRCSRQN
	}
	return 0
}

// begin runs the checks every builder shares and closes the previous work
// request.
func (c *Chain) begin(fn mlx.Func, wrFlags uint32) error {
	if !c.open {
		return c.outside(fn)
	}
	if c.err != nil {
		return c.err
	}
	if c.closeWR(); c.err != nil {
		return c.err
	}
	info := &mlx5rules.Funcs[fn]
	switch {
	case info.QPTypes&c.qp.Type == 0:
		return c.failQPType(fn)
	case info.SendOp != 0 && uint64(c.qp.SendOps)&info.SendOp == 0:
		return c.fail(mlx5rules.ChainSendOp, fn, what{field: "send_ops_flags", test: mlx.TestNeedBits,
			value: uint64(c.qp.SendOps), limit: info.SendOp, names: sendOpNames})
	case info.MlxSendOp != 0 && uint64(c.qp.MlxSendOps)&info.MlxSendOp == 0:
		return c.fail(mlx5rules.ChainSendOp, fn, what{field: "mlx5dv send_ops_flags", test: mlx.TestNeedBits,
			value: uint64(c.qp.MlxSendOps), limit: info.MlxSendOp, names: mlxSendOpNames})
	case wrFlags&info.WRFlags != info.WRFlags:
		return c.fail(mlx5rules.ChainWRFlags, fn, what{field: "wr_flags", test: mlx.TestNeedBits,
			value: uint64(wrFlags), limit: uint64(info.WRFlags), names: sendFlagNames})
	}
	return nil
}

// failQPType fails a call that the QP's type does not offer.
func (c *Chain) failQPType(fn mlx.Func) error {
	return c.fail(mlx5rules.ChainQPType, fn, what{field: "QP type", test: mlx.TestBits,
		value: uint64(c.qp.Type), limit: uint64(mlx5rules.Funcs[fn].QPTypes), names: qpTypeNames})
}

// openWR starts the work request of builder fn.
func (c *Chain) openWR(fn mlx.Func) {
	c.wrs++
	c.wr.setData(&c.fast[fn])
}

// TryBuilder is Builder's common case, small enough to inline into a
// writer's hot path: a batch without error, the previous work request
// whole (wr.busy is 0), the builder offered with these flags (one compare
// against its precomputed flags). It opens the work request and returns
// true, or does nothing and returns false (then Builder runs the full
// checks and names the rule).
func (c *Chain) TryBuilder(fn mlx.Func, wrFlags uint32) bool {
	f := &c.fast[fn]
	if c.wr.busy() == 0 && uint64(wrFlags)&f.flags == f.flags {
		c.wrs++
		c.wr.setData(f)
		return true
	}
	return false
}

// TryData is Data's common case for a setter of sges scatter/gather
// entries, inlinable like TryBuilder: the open work request accepts the
// setter on the fast path (wr.accept) and the QP takes sges entries. It
// records the setter and returns ok, and whole when the work request has
// all the setters it needs (the writer finishes its WQE then), or does
// nothing and returns !ok.
func (c *Chain) TryData(fn mlx.Func, sges int) (ok, whole bool) {
	w := &c.wr
	f := &c.fast[fn]
	if w.st&f.bitHi != 0 && sges <= c.maxSGE {
		st := w.st &^ f.clear
		w.st = st
		w.addGot(f.group)
		return true, uint32(st) == 0
	}
	return false, false
}

// Builder opens a work request of an ordinary builder (the ibv_wr_* data
// and atomic builders, local invalidate, bind MW, raw WQE) with the
// caller's wr_flags.
func (c *Chain) Builder(fn mlx.Func, wrFlags uint32) error {
	if c.TryBuilder(fn, wrFlags) {
		return nil
	}
	if err := c.begin(fn, wrFlags); err != nil {
		return err
	}
	c.openWR(fn)
	return nil
}

// Memcpy opens a DMA memcpy work request (mlx5dv_wr_memcpy).
func (c *Chain) Memcpy(fn mlx.Func, wrFlags uint32, length uint64) error {
	if err := c.begin(fn, wrFlags); err != nil {
		return err
	}
	switch {
	case length == 0:
		return c.fail(mlx5rules.ChainMemcpyZero, fn, what{field: "length", test: mlx.TestMin, limit: 1})
	case length > c.qp.MaxMemcpy:
		return c.fail(mlx5rules.ChainMemcpyMax, fn, above("length", length, c.qp.MaxMemcpy, "max_wr_memcpy_length"))
	}
	c.openWR(fn)
	return nil
}

// setter runs the checks every setter shares.
func (c *Chain) setter(fn mlx.Func) error {
	if !c.open {
		return c.outside(fn)
	}
	if c.err != nil {
		return c.err
	}
	info := &mlx5rules.Funcs[fn]
	if info.QPTypes&c.qp.Type == 0 {
		return c.failQPType(fn)
	}
	w := &c.wr
	switch {
	case !w.isOpen():
		return c.fail(mlx5rules.ChainSetterAfterBuilder, fn, what{field: "open work request", test: mlx.TestMissing})
	case w.isFinalized() || !c.follows[w.fn()][fn]:
		// The open work request's builder does not take the setter, or
		// has all its setters already.
		return c.fail(mlx5rules.ChainSetterAfterBuilder, fn, what{field: "builder", test: mlx.TestNone, value: uint64(w.fn()), names: funcNames})
	}
	if g := info.Group; g != mlx5rules.GroupLayout && w.got()&g != 0 {
		return c.fail(mlx5rules.ChainSetterOnce, fn, what{field: "calls", test: mlx.TestMax, value: 2, limit: 1, limitName: "one per work request"})
	}
	return nil
}

// takes reports whether setter fn may follow builder b.
func (c *Chain) takes(b, fn mlx.Func) bool {
	info := &mlx5rules.Funcs[fn]
	if g := info.Group; g == mlx5rules.GroupDCAddr || g == mlx5rules.GroupUDAddr || g == mlx5rules.GroupXRCSRQN {
		return g == c.addrGroup() && mlx5rules.Funcs[b].Takes&mlx5rules.GroupData != 0
	}
	if mlx5rules.Funcs[b].Takes&info.Group == 0 {
		return false
	}
	if len(info.Of) == 0 {
		return true
	}
	for _, o := range info.Of {
		if o == b {
			return true
		}
	}
	return false
}

// Data records a data setter: n scatter/gather entries (0 for inline
// data) or inline bytes. whole reports that the work request has all
// the setters it needs.
func (c *Chain) Data(fn mlx.Func, sges, inlineBytes int) (whole bool, err error) {
	w := &c.wr
	g := mlx5rules.Funcs[fn].Group
	if c.open && c.err == nil && w.isOpen() && !w.isFinalized() && c.follows[w.fn()][fn] && w.got()&g == 0 &&
		sges <= c.qp.MaxSendSGE && inlineBytes <= c.qp.MaxInlineData {
		return c.got(fn), nil
	}
	if err := c.setter(fn); err != nil {
		return false, err
	}
	switch {
	case sges > c.qp.MaxSendSGE:
		return false, c.fail(mlx5rules.ChainSGECount, fn, above("num_sge", uint64(sges), uint64(c.qp.MaxSendSGE), "max_send_sge"))
	case inlineBytes > c.qp.MaxInlineData:
		return false, c.fail(mlx5rules.ChainInlineSize, fn, above("length", uint64(inlineBytes), uint64(c.qp.MaxInlineData), "max_inline_data"))
	}
	return c.got(fn), nil
}

// DCAddr records mlx5dv_wr_set_dc_addr (stream < 0) or
// mlx5dv_wr_set_dc_addr_stream with the address handle ah. whole reports
// that the work request has all the setters it needs.
func (c *Chain) DCAddr(fn mlx.Func, ah unsafe.Pointer, stream int) (whole bool, err error) {
	if err := c.setter(fn); err != nil {
		return false, err
	}
	var ok bool
	if stream < 0 {
		ok = mlx.ValidateArgsWRSetDCAddrInto(&c.scratch, ah)
	} else {
		ok = mlx.ValidateArgsWRSetDCAddrStreamInto(&c.scratch, ah)
	}
	if !ok {
		return false, c.latchRule(fn)
	}
	if stream >= 0 {
		switch {
		case !c.qp.Streams:
			return false, c.fail(mlx5rules.ChainDCStreams, fn, what{field: "stream_id", test: mlx.TestNone, value: uint64(stream)})
		case c.qp.LogNumConcurent < 0 || c.qp.LogNumConcurent < 16 && stream >= 1<<c.qp.LogNumConcurent:
			return false, c.fail(mlx5rules.ChainDCStreamID, fn, above("stream_id", uint64(stream), 1<<max(c.qp.LogNumConcurent, 0)-1, "2^log_num_concurent - 1"))
		}
	}
	return c.got(fn), nil
}

// QPSetter records ibv_wr_set_ud_addr or ibv_wr_set_xrc_srqn.
func (c *Chain) QPSetter(fn mlx.Func) (whole bool, err error) {
	if err := c.setter(fn); err != nil {
		return false, err
	}
	return c.got(fn), nil
}

// TooMany fails the batch because the work request fn is building would
// bring the work requests outstanding and in the batch to used, above
// the QP's max_post (the sq_room rule). The writer counts them.
func (c *Chain) TooMany(fn mlx.Func, used, maxPost int) error {
	return c.fail(mlx5rules.ChainSQRoom, fn, above("work requests outstanding", uint64(used), uint64(maxPost), "max_send_wr"))
}

// NoRoom fails the batch because the send queue's ring has no room for
// the work request fn is building (the sq_room rule): it needs need
// WQEBBs and free are free. The writer checks the ring itself, since a WQE
// can be larger than the size the work-request budget assumes.
func (c *Chain) NoRoom(fn mlx.Func, need, free int) error {
	return c.fail(mlx5rules.ChainSQRoom, fn, above("WQEBBs needed", uint64(need), uint64(max(free, 0)), "WQEBBs free in the ring"))
}

// RawWQE opens mlx5dv_wr_raw_wqe: wqe must hold the ds 16-byte units its
// control segment announces, at least one.
func (c *Chain) RawWQE(fn mlx.Func, wrFlags uint32, wqe []byte) error {
	if err := c.begin(fn, wrFlags); err != nil {
		return err
	}
	if len(wqe) < mlx.WQECtrlSegSize {
		return c.fail(mlx5rules.ChainRawWQESize, fn, what{field: "WQE bytes", test: mlx.TestMin, value: uint64(len(wqe)), limit: mlx.WQECtrlSegSize, limitName: "a control segment"})
	}
	if ds := int(wqe[7] & 0x3f); ds == 0 {
		return c.fail(mlx5rules.ChainRawWQESize, fn, what{field: "ds", test: mlx.TestMin, limit: 1})
	} else if len(wqe) < ds*16 {
		return c.fail(mlx5rules.ChainRawWQESize, fn, what{field: "WQE bytes", test: mlx.TestMin, value: uint64(len(wqe)), limit: uint64(ds * 16), limitName: "16 × ds"})
	}
	c.openWR(fn)
	return nil
}

// Burst records n work requests of builder fn each completed by setter
// (as n calls of both would), checking once: the batch has no error and
// its open work request is whole, the QP offers the builder with these
// wr_flags and the setter after it, and the setter makes each work
// request whole (the writer checks that they fit the send queue). It
// returns false, recording nothing, when any of that does not hold; then
// the caller makes the calls one by one, and they report the rule.
func (c *Chain) Burst(fn, setter mlx.Func, wrFlags uint32, n int) bool {
	if !(c.open && c.err == nil && (!c.wr.isOpen() || c.wr.whole()) && c.offered[fn] && c.follows[fn][setter] &&
		wrFlags&mlx5rules.Funcs[fn].WRFlags == mlx5rules.Funcs[fn].WRFlags &&
		c.needs[fn]&^mlx5rules.Funcs[setter].Group == 0 && c.qp.MaxSendSGE >= 1 && n > 0) {
		return false
	}
	c.wrs += n
	c.wr.setData(&c.fast[fn])
	c.got(setter)
	return true
}
