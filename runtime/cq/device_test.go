package cq_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

var be = binary.BigEndian

// fakeDevice plays the HCA for one QP and its CQ, from what the writers
// left in memory only: it reads the send doorbell record and the WQEs'
// control segments, the receive doorbell record, and the CQ doorbell
// record's consumer index, and writes CQEs as the vectors have them (a
// requester CQE per signaled WQE; a responder CQE per message received; an
// error CQE with a syndrome, then a flush error CQE for every WQE and
// receive still posted). It never overwrites a CQE the poller has not
// consumed: with the CQ full it waits.
type fakeDevice struct {
	mem   *qmem.Memory
	rqDBR *[4]byte
	qpn   uint32
	rnd   *rand.Rand

	sqPI    uint32 // next WQEBB to execute (unmasked)
	rqCI    uint32 // next receive WQE to consume
	cqPI    uint32 // next CQE to write
	flush   bool   // the QP is in error: everything posted flushes
	errRate int    // 1 in errRate WQEs fails

	want []devCQE // what each CQE written and not yet checked means, in order

	// A second QP, receiving through a shared receive queue: the device
	// follows the SRQ's free list (each WQE's next_wqe_index, read when it
	// takes the WQE, which is posted then) as far as its counter says.
	srqRing    []byte
	srqDBR     *[4]byte
	srqn, qpn2 uint32
	srqHead    uint16 // the next WQE to take
	srqCI      uint16 // WQEs taken
}

// devCQE is what the device meant by a CQE: a send WQE's or receive
// WQE's completion, with its status and opcode.
type devCQE struct {
	recv   bool
	srq    bool
	ctr    uint16 // the WQE's index (wqe_counter)
	status cq.Status
	vendor uint8
	opcode mlx.IBVWCOpcode
	flags  mlx.WCFlags
	imm    uint32
	length uint32
}

// syndromes the device reports for a failed WQE, with the status each maps to.
var syndromes = []struct {
	synd mlx.CQESyndrome
	st   cq.Status
}{
	{mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, cq.LocLenErr},
	{mlx.MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, cq.LocQPOpErr},
	{mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, cq.LocProtErr},
	{mlx.MLX5_CQE_SYNDROME_BAD_RESP_ERR, cq.BadRespErr},
	{mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, cq.RemAccessErr},
	{mlx.MLX5_CQE_SYNDROME_REMOTE_OP_ERR, cq.RemOpErr},
	{mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, cq.RetryExcErr},
	{mlx.MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, cq.RNRRetryExcErr},
}

func (d *fakeDevice) ncqe() uint32 { return uint32(len(d.mem.CQ) / d.mem.CQESize) }

// room is how many CQEs the device may write: the CQ doorbell record's
// consumer index says how far the poller has come.
func (d *fakeDevice) room() uint32 {
	ci := mmio.LoadRecord32((*[4]byte)(d.mem.CQDBR[0:4])) & 0xffffff
	used := (d.cqPI - ci) & 0xffffff
	if used > d.ncqe() {
		panic(fmt.Sprintf("device: CQ doorbell record %d is ahead of the CQEs written (%d)", ci, d.cqPI))
	}
	return d.ncqe() - used
}

// write writes the next CQE with the owner bit of its pass.
func (d *fakeDevice) write(op mlx.CQEOpcode, sop uint8, ctr uint16, w devCQE, synd uint8) {
	off := int(d.cqPI&(d.ncqe()-1)) * d.mem.CQESize
	b := d.mem.CQ[off : off+64]
	clear(b)
	qpn := d.qpn
	if w.srq {
		qpn = d.qpn2
		be.PutUint32(b[32:36], d.srqn)
	}
	be.PutUint32(b[36:40], w.imm)
	be.PutUint32(b[44:48], w.length)
	b[54], b[55] = w.vendor, synd
	be.PutUint32(b[56:60], uint32(sop)<<24|qpn)
	be.PutUint16(b[60:62], ctr)
	// The owner bit last (the device's write of the entry's last byte).
	b[63] = uint8(op)<<4 | uint8(d.cqPI/d.ncqe()&1)
	d.cqPI++
	w.ctr = ctr
	d.want = append(d.want, w)
}

// sqPending is how many WQEBBs the send doorbell record holds beyond
// those executed.
func (d *fakeDevice) sqPending() uint32 {
	return (mmio.LoadRecord32((*[4]byte)(d.mem.DBR[4:8])) - d.sqPI) & 0xffff
}

func (d *fakeDevice) rqPending() uint32 { return (mmio.LoadRecord32(d.rqDBR) - d.rqCI) & 0xffff }

