package mkey

import (
	"encoding/binary"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// entry is one translation entry: a KLM, or an interleaved layout's entry
// (n bytes every stride bytes from addr).
type entry struct {
	key          uint32
	addr, n      uint64
	stride       uint64
	cumulativeAt uint64 // offset of the entry in the layout (in one repetition)
}

// layout is an mkey's translation: a list of KLMs, or repeat times the
// interleaving of its entries (once bytes per repetition).
type layout struct {
	interleaved bool
	ents        []entry
	repeat      uint64
	once        uint64
}

// total is the bytes the layout covers.
func (l *layout) total() uint64 {
	if l.interleaved {
		return l.once * l.repeat
	}
	return l.once
}

// repeatBlockOp is the op of an interleaved layout's repeat block header,
// in the place a KLM has its mkey (MLX5_UMR_REPEAT_BLOCK_OP in rdma-core).
const repeatBlockOp = 0x400

// parseLayout reads a UMR's inline translation: KLMs, or a repeat block
// and its entries, padded with zero entries to a WQEBB. numDesc bounds
// the KLMs, or the interleaved entries (the header not counted, as
// libmlx5 counts them). [ledger: mkey-entries]
func parseLayout(x []byte, numDesc int) (layout, error) {
	count := len(x) / 16
	if binary.BigEndian.Uint32(x[4:8]) == repeatBlockOp {
		return parseInterleaved(x, count, numDesc)
	}
	if count > numDesc {
		return layout{}, wqeErr("umr_ctrl.klm_octowords", "%d KLMs, the mkey was created for %d", count, numDesc)
	}
	l := layout{ents: make([]entry, 0, count)}
	for i := 0; i < count; i++ {
		k := (*mlx.WQEUMRKLMSeg)(x[16*i : 16*i+16])
		if k.ByteCount() == 0 {
			continue // padding, or an empty SGE [ledger: klm-zero-skipped]
		}
		l.ents = append(l.ents, entry{key: k.Mkey(), addr: k.Address(), n: uint64(k.ByteCount()), cumulativeAt: l.once})
		l.once += uint64(k.ByteCount())
	}
	return l, nil
}

func parseInterleaved(x []byte, count, numDesc int) (layout, error) {
	h := (*mlx.WQEUMRRepeatBlockSeg)(x[:16])
	ne := int(h.NumEnt())
	if ne == 0 || ne+1 > count || ne > numDesc {
		return layout{}, wqeErr("repeat_block.num_ent", "%d entries in a translation of %d, the mkey was created for %d", ne, count, numDesc)
	}
	l := layout{interleaved: true, repeat: uint64(h.RepeatCount()), ents: make([]entry, 0, ne)}
	for i := 1; i <= ne; i++ {
		e := (*mlx.WQEUMRRepeatEntSeg)(x[16*i : 16*i+16])
		// A stride below the byte count (16 bits: libmlx5's count+skip
		// wraps) overlaps repetitions; the device follows it. [ledger: interleaved-overlap]
		n, stride := uint64(e.ByteCount()), uint64(e.Stride())
		l.ents = append(l.ents, entry{key: e.Memkey(), addr: e.Va(), n: n, stride: stride, cumulativeAt: l.once})
		l.once += n
	}
	if uint64(h.ByteCount()) != l.once {
		return layout{}, wqeErr("repeat_block.byte_count", "%d, the entries count %d", h.ByteCount(), l.once)
	}
	return l, nil
}

// piece returns the memory behind layout offset off: the key, the address
// and the bytes contiguous there. ok is false past the layout.
func (l *layout) piece(off uint64) (key uint32, addr, avail uint64, ok bool) {
	if off >= l.total() {
		return 0, 0, 0, false
	}
	var rep uint64
	if l.interleaved {
		rep, off = off/l.once, off%l.once
	}
	// Binary search for the last entry starting at or before off.
	lo, hi := 0, len(l.ents)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if l.ents[mid].cumulativeAt <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	e := &l.ents[lo]
	in := off - e.cumulativeAt
	return e.key, e.addr + rep*e.stride + in, e.n - in, true
}

// maxDepth bounds mkeys whose layouts name other mkeys. [ledger: mkey-nesting]
const maxDepth = 4

// rw copies between buf and the memory behind mkey offset off: into buf
// (write false) or from it. Entries naming another mkey of the table are
// followed, as local accesses, to maxDepth.
func (t *Table) rw(m *mkey, off uint64, buf []byte, write bool, depth int) error {
	for len(buf) > 0 {
		key, addr, avail, ok := m.layout.piece(off)
		if !ok {
			return &Fault{Kind: FaultBounds, Key: m.key(), Addr: off, N: uint64(len(buf)), Why: "past the layout"}
		}
		k := min(avail, uint64(len(buf)))
		if inner := t.mkeys[key>>8]; inner != nil && key >= keyBase<<8 {
			if depth >= maxDepth {
				return &Fault{Kind: FaultKey, Key: key, Addr: addr, N: k, Why: "mkeys nested too deep"}
			}
			if err := t.check(inner, key, addr, k, write, false); err != nil {
				return err
			}
			if err := t.rw(inner, addr-inner.start, buf[:k], write, depth+1); err != nil {
				return err
			}
		} else {
			p, err := t.mem.Bytes(key, addr, k, write, false)
			if err != nil {
				return err
			}
			if uint64(len(p)) < k {
				return &Fault{Kind: FaultBounds, Key: key, Addr: addr, N: k, Why: "the memory returned fewer bytes"}
			}
			if write {
				copy(p, buf[:k])
			} else {
				copy(buf, p[:k])
			}
		}
		buf, off = buf[k:], off+k
	}
	return nil
}

// check is the access check of n bytes at addr through mkey m named by
// key: a current, configured mkey whose flags allow the access, in
// bounds.
func (t *Table) check(m *mkey, key uint32, addr, n uint64, write, remote bool) error {
	var need mlx.WQEMkeyContextAccessFlags
	switch {
	case remote && write:
		need = mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE
	case remote:
		need = mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ
	case write:
		need = mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE
	}
	var kind FaultKind
	var why string
	switch {
	case m.tag != uint8(key):
		kind, why = FaultKey, "stale tag"
	case m.free:
		kind, why = FaultKey, "the mkey is not configured (free)"
	case m.access&need != need:
		kind, why = FaultAccess, "access flags "+hexa(uint64(m.access))
	case addr < m.start || addr-m.start > m.length || n > m.length-(addr-m.start):
		kind, why = FaultBounds, "mkey length "+hexa(m.length)
	default:
		return nil
	}
	return &Fault{Kind: kind, Key: key, Addr: addr, N: n, Remote: remote, Why: why}
}

func hexa(v uint64) string {
	const d = "0123456789abcdef"
	var b [18]byte
	i := len(b)
	for {
		i--
		b[i] = d[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	i -= 2
	b[i], b[i+1] = '0', 'x'
	return string(b[i:])
}
