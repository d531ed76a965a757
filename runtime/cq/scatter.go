package cq

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// scatterSource returns the inline data of a CQE with the scatter flags:
// with MLX5_INLINE_SCATTER_32 the 64-byte CQE itself (the data in its
// first 32 bytes), with MLX5_INLINE_SCATTER_64 the 64 bytes before the
// 64-byte CQE followed by it (the whole entry of a 128-byte CQE; with
// 64-byte CQEs the previous entry of the ring, wrapping, where libmlx5
// reads before the buffer at slot 0). Requester completions take the
// same source as responder ones, as rdma-core 64.0 and later do (rule
// cq.req_scatter_source; 44.0 read the entry's start, and one byte
// before it). A compressed-format value (3) has the SCATTER_32 bit and
// is read as scatter-32, as libmlx5 44.0, which has no decompression,
// does.
func (c *CQ) scatterSource(off int, cqe []byte) []byte {
	if cqe[63]&mlx.MLX5_INLINE_SCATTER_32 != 0 {
		return cqe
	}
	if c.sz == 128 {
		return c.buf[off : off+128]
	}
	prev := (off - 64 + len(c.buf)) % len(c.buf)
	copy(c.scratch[:64], c.buf[prev:prev+64])
	copy(c.scratch[64:], cqe)
	return c.scratch[:]
}

// copyToScat copies size bytes of src to the buffers of up to max data
// segments in segs, skipping (but counting) those with the dump-fill lkey
// when skipDump; it returns the status and the bytes consumed. Memory
// outside Config.Scatter is not written: the completion fails with
// IBV_WC_LOC_PROT_ERR (libmlx5 would write to the address). rdma-core:
// copy_to_scat, mlx5_copy_to_recv_srq.
func (c *CQ) copyToScat(segs []byte, max int, src []byte, size uint32, skipDump bool) (Status, uint32) {
	if size == 0 {
		return Success, 0
	}
	if size > uint32(len(src)) {
		return LocLenErr, 0 // more than the CQE holds
	}
	done := uint32(0)
	for i := 0; i < max && (i+1)*16 <= len(segs); i++ {
		seg := segs[i*16 : i*16+16]
		n := min(size, be.Uint32(seg[0:4]))
		if !skipDump || be.Uint32(seg[4:8]) != c.dump {
			var dst []byte
			if c.scat != nil {
				dst = c.scat.Bytes(be.Uint64(seg[8:16]), n)
			}
			if dst == nil && n > 0 {
				return LocProtErr, done
			}
			copy(dst, src[done:done+n])
		}
		size -= n
		done += n
		if size == 0 {
			return Success, done
		}
	}
	return LocLenErr, done
}

// copyToRecv scatters a responder CQE's inline data into the receive WQE
// at idx of the QP's receive queue or of the SRQ. rdma-core:
// mlx5_copy_to_recv_wqe, mlx5_copy_to_recv_srq.
func (c *CQ) copyToRecv(qp *QP, srq SharedRecvQueue, idx uint32, off int, cqe []byte, size uint32) Status {
	src := c.scatterSource(off, cqe)
	if srq != nil {
		wqe := srq.WQE(idx)
		if len(wqe) < 16 {
			return LocLenErr
		}
		// libmlx5 does not skip the dump-fill lkey in an SRQ WQE.
		st, _ := c.copyToScat(wqe[16:], len(wqe)/16, src, size, false)
		return st
	}
	wqe, sig := qp.RQ.WQE(idx)
	if sig && len(wqe) >= 16 {
		wqe = wqe[16:]
	}
	st, _ := c.copyToScat(wqe, len(wqe)/16, src, size, true)
	return st
}

// copyToSendWQE scatters a requester CQE's inline data (an RDMA READ's
// response or an atomic's original value) into the SGEs of the send WQE
// at the CQE's WQE counter, following an SGE list across the ring's end.
// rdma-core: mlx5_copy_to_send_wqe.
func (c *CQ) copyToSendWQE(qp *QP, ctr uint32, off int, cqe []byte, size uint32) Status {
	ring := qp.SQ.Ring()
	n := qp.SQ.Slots()
	if len(ring) < int(n)*64 || len(ring) == 0 {
		return LocProtErr
	}
	ctrl := int(ctr&(n-1)) * 64
	if !qp.RC {
		if c.log != nil {
			c.log(LogScatterQPType, ring[ctrl:ctrl+16])
		}
		return GeneralErr
	}
	p := ctrl + 16
	switch mlx.Opcode(be.Uint32(ring[ctrl:ctrl+4]) & 0xff) {
	case mlx.MLX5_OPCODE_RDMA_READ:
		p += 16 // the remote address segment
	case mlx.MLX5_OPCODE_ATOMIC_CS, mlx.MLX5_OPCODE_ATOMIC_FA:
		p += 32 // the remote address and atomic segments
	default:
		if c.log != nil {
			c.log(LogScatterOpcode, ring[ctrl:ctrl+16])
		}
		return RemInvReqErr
	}
	src := c.scatterSource(off, cqe)
	max := int(be.Uint32(ring[ctrl+4:ctrl+8])&0x3f) - (p-ctrl)/16
	if qend := len(ring); p+max*16 > qend {
		tmp := (qend - p) / 16
		st, done := c.copyToScat(ring[p:qend], tmp, src, size, true)
		if st == Success {
			return Success
		}
		if st != LocLenErr {
			return st
		}
		max -= tmp
		src, size, p = src[done:], size-done, 0
	}
	st, _ := c.copyToScat(ring[p:], max, src, size, true)
	return st
}
