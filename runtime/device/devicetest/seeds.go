package devicetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// RunSeeds runs the examples of the man pages the project was written
// from (its seed documents) through the device API: the list and
// interleaved layouts of mlx5dv_wr_mkey_configure(3), Examples 1, 1.1, 2
// and 2.1 of mlx5dv_wr_set_mkey_sig_block(3), and the DCI example of
// mlx5dv_wr_post(3). A backend that executes work requests runs it beside
// Run (the simulator in CI, the hardware in scripts/hwcheck.sh). On a
// device whose Caps lack signature offload or DC, those examples check
// instead that creating what they need fails at create time, saying why.
func RunSeeds(t *testing.T, open Opener) {
	runCases(t, open, []testCase{
		{"MkeyList", seedMkeyList},
		{"MkeyInterleaved", seedMkeyInterleaved},
		{"SigExample1", seedSigExample1},
		{"SigExample1.1", seedSigExample11},
		{"SigExample2", seedSigExample2},
		{"SigExample2.1", seedSigExample21},
		{"DCIWrite", seedDCIWrite},
	})
}

// seedRig is two connected RC QPs of one context: a owns the mkeys, b is
// the peer that sends to, receives from, reads and writes them.
type seedRig struct {
	t        *testing.T
	pd       *device.PD
	cqA, cqB *device.CQ
	a, b     *device.QP
}

func newSeedRig(t *testing.T, c *device.Context) *seedRig {
	t.Helper()
	r := &seedRig{t: t, pd: Must[*device.PD](t, "AllocPD")(c.AllocPD())}
	r.cqA = Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 32}))
	r.cqB = Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 32}))
	cfg := device.QPConfig{Kind: device.RC, MaxSendWR: 16, MaxRecvWR: 4, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: 128,
		SendOps:    mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_SEND,
		MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE}
	cfg.SendCQ = r.cqA
	r.a = Must[*device.QP](t, "CreateQP a")(r.pd.CreateQP(cfg))
	cfg.SendCQ = r.cqB
	r.b = Must[*device.QP](t, "CreateQP b")(r.pd.CreateQP(cfg))
	ConnectPair(t, r.a, r.b)
	return r
}

// mr registers a buffer holding data, with local and remote access.
func (r *seedRig) mr(data []byte) *device.MR {
	b := Buffer(r.t, len(data))
	copy(b, data)
	m := Must[*device.MR](r.t, "RegMR")(r.pd.RegMR(b, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE))
	r.t.Cleanup(func() { m.Close() }) // before the buffer's region closes
	return m
}

// configure posts the mkey configuration the man page shows on a's QP
// (access, a layout, a signature when sig is not nil) and waits for it.
func (r *seedRig) configure(mk *device.Mkey, layout func(*sq.SQ) error, sig *mlx.SigBlockAttr) {
	r.t.Helper()
	q := r.a.SQ()
	q.SetWRID(1)
	setters := uint8(2)
	if sig != nil {
		setters = 3
	}
	err := errors.Join(q.Start(), q.SetWRFlags(mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE),
		q.MkeyConfigure(mk.Mkey(), setters, &mlx.MkeyConfAttr{}),
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE), layout(q))
	if err == nil && sig != nil {
		err = q.SetMkeySigBlock(sig)
	}
	if err != nil {
		q.Abort()
		r.t.Fatalf("mkey configure: %v", err)
	}
	if err := q.Complete(); err != nil {
		r.t.Fatalf("mkey configure: %v", err)
	}
	if wc := PollOne(r.t, r.cqA); wc.Status != cq.Success {
		r.t.Fatalf("mkey configure completed %+v", wc)
	}
}

// post posts one signaled work request on a's (or b's) QP and returns its
// completion.
func (r *seedRig) post(onA bool, build func(*sq.SQ) error) cq.WC {
	r.t.Helper()
	qp, c := r.b, r.cqB
	if onA {
		qp, c = r.a, r.cqA
	}
	q := qp.SQ()
	q.SetWRID(7)
	if err := errors.Join(q.Start(), q.SetWRFlags(mlx.IBV_SEND_SIGNALED), build(q)); err != nil {
		q.Abort()
		r.t.Fatalf("post: %v", err)
	}
	if err := q.Complete(); err != nil {
		r.t.Fatalf("post: %v", err)
	}
	return PollOne(r.t, c)
}

