package sq_test

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

func crcDomain(t mlx.SigCRCType, seed uint64, bs mlx.BlockSize) *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: bs}
	d.SetSigCRC(&mlx.SigCRC{Type: t, Seed: seed})
	return d
}

func difDomain(app uint16, ref uint32, bs mlx.BlockSize) *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: bs}
	d.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: app, RefTag: ref, Flags: 1})
	return d
}

// TestConfigureMkeyMatchesCalls: ConfigureMkey writes what the four calls
// write (ring, doorbell, bookkeeping, mkey state), for plain and signature
// mkeys, any domains, flags and ring position, in its fast path and in
// its fallback (a fresh signature mkey has an error-count update pending).
func TestConfigureMkeyMatchesCalls(t *testing.T) {
	sigs := map[string]*mlx.SigBlockAttr{
		"none":      nil,
		"wire dif":  {Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff},
		"mem crc":   {Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xf0},
		"both crc":  {Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10, 0, mlx.MLX5DV_BLOCK_SIZE_4096), Wire: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10, ^uint64(0), mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xff},
		"copy mask": {Mem: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_520), Wire: difDomain(1, 3, mlx.MLX5DV_BLOCK_SIZE_520), Flags: mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK, CopyMask: 0x3c},
	}
	flagSets := []mlx.SendFlags{mlx.IBV_SEND_INLINE, mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_INLINE | mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED}
	for name, sig := range sigs {
		for fi := range 2 * len(flagSets) {
			// Each wr_flags without and with sq_sig_all (CE on every WQE:
			// the memory domain's SET_PSV keeps it).
			flags, sigAll := flagSets[fi%len(flagSets)], fi >= len(flagSets)
			// UMRs start at, and wrap around, the end of the ring of 16
			// WQEBBs, in both rounds: the second starts where the first
			// (5 or 6 WQEBBs with a signature) ended, so that the fast
			// path's image is written whole for some and wraps for others.
			for _, skip := range []int{0, 5, 6, 7, 11, 13, 14, 15} {
				tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ, sig)
				if err != nil {
					t.Fatal(err)
				}
				var sides [3]mkeySide // ConfigureMkey, the four calls, PostConfigureMkey
				for i := range sides {
					sides[i] = newMkeySide(t, sig != nil, sigAll, skip, flags)
				}
				sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x9000, Length: 1024, LKey: 8}, {Addr: 0x20000, Length: 0, LKey: 9}}
				// Twice: a fresh signature mkey goes the long way first.
				for round := 0; round < 2; round++ {
					for i := range sides {
						if err := sides[i].configure(i, tmpl, sig, sges); err != nil {
							t.Fatalf("%s side %d: %v", name, i, err)
						}
					}
					for _, a := range []*mkeySide{&sides[0], &sides[2]} {
						where := fmt.Sprintf("%s flags %v %s skip %d round %d", name, flags, map[bool]string{true: "Post", false: "in a batch"}[a == &sides[2]], skip, round)
						a.same(t, &sides[1], where)
					}
				}
			}
		}
	}
}

// mkeySide is a writer of TestConfigureMkeyMatchesCalls, its queue's
// memory and its mkey.
type mkeySide struct {
	q            *sq.SQ
	mem, bf, dbr []byte
	mk           *sq.Mkey
}

// newMkeySide makes a side whose ring has skip WQEBBs posted and
// completed, with wr_flags flags.
func newMkeySide(t *testing.T, sig, sigAll bool, skip int, flags mlx.SendFlags) mkeySide {
	q, m := newSQSigAll(t, 16, sigAll)
	flagsMk := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	if sig {
		flagsMk |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	}
	mk := sq.NewMkey(0x4500, flagsMk, 8)
	mk.MemPSV, mk.WirePSV = 0x31, 0x32
	postRaw(t, q, skip)
	q.Completed(q.Outstanding())
	q.SetWRFlags(flags)
	return mkeySide{q: q, mem: m.SQ, bf: m.BF, dbr: m.DBR, mk: mk}
}

// configure posts one configuration, as form 0 (ConfigureMkey in a
// batch), 1 (the four calls) or 2 (PostConfigureMkey), and completes it.
func (s *mkeySide) configure(form int, tmpl *sq.MkeyTemplate, sig *mlx.SigBlockAttr, sges []mlx.SGE) error {
	if form == 2 {
		if err := s.q.PostConfigureMkey(s.mk, tmpl, sges); err != nil {
			return err
		}
		return s.q.Completed(s.q.Outstanding())
	}
	s.q.Start()
	if form == 0 {
		if err := s.q.ConfigureMkey(s.mk, tmpl, sges); err != nil {
			return err
		}
	} else {
		n := uint8(2)
		if sig != nil {
			n = 3
		}
		s.q.MkeyConfigure(s.mk, n, &mlx.MkeyConfAttr{})
		s.q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_READ)
		s.q.SetMkeyLayoutList(sges)
		if sig != nil {
			s.q.SetMkeySigBlock(sig)
		}
	}
	if err := s.q.Complete(); err != nil {
		return err
	}
	return s.q.Completed(s.q.Outstanding())
}

// same fails unless a and b hold the same queue (ring, register,
// doorbell record, bookkeeping) and state (mkey, cached fence, producer
// index, Last).
func (a *mkeySide) same(t *testing.T, b *mkeySide, where string) {
	t.Helper()
	if !bytes.Equal(a.mem, b.mem) || !bytes.Equal(a.bf, b.bf) || !bytes.Equal(a.dbr, b.dbr) {
		t.Fatalf("%s: different queues", where)
	}
	for j := range a.q.Slots {
		if a.q.Slots[j] != b.q.Slots[j] {
			t.Fatalf("%s: bookkeeping of slot %d differs", where, j)
		}
	}
	if !a.mk.SameState(b.mk) || a.q.FmCache() != b.q.FmCache() || a.q.CurPost() != b.q.CurPost() || a.q.Last != b.q.Last {
		t.Fatalf("%s: state differs:\n%+v\n%+v", where, *a.mk, *b.mk)
	}
}

// newSQSigAll is newSQ (no max_post) with sq_sig_all as given.
func newSQSigAll(t testing.TB, n int, sigAll bool) (*sq.SQ, *qmem.Memory) {
	t.Helper()
	return mustSQConf(t, n, func(c *sq.Config) { c.SigAll = sigAll })
}

// TestConfigureMkeyRules: a template's attributes are checked once, and
// the per-use checks still apply.
func TestConfigureMkeyRules(t *testing.T) {
	if _, err := sq.NewMkeyTemplate(0x10, nil); err == nil {
		t.Fatal("MW_BIND access accepted")
	}
	if _, err := sq.NewMkeyTemplate(0, &mlx.SigBlockAttr{}); err == nil {
		t.Fatal("a signature without domains accepted")
	}
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, mem := newSQ(t, 64, 0)
	mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	q.SetWRFlags(0) // no INLINE
	q.Start()
	rejects(t, mem, "mkey_configure.inline", syscall.EOPNOTSUPP, func() error { return q.ConfigureMkey(mk, tmpl, []mlx.SGE{{Length: 1}}) })
	q.Abort()
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	q.Start()
	rejects(t, mem, "create_mkey.max_entries", syscall.ENOMEM, func() error { return q.ConfigureMkey(mk, tmpl, make([]mlx.SGE, 5)) })
	q.Abort()
}

// TestConfigureMkeyRejectsWriteNothing: ConfigureMkey's general path,
// which a fresh signature mkey always takes, checks every rule before it
// writes: a rejected configuration leaves the ring as it was (it left 188
// bytes for a copy mask across block structures, 2 for a configuration
// without a signature after an aborted batch).
func TestConfigureMkeyRejectsWriteNothing(t *testing.T) {
	sigFlags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}}
	q, mem := newSQ(t, 16, 0)
	q.SetWRFlags(mlx.IBV_SEND_INLINE)

	// A copy mask between domains of different block sizes.
	copyMask, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &mlx.SigBlockAttr{
		Mem: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_520),
		Flags: mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK, CopyMask: 0x30, CheckMask: 0xff})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	rejects(t, mem, "sig.copy_mask.structure", syscall.EINVAL, func() error { return q.ConfigureMkey(sq.NewMkey(0x4500, sigFlags, 8), copyMask, sges) })
	rejects(t, mem, "sig.copy_mask.structure", syscall.EINVAL, q.Complete)

	// After an aborted configuration, a signature mkey's next one must set
	// or reset its signature.
	mk := sq.NewMkey(0x4600, sigFlags, 8)
	plain, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	if err := q.MkeyConfigure(mk, 0, &mlx.MkeyConfAttr{}); err != nil {
		t.Fatal(err)
	}
	q.Abort()
	q.Start()
	rejects(t, mem, "sig.mkey_state", syscall.EINVAL, func() error { return q.ConfigureMkey(mk, plain, sges) })
	q.Abort()
}

// TestBurstFallbackMatchesCalls: the burst's general path (a DCI) writes
// what the calls write.
func TestBurstFallbackMatchesCalls(t *testing.T) {
	a, amem := newDCI(t)
	b, bmem := newDCI(t)
	ah := &sq.AH{}
	r := sq.RDMAWriteReq{WRID: 9, Raddr: 0x5000, Addr: 0x7000, RKey: 0x11, LKey: 0x22, Length: 64}
	for i := 0; i < 12; i++ { // around the ring
		a.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		b.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		a.Start()
		b.Start()
		if err := a.RDMAWriteBurst([]sq.RDMAWriteReq{r}); err != nil {
			t.Fatal(err)
		}
		b.SetWRID(r.WRID)
		b.RDMAWrite(r.RKey, r.Raddr)
		b.SetSGE(r.LKey, r.Addr, r.Length)
		for _, q := range []*sq.SQ{a, b} {
			if err := q.SetDCAddr(ah, 0x20, 0x1234); err != nil {
				t.Fatal(err)
			}
			if err := q.Complete(); err != nil {
				t.Fatal(err)
			}
			q.Completed(q.Outstanding())
		}
		if !bytes.Equal(amem.SQ, bmem.SQ) || !bytes.Equal(amem.DBR, bmem.DBR) || !bytes.Equal(amem.BF, bmem.BF) || a.Slots[0] != b.Slots[0] {
			t.Fatalf("round %d: the burst and the calls wrote different queues", i)
		}
		r.Length = uint32(i % 2 * 64)
	}
	a.Start()
	rejects(t, amem, "wr_post.dc_addr_required", syscall.EINVAL, func() error { return a.RDMAWriteBurst(make([]sq.RDMAWriteReq, 2)) })
	a.Abort()
}

// TestConfigureMkeyRingRoom: with the WQEBBs a configuration needs free
// in the ring, and one fewer, ConfigureMkey does what the four calls do:
// it fits exactly, or fails with sq_room (the ring, not max_post, is
// short) and writes nothing.
func TestConfigureMkeyRingRoom(t *testing.T) {
	sig := &mlx.SigBlockAttr{Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, sig)
	if err != nil {
		t.Fatal(err)
	}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x2000, Length: 512, LKey: 7}}
	const need = 5 // the UMR (ctrl and UMR ctrl, mkey context, translation, BSF) and a SET_PSV
	for _, free := range []int{need, need - 1} {
		q, mem := newSQ(t, 16, 0)
		mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 8)
		mk.ErrCountUpdated = false // the template's common case
		inFlight(t, q, 16-free)
		if free == need {
			if err := q.ConfigureMkey(mk, tmpl, sges); err != nil {
				t.Fatalf("%d WQEBBs free: %v", free, err)
			}
			continue
		}
		rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.ConfigureMkey(mk, tmpl, sges) })
	}
}

