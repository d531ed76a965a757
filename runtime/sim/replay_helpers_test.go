package sim_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// The replay tests run programs published with their hardware runs
// through the public device API on the simulated device; they are the
// simulator's contract for signature offload. A replay keeps the
// program's objects, layouts, lengths and addresses, and asserts the
// statuses and bytes the program saw (or checked) on the hardware.

// rpRig is one device with two connected RC QPs: a (the client or
// requester) and b (the server or responder), each with its own CQ.
type rpRig struct {
	t        *testing.T
	pd       *device.PD
	cqA, cqB *device.CQ
	a, b     *device.QP
	mustMR   func(*device.MR, error) *device.MR
	mustMkey func(*device.Mkey, error) *device.Mkey
}

func newRPRig(t *testing.T) *rpRig {
	t.Helper()
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:replay-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())))
	t.Cleanup(func() { c.Close() })
	r := &rpRig{t: t, mustMR: devicetest.Must[*device.MR](t, "RegMR"), mustMkey: devicetest.Must[*device.Mkey](t, "CreateMkey")}
	r.pd = devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	r.cqA = devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 32}))
	r.cqB = devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 32}))
	cfg := device.QPConfig{Kind: device.RC, MaxSendWR: 16, MaxRecvWR: 4, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: 256,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_SEND |
			mlx.IBV_QP_EX_WITH_LOCAL_INV,
		MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE}
	cfg.SendCQ = r.cqA
	r.a = devicetest.Must[*device.QP](t, "CreateQP a")(r.pd.CreateQP(cfg))
	cfg.SendCQ = r.cqB
	r.b = devicetest.Must[*device.QP](t, "CreateQP b")(r.pd.CreateQP(cfg))
	devicetest.ConnectPair(t, r.a, r.b)
	return r
}

// mr registers n bytes filled with fill, with local and remote access.
func (r *rpRig) mr(n int, fill byte) *device.MR {
	b := devicetest.Buffer(r.t, n)
	for i := range b {
		b[i] = fill
	}
	m := r.mustMR(r.pd.RegMR(b, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE))
	r.t.Cleanup(func() { m.Close() }) // before the buffer is unmapped
	return m
}

// sigMkey creates a signature mkey of up to entries translation entries.
func (r *rpRig) sigMkey(entries int) *device.Mkey {
	return r.mustMkey(r.pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, entries))
}

// rpQP returns the QP and CQ of side a (true) or b.
func (r *rpRig) side(a bool) (*device.QP, *device.CQ) {
	if a {
		return r.a, r.cqA
	}
	return r.b, r.cqB
}

// configure posts mlx5dv_wr_mkey_configure with access flags, the layout
// layout sets and attr (nil: no signature) on side a's or b's QP and
// waits for its completion.
func (r *rpRig) configure(a bool, mk *device.Mkey, acc mlx.AccessFlags, layout func(*sq.SQ) error, attr *mlx.SigBlockAttr) {
	r.t.Helper()
	qp, c := r.side(a)
	q := qp.SQ()
	q.SetWRID(0)
	q.SetWRFlags(mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_INLINE)
	setters := uint8(2)
	if attr != nil {
		setters = 3
	}
	err := errors.Join(q.Start(), q.MkeyConfigure(mk.Mkey(), setters, &mlx.MkeyConfAttr{}), q.SetMkeyAccessFlags(acc), layout(q))
	if err == nil && attr != nil {
		err = q.SetMkeySigBlock(attr)
	}
	if err != nil {
		q.Abort()
		r.t.Fatalf("mkey configure: %v", err)
	}
	if err := q.Complete(); err != nil {
		r.t.Fatalf("mkey configure: %v", err)
	}
	if wc := devicetest.PollOne(r.t, c); wc.Status != cq.Success || wc.Opcode != mlx.IBV_WC_DRIVER1 {
		r.t.Fatalf("mkey configure completed %+v", wc)
	}
}

// post posts one signaled work request built by build on side a or b and
// returns its completion.
func (r *rpRig) post(a bool, build func(*sq.SQ) error) cq.WC {
	r.t.Helper()
	qp, c := r.side(a)
	q := qp.SQ()
	q.SetWRID(7)
	q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := errors.Join(q.Start(), build(q)); err != nil {
		q.Abort()
		r.t.Fatalf("post: %v", err)
	}
	if err := q.Complete(); err != nil {
		r.t.Fatalf("post: %v", err)
	}
	return devicetest.PollOne(r.t, c)
}

// recv posts a receive of one SGE on side a or b.
func (r *rpRig) recv(a bool, sge mlx.SGE) {
	r.t.Helper()
	qp, _ := r.side(a)
	if err := qp.RQ().Post(9, []mlx.SGE{sge}); err != nil {
		r.t.Fatalf("post receive: %v", err)
	}
}

// drain polls side a's or b's CQ, which must hold no completion: a
// signature-error CQE there is absorbed by the poller into its mkey.
func (r *rpRig) drain(a bool) {
	r.t.Helper()
	_, c := r.side(a)
	var wc [1]cq.WC
	if n, err := c.Poll(wc[:]); n != 0 || err != nil {
		r.t.Fatalf("drain: %d completions (%+v), %v", n, wc[0], err)
	}
}

// check runs mlx5dv_mkey_check on mk and compares it with want.
func (r *rpRig) check(what string, mk *device.Mkey, want cq.MkeyErr) {
	r.t.Helper()
	got, err := mk.Check()
	if err != nil || got != want {
		r.t.Fatalf("%s: mkey check %+v (%v), want %+v", what, got, err, want)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcLE is a CRC as the device stores it: little-endian.
func crcLE(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// crc16T10 is the T10-DIF guard computed bit by bit (polynomial 0x8BB7,
// MSB first, register from seed, no final XOR).
func crc16T10(seed uint16, p []byte) uint16 {
	r := seed
	for _, b := range p {
		r ^= uint16(b) << 8
		for range 8 {
			if r&0x8000 != 0 {
				r = r<<1 ^ 0x8bb7
			} else {
				r <<= 1
			}
		}
	}
	return r
}

// dif is a T10-DIF field, big-endian as SBC-3 lays it out.
func dif(guard, app uint16, ref uint32) []byte {
	f := binary.BigEndian.AppendUint16(nil, guard)
	f = binary.BigEndian.AppendUint16(f, app)
	return binary.BigEndian.AppendUint32(f, ref)
}

// rpPattern is n bytes of a pattern that differs per block and seed.
func rpPattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i>>9) ^ seed
	}
	return b
}