// mkeyChecks fails t unless mlx5dv_mkey_check finds no signature error.
func (r *seedRig) mkeyChecks(what string, mk *device.Mkey) {
	r.t.Helper()
	if got, err := mk.Check(); err != nil || got.Type != mlx.MLX5DV_MKEY_NO_ERR {
		r.t.Fatalf("%s: mkey check %+v (%v), want no error", what, got, err)
	}
}

func seedMkeyList(t *testing.T, c *device.Context) {
	r := newSeedRig(t, c)
	mr1, mr2 := r.mr(make([]byte, 64)), r.mr(make([]byte, 4096))
	mk := Must[*device.Mkey](t, "CreateMkey")(r.pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 2))
	r.configure(mk, func(q *sq.SQ) error {
		return q.SetMkeyLayoutList([]mlx.SGE{{Addr: mr1.Addr, Length: 64, LKey: mr1.LKey}, {Addr: mr2.Addr, Length: 4096, LKey: mr2.LKey}})
	}, nil)
	// "The first 64 bytes will go to memory referenced by mr1. The next
	// 4096 bytes will go to memory referenced by mr2."
	data := seedPattern(64+4096, 3)
	src := r.mr(data)
	if wc := r.post(false, func(q *sq.SQ) error {
		return errors.Join(q.RDMAWrite(mk.LKey(), 0), q.SetSGE(src.LKey, src.Addr, uint32(len(data))))
	}); wc.Status != cq.Success {
		t.Fatalf("RDMA WRITE through the mkey: %v", wc.Err())
	}
	if !bytes.Equal(mr1.Bytes(), data[:64]) || !bytes.Equal(mr2.Bytes(), data[64:]) {
		t.Fatal("the write was not scattered 64 bytes to mr1, 4096 to mr2")
	}
}

func seedMkeyInterleaved(t *testing.T, c *device.Context) {
	r := newSeedRig(t, c)
	mr1, mr2 := r.mr(make([]byte, 2*516)), r.mr(make([]byte, 16))
	mk := Must[*device.Mkey](t, "CreateMkey")(r.pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4))
	r.configure(mk, func(q *sq.SQ) error {
		return q.SetMkeyLayoutInterleaved(2, []mlx.MRInterleaved{
			{Addr: mr1.Addr, BytesCount: 512, BytesSkip: 4, LKey: mr1.LKey}, {Addr: mr2.Addr, BytesCount: 8, LKey: mr2.LKey}})
	}, nil)
	data := seedPattern(2*(512+8), 5)
	src := r.mr(data)
	if wc := r.post(false, func(q *sq.SQ) error {
		return errors.Join(q.RDMAWrite(mk.LKey(), 0), q.SetSGE(src.LKey, src.Addr, uint32(len(data))))
	}); wc.Status != cq.Success {
		t.Fatalf("RDMA WRITE through the mkey: %v", wc.Err())
	}
	// 512 bytes to mr1 at 0, 8 to mr2 at 0, 512 to mr1 at 516, 8 to mr2
	// at 8; the 4 skipped bytes of mr1 are left alone.
	m1, m2 := mr1.Bytes(), mr2.Bytes()
	if !bytes.Equal(m1[:512], data[:512]) || !bytes.Equal(m2[:8], data[512:520]) ||
		!bytes.Equal(m1[516:1028], data[520:1032]) || !bytes.Equal(m2[8:16], data[1032:]) ||
		!bytes.Equal(m1[512:516], make([]byte, 4)) {
		t.Fatal("the write was not scattered as the interleaved layout says")
	}
}

// sigMkey creates a signature mkey, or checks that a device without
// signature offload refuses one (and reports false).
func sigMkey(t *testing.T, c *device.Context, pd *device.PD) (*device.Mkey, bool) {
	t.Helper()
	mk, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	if !c.Info().Caps.Signature {
		if err == nil {
			mk.Close()
			t.Fatal("a signature mkey was created on a device whose caps lack signature offload")
		}
		t.Logf("no signature offload: CreateMkey refused it: %v", err)
		return nil, false
	}
	if err != nil {
		t.Fatalf("CreateMkey (block signature): %v", err)
	}
	return mk, true
}

// crcDomain is a CRC32 signature domain of 512-byte blocks.
func crcDomain() *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	d.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff})
	return d
}

