package sq_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// FuzzCalls drives a writer with arbitrary call sequences, with nil and
// extreme arguments: it must never panic, a call that fails must leave the
// ring, the doorbell record and the BlueFlame register as they were, every
// error must be a rule error, and a batch that fails must post nothing.
func FuzzCalls(f *testing.F) {
	f.Add([]byte{0, 3, 10, 11, 1, 0, 4, 12, 1})
	f.Add([]byte{0, 20, 21, 22, 23, 1, 0, 20, 24, 25, 1, 0, 26, 1})
	f.Add([]byte{0, 5, 10, 6, 13, 7, 14, 1, 9, 0, 15, 16, 17, 2})
	f.Add([]byte{0, 28, 0, 29, 1, 30, 2, 31, 3, 32, 4, 33, 5, 1, 0, 34, 6, 35, 255, 36, 7, 1})
	f.Add([]byte{0xff, 0, 4, 1, 10, 2, 37, 0, 1, 0, 3, 10, 5, 38, 1, 1, 0, 27, 1, 37, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q, mem := newSQ(t, 16, 0)
		if len(ops) > 0 && ops[0] == 0xff { // a DCI
			q, mem = newDCI(t)
			ops = ops[1:]
		}
		fz := newFuzzer(t, q)
		for i := 0; i < len(ops); i++ {
			op := ops[i] % 39
			arg := uint32(0)
			if i+1 < len(ops) {
				arg = uint32(ops[i+1])
			}
			before := snapshot(mem)
			var err error
			if op < 28 {
				err = fz.call(op, arg)
			} else {
				err = fz.extreme(op, arg)
			}
			if err != nil {
				var re *mlx.RuleError
				if !errors.As(err, &re) {
					t.Fatalf("op %d: %v is not a rule error", op, err)
				}
				if what := before.changed(mem); what != "" {
					t.Fatalf("op %d failed (%v) but wrote to %s", op, err, what)
				}
				if op == 1 && q.Last.Rung {
					t.Fatal("a failed batch rang the doorbell")
				}
			}
			if q.Outstanding() > uint32(len(mem.SQ)/64) {
				t.Fatalf("%d work requests outstanding on a ring of %d WQEBBs", q.Outstanding(), len(mem.SQ)/64)
			}
			if got := binary.BigEndian.Uint32(mem.DBR[4:]); op == 1 && err == nil && q.Last.Rung && got != q.CurPost()&0xffff {
				t.Fatalf("doorbell record %d, producer index %d", got, q.CurPost())
			}
		}
	})
}

// fuzzer holds the objects FuzzCalls passes to the writer's methods.
type fuzzer struct {
	q      *sq.SQ
	mk     *sq.Mkey
	crc    mlx.SigCRC
	dom    mlx.SigBlockDomain
	sig    mlx.SigBlockAttr
	dek    sq.DEK
	crypto mlx.CryptoAttr
	inline []byte
	tmpl   *sq.MkeyTemplate
}

func newFuzzer(t *testing.T, q *sq.SQ) *fuzzer {
	f := &fuzzer{q: q, dek: sq.DEK{ObjectID: 0x77}, inline: bytes.Repeat([]byte{0xab}, 400)}
	f.mk = sq.NewMkey(0x4400, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 8)
	f.crc = mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, Seed: 0xffffffff}
	f.dom = mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	f.dom.SetSigCRC(&f.crc)
	f.sig = mlx.SigBlockAttr{Mem: &f.dom, Wire: &f.dom, CheckMask: 0xff}
	f.crypto = mlx.CryptoAttr{DataUnitSize: mlx.MLX5DV_BLOCK_SIZE_512, DEK: unsafe.Pointer(&f.dek)}
	var err error
	if f.tmpl, err = sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &f.sig); err != nil {
		t.Fatal(err)
	}
	return f
}

