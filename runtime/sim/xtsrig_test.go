package sim_test

import (
	"bufio"
	"crypto/aes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim"
)

// xtsRig is two connected RC QPs of one simulated device: a owns a
// crypto mkey over mem; b's buffer wire is what travels (an RDMA target,
// READ source and SEND destination). Sends complete on scq, receives on
// rcq.
type xtsRig struct {
	t         *testing.T
	c         *device.Context
	pd        *device.PD
	scq, rcq  *device.CQ
	a, b      *device.QP
	mem, wire *device.MR
	mk        *device.Mkey
	deks      map[string]*device.DEK // by key
}

// rigBytes is the size of mem and wire: two 4096-byte data units with a
// signature field each fit.
const rigBytes = 3 * 4096

// newXTSRig opens device name and builds the rig; sig adds
// BLOCK_SIGNATURE to the mkey's flags.
func newXTSRig(t *testing.T, name string, sig bool) *xtsRig {
	t.Helper()
	r := &xtsRig{t: t, deks: map[string]*device.DEK{}}
	// The buffers first: cleanups run last first, and a buffer closes
	// only after the context deregistered its MR.
	memBuf, wireBuf := devicetest.Buffer(t, rigBytes), devicetest.Buffer(t, rigBytes)
	r.c = devicetest.Must[*device.Context](t, "Open")(device.Open(name))
	t.Cleanup(func() { r.c.Close() })
	r.pd = devicetest.Must[*device.PD](t, "AllocPD")(r.c.AllocPD())
	r.scq = devicetest.Must[*device.CQ](t, "CreateCQ")(r.c.CreateCQ(device.CQConfig{CQEs: 16}))
	r.rcq = devicetest.Must[*device.CQ](t, "CreateCQ")(r.c.CreateCQ(device.CQConfig{CQEs: 16}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: r.scq, RecvCQ: r.rcq, MaxSendWR: 8, MaxRecvWR: 4,
		MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 256,
		SendOps:    mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_SEND,
		MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE}
	r.a = devicetest.Must[*device.QP](t, "CreateQP a")(r.pd.CreateQP(cfg))
	r.b = devicetest.Must[*device.QP](t, "CreateQP b")(r.pd.CreateQP(cfg))
	devicetest.ConnectPair(t, r.a, r.b)
	all := mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ
	r.mem = devicetest.Must[*device.MR](t, "RegMR mem")(r.pd.RegMR(memBuf, all))
	r.wire = devicetest.Must[*device.MR](t, "RegMR wire")(r.pd.RegMR(wireBuf, all))
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	if sig {
		flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	}
	r.mk = devicetest.Must[*device.Mkey](t, "CreateMkey")(r.pd.CreateMkey(flags, 1))
	return r
}

// dek returns the rig's DEK of key (32 bytes: AES-128-XTS, 64:
// AES-256-XTS), creating it on first use.
func (r *xtsRig) dek(key []byte) *device.DEK {
	r.t.Helper()
	if d := r.deks[string(key)]; d != nil {
		return d
	}
	size := mlx.MLX5DV_CRYPTO_KEY_SIZE_128
	if len(key) == 64 {
		size = mlx.MLX5DV_CRYPTO_KEY_SIZE_256
	}
	d := devicetest.Must[*device.DEK](r.t, "CreateDEK")(r.pd.CreateDEK(device.DEKConfig{KeySize: size, Key: key}))
	r.deks[string(key)] = d
	return d
}

// cryptoAttr is AES-XTS with key's DEK, data units of unit, and the
// 128-bit initial tweak lo + hi<<64 (little-endian, as the man page asks).
func (r *xtsRig) cryptoAttr(key []byte, encOnTx bool, order mlx.SignatureCryptoOrder, unit mlx.BlockSize, lo, hi uint64) *mlx.CryptoAttr {
	a := &mlx.CryptoAttr{CryptoStandard: mlx.MLX5DV_CRYPTO_STANDARD_AES_XTS, EncryptOnTx: encOnTx,
		SignatureCryptoOrder: order, DataUnitSize: unit, DEK: unsafe.Pointer(r.dek(key).DEK())}
	a.InitialTweak = tweak128(lo, hi)
	return a
}

// configure gives the mkey the first n bytes of mem as its layout, sig
// (nil: none) and crypto, with a UMR on a. It returns the work request
// builders' error (the batch is aborted), and fails the test if the UMR
// completes with an error.
func (r *xtsRig) configure(n int, sig *mlx.SigBlockAttr, crypto *mlx.CryptoAttr) error {
	r.t.Helper()
	s := r.a.SQ()
	s.SetWRID(1)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_INLINE)
	setters := 3
	if sig != nil {
		setters++
	}
	errs := []error{s.Start(), s.MkeyConfigure(r.mk.Mkey(), uint8(setters), &mlx.MkeyConfAttr{}),
		s.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE),
		s.SetMkeyLayoutList([]mlx.SGE{{Addr: r.mem.Addr, Length: uint32(n), LKey: r.mem.LKey}})}
	if sig != nil {
		errs = append(errs, s.SetMkeySigBlock(sig))
	}
	errs = append(errs, s.SetMkeyCrypto(crypto))
	if err := errors.Join(errs...); err != nil {
		s.Abort()
		return err
	}
	if err := s.Complete(); err != nil {
		return err
	}
	r.done(r.scq, 1, "mkey configure")
	return nil
}