// TestConfigureMkeyAbsentDomain: after a configuration with both
// signature domains, a template with the wire domain only leaves the mkey
// as the four calls do (the memory domain absent, the rest of it as the
// signature setter leaves it), on its fast path.
func TestConfigureMkeyAbsentDomain(t *testing.T) {
	both := &mlx.SigBlockAttr{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_512),
		Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	wire := &mlx.SigBlockAttr{Wire: difDomain(3, 4, mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0x0f}
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, wire)
	if err != nil {
		t.Fatal(err)
	}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 4096, LKey: 7}}
	var mks [2]*sq.Mkey
	for i := range mks {
		q, _ := newSQSigAll(t, 64, false)
		mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 8)
		mks[i] = mk
		q.SetWRFlags(mlx.IBV_SEND_INLINE)
		for _, sig := range []*mlx.SigBlockAttr{both, wire} {
			q.Start()
			if i == 0 && sig == wire {
				if q.ConfigureMkey(mk, tmpl, sges) != nil || mk.Wire.T10dif.AppTag != 3 {
					t.Fatal("the template's configuration failed")
				}
			} else {
				q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{})
				q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
				q.SetMkeyLayoutList(sges)
				q.SetMkeySigBlock(sig)
			}
			if err := q.Complete(); err != nil {
				t.Fatal(err)
			}
			q.Completed(q.Outstanding())
		}
	}
	if !mks[0].SameState(mks[1]) {
		t.Fatalf("template and four calls leave different mkeys:\n%+v\n%+v", *mks[0], *mks[1])
	}
}

// TestPostConfigureMkeyInBatchAndFull: PostConfigureMkey inside an open
// batch answers what Start answers there (and the batch goes on, as after
// Start), and on a ring the configuration does not fit it answers what
// the calls answer and writes nothing.
func TestPostConfigureMkeyInBatchAndFull(t *testing.T) {
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &mlx.SigBlockAttr{Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff})
	if err != nil {
		t.Fatal(err)
	}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}}
	sigFlags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	var qs [2]*sq.SQ
	var mems [2]*qmem.Memory
	for i := range qs {
		qs[i], mems[i] = newSQ(t, 8, 0)
		qs[i].SetWRFlags(mlx.IBV_SEND_INLINE)
	}
	one, two := qs[0], qs[1]
	mk1, mk2 := sq.NewMkey(0x4500, sigFlags, 4), sq.NewMkey(0x4500, sigFlags, 4)
	one.Start()
	two.Start()
	sameError(t, one.PostConfigureMkey(mk1, tmpl, sges), two.Start())
	one.RDMAWriteSGE(1, 2, 3, 4, 64)
	two.RDMAWriteSGE(1, 2, 3, 4, 64)
	sameError(t, one.Complete(), two.Complete())
	if !bytes.Equal(mems[0].SQ, mems[1].SQ) || one.Head() != two.Head() {
		t.Fatal("the batch went on differently after PostConfigureMkey's error")
	}
	// A ring of 8 WQEBBs with 4 outstanding: the UMR, its translation,
	// BSF and SET_PSV (5 WQEBBs) do not fit; nothing completes in between.
	raw := make([]byte, 64)
	raw[7] = 4 // ds: 4 16-byte units
	for _, q := range qs {
		q.Start()
		for range 3 {
			q.RawWQE(raw)
		}
		if err := q.Complete(); err != nil {
			t.Fatal(err)
		}
	}
	e1, err := rejected(t, mems[0], func() error { return one.PostConfigureMkey(mk1, tmpl, sges) })
	two.Start()
	e2 := two.ConfigureMkey(mk2, tmpl, sges)
	two.Complete()
	sameError(t, e1, e2)
	if one.Head() != two.Head() || one.CurPost() != two.CurPost() {
		t.Fatalf("after a full ring: head %d, %d; producer index %d, %d", one.Head(), two.Head(), one.CurPost(), two.CurPost())
	}
}