// call makes call op (0 to 27) with ordinary arguments.
func (f *fuzzer) call(op byte, arg uint32) (err error) {
	switch op {
	case 0:
		err = f.q.Start()
	case 1:
		err = f.q.Complete()
	case 2:
		f.q.Abort()
	case 3:
		err = f.q.Send()
	case 4:
		err = f.q.RDMAWrite(arg, uint64(arg)<<12)
	case 5:
		err = f.q.RDMARead(arg, 8)
	case 6:
		err = f.q.AtomicFetchAdd(1, 2, 3)
	case 7:
		err = f.q.AtomicCmpSwp(1, 2, 3, 4)
	case 8:
		err = f.q.LocalInv(arg)
	case 9:
		f.q.Completed(f.q.Outstanding())
	case 10:
		err = f.q.SetSGE(1, 2, arg)
	case 11:
		err = f.q.SetSGEList(make([]mlx.SGE, arg%12))
	case 12:
		err = f.q.SetInlineData(f.inline[:int(arg)*2%len(f.inline)])
	case 13:
		err = f.q.SetInlineDataList([][]byte{f.inline[:arg%50], f.inline[:arg%300]})
	case 14:
		f.q.SetWRFlags(mlx.SendFlags(arg & 0xf))
	case 15:
		err = f.q.Memcpy(1, 2, 3, 4, uint64(arg)<<24)
	case 16:
		w := make([]byte, arg%80)
		if len(w) > 7 {
			w[7] = byte(arg % 7)
		}
		err = f.q.RawWQE(w)
	case 17:
		err = f.q.BindMW(&sq.MW{RKey: 5}, arg, &sq.MWBindInfo{Length: uint64(arg) << 24})
	case 18:
		err = f.q.ConfigureMkey(f.mk, f.tmpl, make([]mlx.SGE, arg%10))
	case 20:
		err = f.q.MkeyConfigure(f.mk, uint8(arg%5), &mlx.MkeyConfAttr{ConfFlags: mlx.MkeyConfFlags(arg >> 7)})
	case 21:
		err = f.q.SetMkeyAccessFlags(mlx.AccessFlags(arg & 0x1f))
	case 22:
		err = f.q.SetMkeyLayoutList(make([]mlx.SGE, arg%10))
	case 23:
		err = f.q.SetMkeySigBlock(&f.sig)
	case 24:
		err = f.q.SetMkeyCrypto(&f.crypto)
	case 25:
		err = f.q.SetMkeyLayoutInterleaved(arg, make([]mlx.MRInterleaved, arg%9))
	case 26:
		err = f.q.MRList(f.mk, mlx.IBV_ACCESS_LOCAL_WRITE, make([]mlx.SGE, arg%9))
	case 27:
		err = f.q.RDMAWriteBurst(make([]sq.RDMAWriteReq, arg%20))
	}
	return err
}

// extreme makes call op (28 to 38) with nil and extreme arguments.
func (f *fuzzer) extreme(op byte, arg uint32) (err error) {
	switch op {
	case 28:
		mw, info := &sq.MW{RKey: 5}, &sq.MWBindInfo{Length: uint64(arg) << 56}
		if arg&1 == 0 {
			mw = nil
		} else {
			info = nil
		}
		err = f.q.BindMW(mw, ^uint32(0), info)
	case 29:
		m, attr := f.mk, &mlx.MkeyConfAttr{ConfFlags: ^mlx.MkeyConfFlags(0), CompMask: ^uint64(0)}
		if arg&1 == 0 {
			m = nil
		} else if arg&2 == 0 {
			attr = nil
		}
		err = f.q.MkeyConfigure(m, uint8(arg*37), attr)
	case 30:
		err = f.q.SetMkeySigBlock(nil)
	case 31:
		err = f.q.SetMkeyCrypto(nil)
	case 32:
		if arg&1 == 0 {
			err = f.q.ConfigureMkey(nil, f.tmpl, nil)
		} else {
			err = f.q.ConfigureMkey(f.mk, nil, make([]mlx.SGE, arg%10))
		}
	case 33:
		if arg&1 == 0 {
			err = f.q.MRList(nil, ^mlx.AccessFlags(0), nil)
		} else {
			err = f.q.MRInterleaved(nil, mlx.IBV_ACCESS_LOCAL_WRITE, ^uint32(0), nil)
		}
	case 34:
		huge := []mlx.SGE{{Addr: ^uint64(0), Length: ^uint32(0), LKey: ^uint32(0)}, {Length: ^uint32(0)}}
		err = f.q.SetMkeyLayoutList(huge)
	case 35:
		data := []mlx.MRInterleaved{{Addr: ^uint64(0), BytesCount: ^uint32(0), BytesSkip: ^uint32(0)}}
		err = f.q.SetMkeyLayoutInterleaved(^uint32(0), data)
	case 36:
		err = f.q.Memcpy(0, ^uint64(0), 0, ^uint64(0), ^uint64(0)>>(arg%64))
	case 37, 38:
		ah := &sq.AH{}
		if arg&1 == 0 {
			ah = nil
		}
		if op == 37 {
			err = f.q.SetDCAddr(ah, ^uint32(0), ^uint64(0))
		} else {
			err = f.q.SetDCAddrStream(ah, ^uint32(0), ^uint64(0), uint16(arg)<<8|uint16(arg))
		}
	}
	return err
}
