package sq_test

import (
	"fmt"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestMkeyCallsAroundRing: batches of signature configurations by the
// four calls write what ConfigureMkey writes (ring, doorbell,
// bookkeeping, mkey state) at every ring position: the four calls' fast
// path (the checker's TrySigBlock, the cached BSF) begins and ends
// everywhere once a batch has found its room, a configuration that would
// wrap takes umrFinalize instead, and the mkey's tag byte is set (a QP
// that supports it).
func TestMkeyCallsAroundRing(t *testing.T) {
	sigs := map[string]*mlx.SigBlockAttr{
		"wire dif": {Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff},
		"mem crc":  {Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xf0},
		"both":     {Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10, 0, mlx.MLX5DV_BLOCK_SIZE_4096), Wire: difDomain(3, 4, mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xff},
	}
	flagSets := []mlx.SendFlags{mlx.IBV_SEND_INLINE, mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_INLINE | mlx.IBV_SEND_FENCE}
	const acc = mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE
	sgeSets := [][]mlx.SGE{
		{{Addr: 0x1000, Length: 512, LKey: 7}},
		{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x9000, Length: 4096, LKey: 8}, {Addr: 0x20000, Length: 64, LKey: 9}, {Addr: 0x30000, Length: 8, LKey: 10}},
		{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x9000, Length: 4096, LKey: 8}, {Addr: 0x20000, Length: 0, LKey: 9}, {Addr: 0x30000, Length: 8, LKey: 10}, {Addr: 0x40000, Length: 1, LKey: 11}},
	}
	for name, sig := range sigs {
		tmpl, err := sq.NewMkeyTemplate(acc, sig)
		if err != nil {
			t.Fatal(err)
		}
		for _, flags := range flagSets {
			for per := 1; per <= 3; per++ {
				var sides [2]mkeySide // ConfigureMkey, the four calls
				for i := range sides {
					q, m := newSQSigAll(t, 32, false)
					mk := sq.NewMkey(0x4507, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 8)
					mk.MemPSV, mk.WirePSV = 0x31, 0x32
					q.SetWRFlags(flags)
					sides[i] = mkeySide{q: q, mem: m.SQ, bf: m.BF, dbr: m.DBR, mk: mk}
				}
				for batch := range 40 {
					sges := sgeSets[batch%len(sgeSets)]
					for i := range sides {
						if err := sides[i].batch(i, per, tmpl, sig, sges, acc); err != nil {
							t.Fatalf("%s flags %v per %d batch %d side %d: %v", name, flags, per, batch, i, err)
						}
					}
					sides[0].same(t, &sides[1], fmt.Sprintf("%s flags %v per %d batch %d", name, flags, per, batch))
				}
			}
		}
	}
}

// batch posts per configurations of s.mk in one batch, as form 0
// (ConfigureMkey) or 1 (the four calls), and completes them.
func (s *mkeySide) batch(form, per int, tmpl *sq.MkeyTemplate, sig *mlx.SigBlockAttr, sges []mlx.SGE, acc mlx.AccessFlags) error {
	if err := s.q.Start(); err != nil {
		return err
	}
	for range per {
		if form == 0 {
			if err := s.q.ConfigureMkey(s.mk, tmpl, sges); err != nil {
				return err
			}
			continue
		}
		s.q.MkeyConfigure(s.mk, 3, &mlx.MkeyConfAttr{})
		s.q.SetMkeyAccessFlags(acc)
		s.q.SetMkeyLayoutList(sges)
		if err := s.q.SetMkeySigBlock(sig); err != nil {
			return err
		}
	}
	if err := s.q.Complete(); err != nil {
		return err
	}
	return s.q.Completed(s.q.Outstanding())
}

// TestMkeyCallsRingRoom: the signature setter that finishes a
// configuration on the four calls' fast path (the mkey configured with
// these attributes before) needs the ring to hold the whole UMR and its
// SET_PSV: with one WQEBB fewer free (WQEs in flight, never completed)
// it fails with sq_room and writes nothing.
func TestMkeyCallsRingRoom(t *testing.T) {
	sig := &mlx.SigBlockAttr{Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x2000, Length: 512, LKey: 7}}
	const need = 5 // the UMR (ctrl and UMR ctrl, mkey context, translation, BSF) and a SET_PSV
	for _, free := range []int{need, need - 1} {
		q, mem := newSQ(t, 16, 0)
		mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 8)
		s := mkeySide{q: q, mk: mk}
		q.SetWRFlags(mlx.IBV_SEND_INLINE)
		if err := s.batch(1, 1, nil, sig, sges, mlx.IBV_ACCESS_LOCAL_WRITE); err != nil {
			t.Fatal(err) // the first configuration: the attributes validated, the mkey given them
		}
		inFlight(t, q, 16-free)
		q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{})
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
		if err := q.SetMkeyLayoutList(sges); err != nil {
			t.Fatalf("%d WQEBBs free: the layout: %v", free, err)
		}
		if free == need {
			if err := q.SetMkeySigBlock(sig); err != nil {
				t.Fatalf("%d WQEBBs free: %v", free, err)
			}
			continue
		}
		rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.SetMkeySigBlock(sig) })
	}
}

// TestMkeyLayoutRingRoom: a list layout set as the first of two setters
// (SetMkeyLayoutList's fast path) needs the ring to hold the UMR's fixed
// part and the translation: with one WQEBB fewer free it fails with
// sq_room and writes nothing.
func TestMkeyLayoutRingRoom(t *testing.T) {
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x2000, Length: 512, LKey: 7}, {Addr: 0x3000, Length: 8, LKey: 7}}
	const need = 3 // ctrl and UMR ctrl, mkey context, the translation
	for _, free := range []int{need, need - 1} {
		q, mem := newSQ(t, 16, 0)
		mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
		inFlight(t, q, 16-free)
		if err := q.MkeyConfigure(mk, 2, &mlx.MkeyConfAttr{}); err != nil {
			t.Fatal(err)
		}
		if free == need {
			if err := q.SetMkeyLayoutList(sges); err != nil {
				t.Fatalf("%d WQEBBs free: %v", free, err)
			}
			continue
		}
		rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.SetMkeyLayoutList(sges) })
	}
}

// inFlight posts n one-WQEBB WQEs that are never completed (the ring's
// room less n), then opens a batch with wr_flags IBV_SEND_INLINE.
func inFlight(t *testing.T, q *sq.SQ, n int) {
	t.Helper()
	postRaw(t, q, n)
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	q.Start()
}

// postRaw posts n one-WQEBB raw WQEs in a batch of their own, with
// wr_flags 0, moving the producer index on by n.
func postRaw(t *testing.T, q *sq.SQ, n int) {
	t.Helper()
	q.SetWRFlags(0)
	q.Start()
	for range n {
		q.RawWQE([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
}
