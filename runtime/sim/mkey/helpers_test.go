package mkey_test

import (
	"encoding/binary"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// region is an MR of the in-test memory.
type region struct {
	addr   uint64
	buf    []byte
	access mlx.AccessFlags
}

// memory is a Memory over byte slices: MRs by key (lkey == rkey).
type memory struct {
	mrs  map[uint32]*region
	next uint32
}

func newMemory() *memory { return &memory{mrs: map[uint32]*region{}, next: 0x1000} }

// reg registers buf at addr and returns its key.
func (m *memory) reg(addr uint64, buf []byte, acc mlx.AccessFlags) uint32 {
	k := m.next
	m.next += 0x100
	m.mrs[k] = &region{addr: addr, buf: buf, access: acc}
	return k
}

func (m *memory) Bytes(key uint32, addr, n uint64, write, remote bool) ([]byte, error) {
	r := m.mrs[key]
	var kind mkey.FaultKind
	switch {
	case r == nil:
		kind = mkey.FaultKey
	case write && r.access&mlx.IBV_ACCESS_LOCAL_WRITE == 0:
		kind = mkey.FaultAccess
	case addr < r.addr || addr-r.addr > uint64(len(r.buf)) || n > uint64(len(r.buf))-(addr-r.addr):
		kind = mkey.FaultBounds
	default:
		off := addr - r.addr
		return r.buf[off : off+n], nil
	}
	return nil, &mkey.Fault{Kind: kind, Key: key, Addr: addr, N: n, Remote: remote}
}

// rig is a device's mkey table, its memory, and a send queue in plain
// queue memory whose UMR and SET_PSV WQEs are handed to the table.
type rig struct {
	t   testing.TB
	mem *memory
	tab *mkey.Table
	q   *sq.SQ
	qm  *qmem.Memory
}

func newRig(t testing.TB) *rig { return newRigXTS(t, false) }

// newRigXTS makes a rig whose device has the multi-block AES-XTS engine
// (multi) or the single-block one.
func newRigXTS(t testing.TB, multi bool) *rig {
	t.Helper()
	qm, err := qmem.New(qmem.Options{WQEBBs: 64, BFSize: 256, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qm.Close() })
	q, err := sq.New(sq.Config{Mem: qm, QPN: 0x123, BF: sq.BlueFlame{UUARN: 1, Size: 256},
		QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_LOCAL_INV,
			MlxSendOps:    mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE | mlx.MLX5DV_QP_EX_WITH_MR_LIST | mlx.MLX5DV_QP_EX_WITH_MR_INTERLEAVED,
			MaxInlineData: 512, MaxSendSGE: 4, CryptoSingleBlock: !multi, CryptoMultiBlock: multi, MkeyTagSupported: true}})
	if err != nil {
		t.Fatal(err)
	}
	mem := newMemory()
	tab := mkey.NewTable(mem)
	tab.CryptoMultiBlock = multi
	return &rig{t: t, mem: mem, tab: tab, q: q, qm: qm}
}

// create makes an mkey in the table and its sq.Mkey.
func (r *rig) create(flags mlx.MkeyInitAttrFlags, maxEntries int) *sq.Mkey {
	r.t.Helper()
	k, err := r.tab.Create(1, flags, maxEntries)
	if err != nil {
		r.t.Fatal(err)
	}
	mk := sq.NewMkey(k, flags, maxEntries)
	if flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0 {
		if mk.MemPSV, mk.WirePSV, err = r.tab.PSVs(k); err != nil {
			r.t.Fatal(err)
		}
	}
	return mk
}

// post runs build in a batch with wr_flags INLINE, then hands every WQE
// it wrote (unwrapped from the ring) to ExecUMR or ExecSetPSV.
func (r *rig) post(build func(q *sq.SQ) error) error {
	r.t.Helper()
	for _, w := range r.build(build) {
		var err error
		switch mlx.Opcode(w[3]) {
		case mlx.MLX5_OPCODE_UMR:
			err = r.tab.ExecUMR(w)
		case mlx.MLX5_OPCODE_SET_PSV:
			err = r.tab.ExecSetPSV(w)
		default:
			r.t.Fatalf("unexpected opcode %#x", w[3])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// build runs build in a batch with wr_flags INLINE and returns the WQEs
// it posted.
func (r *rig) build(build func(q *sq.SQ) error) [][]byte {
	r.t.Helper()
	q := r.q
	from := q.CurPost()
	if err := q.Start(); err != nil {
		r.t.Fatal(err)
	}
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	if err := build(q); err != nil {
		q.Abort()
		r.t.Fatalf("building the work requests: %v", err)
	}
	if err := q.Complete(); err != nil {
		r.t.Fatalf("complete: %v", err)
	}
	defer q.Completed(q.Outstanding())
	return r.wqes(from, q.CurPost())
}

// wqes returns the WQEs between producer indexes from and to, each
// copied out of the ring in order.
func (r *rig) wqes(from, to uint32) [][]byte {
	ring := r.qm.SQ
	n := uint32(len(ring) / 64)
	var out [][]byte
	for pi := from; pi != to; {
		at := int(pi%n) * 64
		ds := int(binary.BigEndian.Uint32(ring[at+4:]) & 0x3f)
		bbs := uint32((ds*16 + 63) / 64)
		w := make([]byte, 0, bbs*64)
		for i := uint32(0); i < bbs; i++ {
			o := int((pi+i)%n) * 64
			w = append(w, ring[o:o+64]...)
		}
		out = append(out, w)
		pi += bbs
	}
	return out
}

// configure posts an mkey configuration: access, a list layout and the
// signature (nil: none) and crypto (nil: none) setters.
func (r *rig) configure(mk *sq.Mkey, acc mlx.AccessFlags, sges []mlx.SGE, sig *mlx.SigBlockAttr, cr *mlx.CryptoAttr) error {
	return r.post(func(q *sq.SQ) error {
		n := uint8(2)
		if sig != nil {
			n++
		}
		if cr != nil {
			n++
		}
		if err := q.MkeyConfigure(mk, n, &mlx.MkeyConfAttr{}); err != nil {
			return err
		}
		if err := q.SetMkeyAccessFlags(acc); err != nil {
			return err
		}
		if err := q.SetMkeyLayoutList(sges); err != nil {
			return err
		}
		if sig != nil {
			if err := q.SetMkeySigBlock(sig); err != nil {
				return err
			}
		}
		if cr != nil {
			return q.SetMkeyCrypto(cr)
		}
		return nil
	})
}

func crcDomain(t mlx.SigCRCType, seed uint64, bs mlx.BlockSize) *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: bs}
	d.SetSigCRC(&mlx.SigCRC{Type: t, Seed: seed})
	return d
}

func difDomain(bg uint16, app uint16, ref uint32, flags uint16, bs mlx.BlockSize) *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: bs}
	d.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: bg, AppTag: app, RefTag: ref, Flags: flags})
	return d
}

func cryptoAttr(dek *sq.DEK, encOnTx bool, order mlx.SignatureCryptoOrder, unit mlx.BlockSize, tweak uint64) *mlx.CryptoAttr {
	a := &mlx.CryptoAttr{CryptoStandard: mlx.MLX5DV_CRYPTO_STANDARD_AES_XTS, EncryptOnTx: encOnTx,
		SignatureCryptoOrder: order, DataUnitSize: unit, DEK: unsafe.Pointer(dek)}
	binary.LittleEndian.PutUint64(a.InitialTweak[:], tweak)
	return a
}

// pattern fills n bytes with a recognisable sequence.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

const rw = mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE
