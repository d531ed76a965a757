package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// done finishes a data or address setter: when the checks say the work
// request is whole (on RC after its data; on a DCI once both the address
// and the data are set), its WQE is finished.
func (q *SQ) done(whole bool) {
	if whole {
		q.finalize()
	}
}

// setSGE is SetSGE's general path.
//
//go:noinline
func (q *SQ) setSGE(lkey uint32, addr uint64, length uint32) error {
	fn := mlx.FnWRSetSGE
	whole, err := q.chk.Data(fn, 1, 0)
	if err != nil {
		return err
	}
	if err := q.chk.SGE(fn, length); err != nil {
		return err
	}
	if length != 0 {
		// Only a segment that starts a WQEBB can reach the ring's limit.
		if q.curSize&3 == 0 {
			if err := q.room(fn, q.curSize*16+mlx.WQEDataSegSize); err != nil {
				return err
			}
		}
		d := (*mlx.WQEDataSeg)(q.at(q.curData))
		d.SetByteCount(length)
		d.SetLKey(lkey)
		d.SetAddr(addr)
		q.curSize++
	}
	q.done(whole)
	return nil
}

// SetSGEList sets the work request's data to a list of scatter/gather
// entries (at most max_send_sge; zero-length entries are skipped).
// ibv_wr_set_sge_list.
func (q *SQ) SetSGEList(sges []mlx.SGE) error {
	fn := mlx.FnWRSetSGEList
	whole, err := q.chk.Data(fn, len(sges), 0)
	if err != nil {
		return err
	}
	if err := q.chk.SGEList(fn, sges); err != nil {
		return err
	}
	n := 0
	for i := range sges {
		if sges[i].Length != 0 {
			n++
		}
	}
	if err := q.room(fn, (q.curSize+n)*16); err != nil {
		return err
	}
	off := q.curData
	for i := range sges {
		if off == q.qend {
			off = 0
		}
		g := &sges[i]
		if g.Length == 0 {
			continue
		}
		d := (*mlx.WQEDataSeg)(q.at(off))
		d.SetByteCount(g.Length)
		d.SetLKey(g.LKey)
		d.SetAddr(g.Addr)
		off += mlx.WQEDataSegSize
	}
	q.curSize += n
	q.done(whole)
	return nil
}

// inlineHeader ends inline data of n bytes: its header, and the WQE's
// size.
func (q *SQ) inlineHeader(n int) {
	q.inl = true
	if n == 0 {
		return // no header, nothing to send
	}
	(*mlx.WQEInlDataSeg)(q.at(q.curData)).SetByteCount(uint32(n) | mlx.MLX5_INLINE_SEG)
	q.curSize += (n + 4 + 15) / 16
}

// SetInlineData copies data (at most max_inline_data bytes) into the WQE.
// ibv_wr_set_inline_data; rdma-core: mlx5_send_wr_set_inline_data.
func (q *SQ) SetInlineData(data []byte) error {
	fn := mlx.FnWRSetInlineData
	whole, err := q.chk.Data(fn, 0, len(data))
	if err != nil {
		return err
	}
	if err := q.chk.Inline(fn, len(data)); err != nil {
		return err
	}
	if err := q.room(fn, q.curSize*16+4+len(data)); err != nil {
		return err
	}
	if len(data) > 0 {
		q.copyWrap(q.curData+4, data)
	}
	q.inlineHeader(len(data))
	q.done(whole)
	return nil
}

// SetInlineDataList copies buffers, one after the other, into the WQE
// (at most max_inline_data bytes in all). ibv_wr_set_inline_data_list.
func (q *SQ) SetInlineDataList(bufs [][]byte) error {
	fn := mlx.FnWRSetInlineDataList
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	whole, err := q.chk.Data(fn, 0, total)
	if err != nil {
		return err
	}
	if err := q.chk.Inline(fn, total); err != nil {
		return err
	}
	if err := q.room(fn, q.curSize*16+4+total); err != nil {
		return err
	}
	off := q.curData + 4
	for _, b := range bufs {
		off = q.copyWrap(off, b)
	}
	q.inlineHeader(total)
	q.done(whole)
	return nil
}

// SetDCAddr gives a DCI work request its destination: the address handle,
// the remote DCT number and its DC key. mlx5dv_wr_set_dc_addr; rdma-core:
// mlx5_send_wr_set_dc_addr.
func (q *SQ) SetDCAddr(ah *AH, dctn uint32, dcKey uint64) error {
	whole, err := q.chk.DCAddr(mlx.FnWRSetDCAddr, unsafe.Pointer(ah), -1)
	if err != nil {
		return err
	}
	q.dcAddr(ah, dctn, dcKey)
	q.done(whole)
	return nil
}

// SetDCAddrStream is SetDCAddr on a DCI created with streams, posting on
// stream streamID. mlx5dv_wr_set_dc_addr_stream.
func (q *SQ) SetDCAddrStream(ah *AH, dctn uint32, dcKey uint64, streamID uint16) error {
	whole, err := q.chk.DCAddr(mlx.FnWRSetDCAddrStream, unsafe.Pointer(ah), int(streamID))
	if err != nil {
		return err
	}
	q.ctrl().SetDCIStreamChannelID(streamID)
	q.dcAddr(ah, dctn, dcKey)
	q.done(whole)
	return nil
}

func (q *SQ) dcAddr(ah *AH, dctn uint32, dcKey uint64) {
	av := (*mlx.WQEAV)(q.at(q.curCtrl + mlx.WQECtrlSegSize))
	*av = ah.AV
	av.SetDqpDCT(ah.AV.DqpDCT() | dctn | mlx.MLX5_EXTENDED_UD_AV)
	av.SetKeyDCKey(dcKey)
}
