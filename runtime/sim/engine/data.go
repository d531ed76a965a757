package engine

import (
	"errors"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/keys"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
)

// maxSpans bounds the spans of one side of a transfer: a WQE holds at
// most 63 segments.
const maxSpans = 64

// sgl is one side of a transfer: spans of memory, in order. A span
// through an indirect mkey is staged in the engine's scratch memory:
// gathered into it before the copy, or scattered from it after.
type sgl struct {
	b     [maxSpans][]byte
	n     int
	total uint64
	ind   [maxSpans]indirect
	nind  int

	// limit bounds the bytes a destination will receive: a staged span
	// takes no more than what is left of it, so that a scatter writes
	// what arrived and nothing past it (and a huge byte count stages
	// nothing it will not use).
	limit uint64
}

type indirect struct {
	span   int
	key    uint32
	addr   uint64
	remote bool
}

func (l *sgl) reset() { l.n, l.total, l.nind, l.limit = 0, 0, 0, ^uint64(0) }

func (l *sgl) add(b []byte) bool {
	if l.n == maxSpans {
		return false
	}
	l.b[l.n] = b
	l.n++
	l.total += uint64(len(b))
	return true
}

// copySGL copies min(src, dst) bytes from src's spans to dst's.
func copySGL(dst, src *sgl) {
	di, doff := 0, 0
	for si := 0; si < src.n; si++ {
		s := src.b[si]
		for len(s) > 0 && di < dst.n {
			k := copy(dst.b[di][doff:], s)
			s, doff = s[k:], doff+k
			if doff == len(dst.b[di]) {
				di, doff = di+1, 0
			}
		}
	}
}

// status is what an operation left: the syndrome of its error (0: none),
// or that it must wait.
type status struct {
	synd   mlx.CQESyndrome
	wait   bool
	nak    bool   // waiting after an RNR NAK that counts against rnr_retry
	flight bool   // a READ or atomic: it completes when its response lands
	peer   *QP    // where its response comes from
	fault  string // why, for the log and the tests
}

var ok = status{}

func fail(s mlx.CQESyndrome, why string) status { return status{synd: s, fault: why} }

// malformed is a WQE the device cannot parse. [ledger: syndrome-malformed-wqe]
func malformed(why string) status { return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, why) }

// span resolves n bytes at addr under key for a QP of device d and PD pd:
// an MR or MW of the device's table, or an indirect mkey (staged). need
// and remote are as keys.Table.Bytes takes them (through a signature mkey
// a remote n counts wire bytes, a local one as indirectSpan says); gather
// says the span is read.
func (x *exec) span(l *sgl, d *Device, pd, key uint32, addr, n uint64, need mlx.AccessFlags, remote, gather bool) status {
	if isMkey(key) {
		if mpd, known := d.mkeys.PD(key); known && mpd != pd {
			return keyFault(remote, "an mkey of another protection domain")
		}
		return x.indirectSpan(l, d, key, addr, n, remote, gather)
	}
	b, f := d.keys.Bytes(key, pd, addr, n, need, remote, &x.fault)
	if f != nil {
		return keyFault(f.Kind == keys.RemoteAccess, f.Why)
	}
	if !l.add(b) {
		return malformed("too many segments")
	}
	return ok
}

func keyFault(remote bool, why string) status {
	if remote {
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, why)
	}
	return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, why)
}

// indirectSpan stages a span through an indirect mkey in scratch memory:
// gathered (its memory bytes become wire bytes, a signature inserted or
// stripped, data encrypted or decrypted) or, to scatter, room for the
// wire bytes the span takes. addr and n count as runtime/sim/mkey's
// wireUnits says: wire bytes for a remote span and for a local one whose
// wire domain has no signature, memory bytes otherwise.
func (x *exec) indirectSpan(l *sgl, d *Device, key uint32, addr, n uint64, remote, gather bool) status {
	if n > 1<<31 || l.nind == maxSpans {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "an indirect span too large")
	}
	var err error
	if !gather {
		if n, err = d.mkeys.SpanWire(key, n, remote); err != nil {
			return spanFault(err, remote)
		}
		if l.total <= l.limit {
			n = min(n, l.limit-l.total)
		}
	}
	start := len(x.scratch)
	if gather {
		if x.scratch, err = d.mkeys.Gather(key, addr, n, remote, x.scratch); err != nil {
			return mkeyFault(err)
		}
	} else {
		x.scratch = grow(x.scratch, n)
		l.ind[l.nind] = indirect{span: l.n, key: key, addr: addr, remote: remote}
		l.nind++
	}
	if !l.add(x.scratch[start:len(x.scratch):len(x.scratch)]) {
		return malformed("too many segments")
	}
	x.touched(d, key)
	return ok
}