// done polls q's next completion and fails the test unless it is wrid's
// and a success.
func (r *xtsRig) done(q *device.CQ, wrid uint64, what string) cq.WC {
	r.t.Helper()
	wc := devicetest.PollOne(r.t, q)
	if wc.WRID != wrid || wc.Status != cq.Success {
		r.t.Fatalf("%s: completion %d %v, want %d success", what, wc.WRID, wc.Status, wrid)
	}
	return wc
}

// post runs one signaled work request on q's send queue.
func (r *xtsRig) post(q *device.QP, wrid uint64, build func() error) {
	r.t.Helper()
	s := q.SQ()
	s.SetWRID(wrid)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := errors.Join(s.Start(), build(), s.Complete()); err != nil {
		r.t.Fatal(err)
	}
}

// write RDMA-writes the mkey's first n (memory-domain) bytes to wire.
func (r *xtsRig) write(n int) {
	r.t.Helper()
	s := r.a.SQ()
	r.post(r.a, 2, func() error {
		return errors.Join(s.RDMAWrite(r.wire.RKey, r.wire.Addr), s.SetSGE(r.mk.LKey(), 0, uint32(n)))
	})
	r.done(r.scq, 2, "RDMA WRITE through the mkey")
}

// read RDMA-reads wire back into the mkey's first n bytes.
func (r *xtsRig) read(n int) {
	r.t.Helper()
	s := r.a.SQ()
	r.post(r.a, 3, func() error {
		return errors.Join(s.RDMARead(r.wire.RKey, r.wire.Addr), s.SetSGE(r.mk.LKey(), 0, uint32(n)))
	})
	r.done(r.scq, 3, "RDMA READ through the mkey")
}

// send SENDs the mkey's first n bytes into wire (b's receive) and returns
// the bytes received.
func (r *xtsRig) send(n int) uint32 {
	r.t.Helper()
	if err := r.b.RQ().Post(4, []rq.SGE{{Addr: r.wire.Addr, Length: rigBytes, LKey: r.wire.LKey}}); err != nil {
		r.t.Fatal(err)
	}
	s := r.a.SQ()
	r.post(r.a, 5, func() error { return errors.Join(s.Send(), s.SetSGE(r.mk.LKey(), 0, uint32(n))) })
	r.done(r.scq, 5, "SEND through the mkey")
	return r.done(r.rcq, 4, "receive of the SEND").ByteLen
}

// receive SENDs wire's first n bytes from b into the mkey (a's receive,
// the mkey's first m memory-domain bytes).
func (r *xtsRig) receive(n, m int) {
	r.t.Helper()
	if err := r.a.RQ().Post(6, []rq.SGE{{Addr: 0, Length: uint32(m), LKey: r.mk.LKey()}}); err != nil {
		r.t.Fatal(err)
	}
	s := r.b.SQ()
	r.post(r.b, 7, func() error { return errors.Join(s.Send(), s.SetSGE(r.wire.LKey, r.wire.Addr, uint32(n))) })
	r.done(r.scq, 7, "SEND into the mkey")
	r.done(r.rcq, 6, "receive through the mkey")
}

// remoteRead has b RDMA-read n wire bytes from the mkey (as an rkey,
// zero-based) into wire: the mkey's memory goes out as on TX.
func (r *xtsRig) remoteRead(n int) {
	r.t.Helper()
	s := r.b.SQ()
	r.post(r.b, 8, func() error {
		return errors.Join(s.RDMARead(r.mk.LKey(), 0), s.SetSGE(r.wire.LKey, r.wire.Addr, uint32(n)))
	})
	r.done(r.scq, 8, "RDMA READ of the mkey")
}