// execute runs up to n send WQEs and delivers up to m receives to the
// receive queue and m to the SRQ.
func (d *fakeDevice) execute(n, m int) {
	for ; n > 0 && d.sqPending() > 0 && d.room() > 0; n-- {
		d.sendWQE()
	}
	for k := m; k > 0 && d.rqPending() > 0 && d.room() > 0 && !d.flush; k-- {
		d.receive(false)
	}
	for ; m > 0 && uint16(mmio.LoadRecord32(d.srqDBR))-d.srqCI > 0 && d.room() > 0; m-- {
		d.receive(true)
	}
	if d.flush {
		for d.rqPending() > 0 && d.room() > 0 {
			d.write(mlx.MLX5_CQE_RESP_ERR, 0, uint16(d.rqCI), devCQE{recv: true, status: cq.WRFlushErr},
				uint8(mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR))
			d.rqCI++
		}
		if d.sqPending() == 0 && d.rqPending() == 0 {
			d.flush = false // the QP recovers: posting goes on
		}
	}
}

// sendWQE executes the WQE at sqPI from its control segment.
func (d *fakeDevice) sendWQE() {
	mask := uint32(len(d.mem.SQ)/qmem.WQEBB - 1)
	ctrl := d.mem.SQ[(d.sqPI&mask)*qmem.WQEBB:]
	opIdx := be.Uint32(ctrl[0:4])
	idx, opcode := uint16(opIdx>>8), uint8(opIdx)
	if idx != uint16(d.sqPI) || be.Uint32(ctrl[4:8])>>8 != d.qpn {
		panic(fmt.Sprintf("device: WQE at %d names index %d, QP %#x", d.sqPI, idx, be.Uint32(ctrl[4:8])>>8))
	}
	ds := be.Uint32(ctrl[4:8]) & 0x3f
	d.sqPI += (ds*16 + qmem.WQEBB - 1) / qmem.WQEBB
	switch {
	case d.flush:
		d.write(mlx.MLX5_CQE_REQ_ERR, opcode, idx, devCQE{status: cq.WRFlushErr}, uint8(mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR))
	case d.rnd.IntN(d.errRate) == 0:
		s := syndromes[d.rnd.IntN(len(syndromes))]
		v := uint8(d.rnd.IntN(256))
		d.write(mlx.MLX5_CQE_REQ_ERR, opcode, idx, devCQE{status: s.st, vendor: v}, uint8(s.synd))
		d.flush = true
	case ctrl[11]&uint8(mlx.MLX5_WQE_CTRL_CQ_UPDATE) != 0:
		w := devCQE{opcode: mlx.IBV_WC_RDMA_WRITE}
		switch mlx.Opcode(opcode) {
		case mlx.MLX5_OPCODE_SEND:
			w.opcode = mlx.IBV_WC_SEND
		case mlx.MLX5_OPCODE_SEND_IMM:
			w.opcode, w.flags = mlx.IBV_WC_SEND, mlx.IBV_WC_WITH_IMM
		}
		d.write(mlx.MLX5_CQE_REQ, opcode, idx, w, 0)
	}
}

// receive delivers a message into the next posted receive WQE of the
// receive queue or the SRQ.
func (d *fakeDevice) receive(srq bool) {
	w := devCQE{recv: true, srq: srq, length: uint32(d.rnd.IntN(4096)), imm: d.rnd.Uint32()}
	var op mlx.CQEOpcode
	switch d.rnd.IntN(4) {
	case 0:
		op, w.opcode, w.imm = mlx.MLX5_CQE_RESP_SEND, mlx.IBV_WC_RECV, 0
	case 1:
		op, w.opcode, w.flags = mlx.MLX5_CQE_RESP_SEND_IMM, mlx.IBV_WC_RECV, mlx.IBV_WC_WITH_IMM
	case 2:
		op, w.opcode, w.flags = mlx.MLX5_CQE_RESP_SEND_INV, mlx.IBV_WC_RECV, mlx.IBV_WC_WITH_INV
	default:
		op, w.opcode, w.flags = mlx.MLX5_CQE_RESP_WR_IMM, mlx.IBV_WC_RECV_RDMA_WITH_IMM, mlx.IBV_WC_WITH_IMM
	}
	if srq {
		ind := d.srqHead
		d.srqHead = be.Uint16(d.srqRing[int(ind)*32+2:]) // next_wqe_index
		d.srqCI++
		d.write(op, 0, ind, w, 0)
		return
	}
	d.write(op, 0, uint16(d.rqCI), w, 0)
	d.rqCI++
}