// spanFault reports a span whose length through an mkey is not whole
// signature blocks (or names no mkey): a length error for a local span, a
// remote access error for a remote one.
func spanFault(err error, remote bool) status {
	if remote {
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, err.Error())
	}
	return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, err.Error())
}

// grow extends b by n bytes (allocating only when its capacity is short).
func grow(b []byte, n uint64) []byte {
	if uint64(cap(b)-len(b)) >= n {
		return b[:len(b)+int(n)]
	}
	return append(b, make([]byte, n)...)
}

// scatter writes dst's staged indirect spans through their mkeys.
func (x *exec) scatter(dst *sgl, d *Device) status {
	if dst.nind == 0 {
		return ok
	}
	return x.scatterSlow(dst, d)
}

func (x *exec) scatterSlow(dst *sgl, d *Device) status {
	for _, in := range dst.ind[:dst.nind] {
		if err := d.mkeys.Scatter(in.key, in.addr, dst.b[in.span], in.remote); err != nil {
			return mkeyFault(err)
		}
	}
	return ok
}

// segmentBytes sums the byte counts of the data segments of w[off:end]
// (as far as they parse), without resolving their keys.
func segmentBytes(w []byte, off, end int) uint64 {
	n, _ := segmentWire(nil, w, off, end)
	return n
}

// segmentWire sums the wire bytes of the data segments of w[off:end]: a
// segment through an indirect mkey of d counts the wire bytes it carries
// (mkey.Table.SpanWire); with d nil, or a key that is no mkey of d, the
// byte count. An RDMA READ asks its responder for this many bytes.
func segmentWire(d *Device, w []byte, off, end int) (uint64, status) {
	var n uint64
	for ; off+mlx.WQEDataSegSize <= end; off += mlx.WQEDataSegSize {
		ds := (*mlx.WQEDataSeg)(w[off : off+mlx.WQEDataSegSize])
		if ds.ByteCount()&mlx.MLX5_INLINE_SEG != 0 || ds.LKey() == mlx.MLX5_INVALID_LKEY {
			break
		}
		bc := uint64(ds.ByteCount())
		if d != nil && bc != 0 && isMkey(ds.LKey()) {
			wire, err := d.mkeys.SpanWire(ds.LKey(), bc, false)
			if err == nil {
				bc = wire
			} else if !errors.Is(err, mkey.ErrNoMkey) {
				return 0, spanFault(err, false)
			}
		}
		n += bc
	}
	return n, ok
}

// segments resolves the data segments (and inline data) of w[off:end]:
// need is the local access (0 to read, IBV_ACCESS_LOCAL_WRITE to write),
// and a segment with MLX5_INVALID_LKEY ends a receive WQE's list.
func (x *exec) segments(l *sgl, d *Device, pd uint32, w []byte, off, end int, need mlx.AccessFlags) status {
	for off < end {
		if end-off < 4 {
			return malformed("stray bytes after the last segment")
		}
		bc := be.Uint32(w[off:])
		if bc&mlx.MLX5_INLINE_SEG != 0 {
			n := int(bc &^ mlx.MLX5_INLINE_SEG)
			if need != 0 || n > end-off-4 {
				return malformed("inline data past the WQE, or in a receive")
			}
			if !l.add(w[off+4 : off+4+n]) {
				return malformed("too many segments")
			}
			off = (off + 4 + n + 15) &^ 15
			continue
		}
		if end-off < mlx.WQEDataSegSize {
			return malformed("a data segment past the WQE")
		}
		ds := (*mlx.WQEDataSeg)(w[off : off+mlx.WQEDataSegSize])
		off += mlx.WQEDataSegSize
		lkey := ds.LKey()
		if lkey == mlx.MLX5_INVALID_LKEY {
			break
		}
		if bc == 0 {
			continue
		}
		if st := x.span(l, d, pd, lkey, ds.Addr(), uint64(bc), need, false, need == 0); st.synd != 0 {
			return st
		}
	}
	return ok
}