// remoteWrite has b RDMA-write wire's first n bytes into the mkey: they
// reach its memory as on RX.
func (r *xtsRig) remoteWrite(n int) {
	r.t.Helper()
	s := r.b.SQ()
	r.post(r.b, 9, func() error {
		return errors.Join(s.RDMAWrite(r.mk.LKey(), 0), s.SetSGE(r.wire.LKey, r.wire.Addr, uint32(n)))
	})
	r.done(r.scq, 9, "RDMA WRITE into the mkey")
}

// singleBlockDevice returns the name of a simulated device that reports
// the single-block AES-XTS engine only, creating it on first use.
func singleBlockDevice(t *testing.T, name string) string {
	t.Helper()
	if sim.Fabric().Device(name) == nil {
		caps := sim.DefaultCaps()
		caps.CryptoMultiBlock = false
		if _, err := sim.NewDevice(name, caps); err != nil {
			t.Fatal(err)
		}
	}
	return sim.Prefix + name
}

func tweak128(lo, hi uint64) [16]byte {
	var tw [16]byte
	binary.LittleEndian.PutUint64(tw[:8], lo)
	binary.LittleEndian.PutUint64(tw[8:], hi)
	return tw
}

// refXTS encrypts src (whole data units of unit bytes, each a multiple of
// 16) into a new slice, data unit i with the 128-bit little-endian tweak
// lo + hi<<64 + i: IEEE 1619-2007 section 5.3.1 written out on
// crypto/aes, for the tweaks past 64 bits that x/crypto/xts (a uint64
// sector number) cannot take. key is key1 then key2.
func refXTS(t *testing.T, key []byte, lo, hi uint64, unit int, src []byte) []byte {
	t.Helper()
	k1, err1 := aes.NewCipher(key[:len(key)/2])
	k2, err2 := aes.NewCipher(key[len(key)/2:])
	if err := errors.Join(err1, err2); err != nil || len(src)%unit != 0 || unit%16 != 0 {
		t.Fatalf("refXTS: %v, %d bytes in units of %d", err, len(src), unit)
	}
	out := make([]byte, len(src))
	for u := 0; u*unit < len(src); u++ {
		ulo := lo + uint64(u)
		uhi := hi
		if ulo < lo {
			uhi++ // the carry into the high 64 bits
		}
		tw := tweak128(ulo, uhi)
		var T [16]byte
		k2.Encrypt(T[:], tw[:])
		for j := u * unit; j < (u+1)*unit; j += 16 {
			var b [16]byte
			for i := range b {
				b[i] = src[j+i] ^ T[i]
			}
			k1.Encrypt(b[:], b[:])
			for i := range b {
				out[j+i] = b[i] ^ T[i]
			}
			// T *= alpha in GF(2^128), little-endian bytes (5.2).
			carry := T[15] >> 7
			for i := 15; i > 0; i-- {
				T[i] = T[i]<<1 | T[i-1]>>7
			}
			T[0] <<= 1
			T[0] ^= 0x87 * carry
		}
	}
	return out
}

// ieeeVector is one of IEEE Std 1619-2007 Annex B's XTS-AES vectors.
type ieeeVector struct {
	key      []byte
	seq      uint64 // the data unit sequence number, the tweak
	ptx, ctx []byte
}

// ieee1619 reads the vectors runtime/sim/sigblock keeps (its
// testdata/ieee1619.txt, typed in from the standard).
func ieee1619(t *testing.T) map[int]ieeeVector {
	t.Helper()
	b, err := os.ReadFile("sigblock/testdata/ieee1619.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]ieeeVector{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 5 {
			t.Fatalf("ieee1619.txt: bad line %q", sc.Text())
		}
		n, e0 := strconv.Atoi(f[0])
		var v ieeeVector
		var e [4]error
		v.key, e[0] = hex.DecodeString(f[1])
		v.seq, e[1] = strconv.ParseUint(f[2], 0, 64)
		v.ptx, e[2] = hex.DecodeString(f[3])
		v.ctx, e[3] = hex.DecodeString(f[4])
		if err := errors.Join(e0, e[0], e[1], e[2], e[3]); err != nil {
			t.Fatalf("ieee1619.txt: line %q: %v", sc.Text(), err)
		}
		out[n] = v
	}
	return out
}

// xtsPattern is n bytes that differ from unit to unit and key to key.
func xtsPattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>9) ^ seed
	}
	return b
}