// seedSigExample1: memory CRC32 every 512 bytes, wire none; a SEND with
// the mkey as its local key checks the CRC, strips it and sends 512 bytes.
func seedSigExample1(t *testing.T, c *device.Context) {
	r := newSeedRig(t, c)
	mk, ok := sigMkey(t, c, r.pd)
	if !ok {
		return
	}
	data := seedPattern(512, 7)
	mem := r.mr(append(append([]byte{}, data...), seedCRC32(data)...))
	r.configure(mk, seedList(mem, 516), &mlx.SigBlockAttr{Mem: crcDomain(), CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32)})
	dst := r.mr(make([]byte, 516))
	if err := r.b.RQ().Post(9, []mlx.SGE{{Addr: dst.Addr, Length: 516, LKey: dst.LKey}}); err != nil {
		t.Fatal(err)
	}
	if wc := r.post(true, func(q *sq.SQ) error { return errors.Join(q.Send(), q.SetSGE(mk.LKey(), 0, 512)) }); wc.Status != cq.Success {
		t.Fatalf("SEND through the signature mkey: %v", wc.Err())
	}
	if wc := PollOne(t, r.cqB); wc.Status != cq.Success || wc.ByteLen != 512 {
		t.Fatalf("the peer's receive: %+v (%v), want 512 bytes", wc, wc.Err())
	}
	if !bytes.Equal(dst.Bytes()[:512], data) {
		t.Fatal("the peer did not receive the 512 data bytes")
	}
	r.mkeyChecks("SEND", mk)
}

// seedSigExample11: the same mkey receives: the device scatters the data
// and generates a CRC32 after each 512 bytes.
func seedSigExample11(t *testing.T, c *device.Context) {
	r := newSeedRig(t, c)
	mk, ok := sigMkey(t, c, r.pd)
	if !ok {
		return
	}
	mem := r.mr(make([]byte, 516))
	r.configure(mk, seedList(mem, 516), &mlx.SigBlockAttr{Mem: crcDomain(), CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32)})
	if err := r.a.RQ().Post(9, []mlx.SGE{{Addr: 0, Length: 512, LKey: mk.LKey()}}); err != nil {
		t.Fatal(err)
	}
	data := seedPattern(512, 11)
	src := r.mr(data)
	if wc := r.post(false, func(q *sq.SQ) error { return errors.Join(q.Send(), q.SetSGE(src.LKey, src.Addr, 512)) }); wc.Status != cq.Success {
		t.Fatalf("the peer's SEND: %v", wc.Err())
	}
	if wc := PollOne(t, r.cqA); wc.Status != cq.Success {
		t.Fatalf("RECV through the signature mkey: %v", wc.Err())
	}
	if want := append(append([]byte{}, data...), seedCRC32(data)...); !bytes.Equal(mem.Bytes(), want) {
		t.Fatalf("memory holds % x... and CRC % x, want the data and CRC % x", mem.Bytes()[:8], mem.Bytes()[512:], want[512:])
	}
}

// t10Domain is a T10-DIF signature domain of 4096-byte blocks.
func t10Domain() *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	d.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 0x1234, RefTag: 0x0a0b0c0d})
	return d
}

// seedSigExample2: memory none, wire T10-DIF every 4096 bytes; the peer's
// RDMA READ through the mkey gets the data with a generated DIF field.
func seedSigExample2(t *testing.T, c *device.Context) {
	r := newSeedRig(t, c)
	mk, ok := sigMkey(t, c, r.pd)
	if !ok {
		return
	}
	data := seedPattern(4096, 13)
	mem := r.mr(data)
	r.configure(mk, seedList(mem, 4096), &mlx.SigBlockAttr{Wire: t10Domain(), CheckMask: 0xff})
	dst := r.mr(make([]byte, 4104))
	if wc := r.post(false, func(q *sq.SQ) error {
		return errors.Join(q.RDMARead(mk.LKey(), 0), q.SetSGE(dst.LKey, dst.Addr, 4104))
	}); wc.Status != cq.Success {
		t.Fatalf("RDMA READ through the signature mkey: %v", wc.Err())
	}
	want := append(append([]byte{}, data...), seedDIF(data, 0x1234, 0x0a0b0c0d)...)
	if !bytes.Equal(dst.Bytes(), want) {
		t.Fatalf("read % x after the data, want the DIF % x", dst.Bytes()[4096:], want[4096:])
	}
}

// seedSigExample21: the peer RDMA WRITEs data with its DIF field; the
// device checks the field, strips it and stores the 4096 data bytes.
func seedSigExample21(t *testing.T, c *device.Context) {
	r := newSeedRig(t, c)
	mk, ok := sigMkey(t, c, r.pd)
	if !ok {
		return
	}
	mem := r.mr(make([]byte, 4096))
	r.configure(mk, seedList(mem, 4096), &mlx.SigBlockAttr{Wire: t10Domain(), CheckMask: 0xff})
	data := seedPattern(4096, 17)
	src := r.mr(append(append([]byte{}, data...), seedDIF(data, 0x1234, 0x0a0b0c0d)...))
	if wc := r.post(false, func(q *sq.SQ) error {
		return errors.Join(q.RDMAWrite(mk.LKey(), 0), q.SetSGE(src.LKey, src.Addr, 4104))
	}); wc.Status != cq.Success {
		t.Fatalf("RDMA WRITE through the signature mkey: %v", wc.Err())
	}
	if !bytes.Equal(mem.Bytes(), data) {
		t.Fatal("memory does not hold the 4096 data bytes")
	}
	var none [1]cq.WC
	if n, err := r.cqA.Poll(none[:]); n != 0 || err != nil {
		t.Fatalf("the mkey owner's CQ: %d completions (%+v), %v; want none", n, none[0], err)
	}
	r.mkeyChecks("RDMA WRITE", mk)
}

// seedDCIWrite is mlx5dv_wr_post(3)'s example: a DCI's RDMA write to a
// DCT, addressed per work request (here the device's own port).
func seedDCIWrite(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	const key = 0x5eed
	if !c.Info().Caps.DC {
		if _, err := pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 4, MaxSendSGE: 1}); err == nil {
			t.Fatal("a DCI was created on a device whose caps lack DC")
		}
		return
	}
	srq := Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	dct := Must[*device.QP](t, "CreateQP DCT")(pd.CreateQP(device.QPConfig{Kind: device.DCT, SendCQ: q, DCAccessKey: key, SRQ: srq}))
	dci := Must[*device.QP](t, "CreateQP DCI")(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 4, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}))
	for _, qp := range []*device.QP{dct, dci} {
		if err := qp.Activate(); err != nil {
			t.Fatal(err)
		}
	}
	buf, dst := Buffer(t, 64), Buffer(t, 64)
	copy(buf, "written by a DCI")
	src := Must[*device.MR](t, "RegMR")(pd.RegMR(buf, device.DefaultAccess))
	to := Must[*device.MR](t, "RegMR")(pd.RegMR(dst, device.DefaultAccess))
	t.Cleanup(func() { src.Close(); to.Close() })
	port := Must[device.Port](t, "Port")(c.Port())
	var ah sq.AH
	ah.AV.SetRlid(port.LID)
	s := dci.SQ()
	s.SetWRID(1)
	if err := errors.Join(s.Start(), s.SetWRFlags(mlx.IBV_SEND_SIGNALED), s.RDMAWrite(to.RKey, to.Addr),
		s.SetSGE(src.LKey, src.Addr, 16), s.SetDCAddr(&ah, dct.QPN(), key)); err != nil {
		s.Abort()
		t.Fatal(err)
	}
	if err := s.Complete(); err != nil {
		t.Fatal(err)
	}
	if wc := PollOne(t, q); wc.Status != cq.Success || wc.WRID != 1 {
		t.Fatalf("DCI write: %+v (%v)", wc, wc.Err())
	}
	if !bytes.Equal(dst[:16], buf[:16]) {
		t.Fatalf("the DCT's memory holds %q", dst[:16])
	}
}

// seedList is a list layout of one entry over the first n bytes of m.
func seedList(m *device.MR, n uint32) func(*sq.SQ) error {
	return func(q *sq.SQ) error { return q.SetMkeyLayoutList([]mlx.SGE{{Addr: m.Addr, Length: n, LKey: m.LKey}}) }
}

// seedPattern is n bytes that differ per byte and seed.
func seedPattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>8) ^ seed
	}
	return b
}

// seedCRC32 is a CRC32 field as the device stores it: little-endian (see
// docs/simulator.md's ledger, crc-byte-order).
func seedCRC32(p []byte) []byte { return binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(p)) }

// seedDIF is the T10-DIF field of one block (SBC-3: big-endian guard,
// application tag, reference tag; the guard is CRC-16 polynomial 0x8BB7
// from the seed 0xffff the domain's BG gives).
func seedDIF(p []byte, app uint16, ref uint32) []byte {
	g := uint16(0xffff)
	for _, b := range p {
		g ^= uint16(b) << 8
		for range 8 {
			if g&0x8000 != 0 {
				g = g<<1 ^ 0x8bb7
			} else {
				g <<= 1
			}
		}
	}
	f := binary.BigEndian.AppendUint16(nil, g)
	f = binary.BigEndian.AppendUint16(f, app)
	return binary.BigEndian.AppendUint32(f, ref)
}
