//go:build mlx5gen_double && cgo

package verbs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/internal/devxcmd"
)

// These tests open this backend over the generated test double (go test
// -tags mlx5gen_double) through runtime/device's public API, and check
// the DEVX commands a signature mkey and a DEK cost: which libmlx5 calls
// run, in order, and the exact bytes each one's input holds when C gets
// it. The double records the pointers and lengths C receives and answers
// nothing, so the device's side (the capability pages, the indexes and
// ids it returns) is written into the output by a wrapper around the
// double, after the double has recorded the call.

// sent is one DEVX call as C received it.
type sent struct {
	in, out unsafe.Pointer
	inLen   uint64
	bytes   []byte // in's bytes during the call
}

// dblDevice answers the DEVX calls; opened by the "dbl:" backend.
type dblDevice struct {
	sent   []sent
	calls  []mv.DoubleCall // recorded by the double, kept across resets
	next   uint32
	handle unsafe.Pointer // what obj_create returns
}

var dbl *dblDevice

type dblBackend struct{}

func init() { device.Register("dbl:", dblBackend{}) }

func (dblBackend) Open(name string) (device.BackendContext, error) {
	return &vctx{ctx: mv.IBVContextFrom(dbl.handle), devx: true, info: device.Info{Name: name}}, nil
}
func (dblBackend) List() ([]device.Info, error) { return nil, device.ErrNoDevice }

func (d *dblDevice) record(in unsafe.Pointer, inLen uint64, out unsafe.Pointer) {
	d.sent = append(d.sent, sent{in: in, out: out, inLen: inLen, bytes: bytes.Clone(unsafe.Slice((*byte)(in), inLen))})
}

// harvest keeps the calls the double recorded since its last reset.
func (d *dblDevice) harvest() { d.calls = append(d.calls, mv.DoubleCalls()...) }

// install puts the device behind the DEVX hooks for the test.
func (d *dblDevice) install(t *testing.T) {
	gen, create := devxGeneralCmd, devxObjCreate
	t.Cleanup(func() { devxGeneralCmd, devxObjCreate = gen, create })
	devxGeneralCmd = func(ctx mv.IBVContext, in unsafe.Pointer, il uint64, out unsafe.Pointer, ol uint64) error {
		d.record(in, il, out)
		if err := mv.DevxGeneralCmd(ctx, in, il, out, ol); err != nil {
			return err
		}
		o, err := mlx5prm.ViewQueryHCACapOut(unsafe.Slice((*byte)(out), ol))
		if err != nil {
			return err
		}
		if g := o.CapabilityCmdHCACap(); binary.BigEndian.Uint16(unsafe.Slice((*byte)(in), 8)[6:])&^1 == 0 {
			g.SetSho(1)
			g.SetSigerrDomainAndSigType(1)
			g.SetAESXTSSingleBlockLETweak(1)
			g.SetGeneralObjTypes(1 << uint(mlx5prm.MLX5_OBJ_TYPE_DEK))
		}
		return nil
	}
	devxObjCreate = func(ctx mv.IBVContext, in unsafe.Pointer, il uint64, out unsafe.Pointer, ol uint64) (mv.DevxObj, error) {
		d.record(in, il, out)
		// obj_create returns a handle, the int calls 0 (success); a
		// DoubleReset forgets the calls, so keep them first.
		d.harvest()
		mv.DoubleReset(int64(uintptr(d.handle)), 0)
		obj, err := mv.DevxObjCreate(ctx, in, il, out, ol)
		d.harvest()
		mv.DoubleReset(0, 0)
		if err != nil {
			return obj, err
		}
		o := unsafe.Slice((*byte)(out), ol)
		d.next++
		switch mlx5prm.CmdOpcode(binary.BigEndian.Uint16(d.sent[len(d.sent)-1].bytes)) {
		case mlx5prm.MLX5_CMD_OP_CREATE_PSV:
			v, _ := mlx5prm.ViewCreatePSVOut(o)
			v.SetPSV0Index(0x700 + d.next)
		case mlx5prm.MLX5_CMD_OP_CREATE_MKEY:
			v, _ := mlx5prm.ViewCreateMkeyOut(o)
			v.SetMkeyIndex(0x800 + d.next)
		case mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT:
			v, _ := mlx5prm.ViewGeneralObjOutCmdHdr(o)
			v.SetObjID(0x900 + d.next)
		}
		return obj, nil
	}
}

// dblOpen opens "dbl:" and a PD through runtime/device.
func dblOpen(t *testing.T) (*device.Context, *device.PD) {
	dbl = &dblDevice{handle: mv.DoubleAlloc(64)}
	t.Cleanup(func() { mv.DoubleFree(dbl.handle) })
	dbl.install(t)
	c, err := device.Open("dbl:0")
	if err != nil {
		t.Fatal(err)
	}
	mv.DoubleReset(int64(uintptr(dbl.handle)), 0) // ibv_alloc_pd returns a PD
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	mv.DoubleReset(0, 0) // forgets open's and alloc_pd's calls
	t.Cleanup(func() { mv.DoubleReset(0, 0); c.Close() })
	return c, pd
}

// checkCalls compares the functions C was called with, in order, and the
// DEVX calls' buffers with what the wrappers saw.
func checkCalls(t *testing.T, want []mlx.Func) []sent {
	t.Helper()
	dbl.harvest()
	calls := dbl.calls
	var got []mlx.Func
	devx := 0
	for _, c := range calls {
		got = append(got, mlx.Func(c.Func))
		if c.Func != int(mlx.FnDevxGeneralCmd) && c.Func != int(mlx.FnDevxObjCreate) {
			continue
		}
		if devx >= len(dbl.sent) {
			t.Fatalf("DEVX call %d reached C past the hooks", devx)
		}
		d := dbl.sent[devx]
		devx++
		a := c.Args[8:] // after the context
		if uintptr(binary.NativeEndian.Uint64(a)) != uintptr(d.in) || binary.NativeEndian.Uint64(a[8:]) != d.inLen ||
			uintptr(binary.NativeEndian.Uint64(a[16:])) != uintptr(d.out) {
			t.Errorf("call %d: C got in %#x (%d bytes), out %#x", devx, binary.NativeEndian.Uint64(a), binary.NativeEndian.Uint64(a[8:]), binary.NativeEndian.Uint64(a[16:]))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || mv.DoubleOverflow() {
		t.Fatalf("C calls %v, want %v", got, want)
	}
	s := dbl.sent
	dbl.calls, dbl.sent = nil, nil
	return s
}

// TestSigMkeyDouble: CreateMkey with BLOCK_SIGNATURE reads the PD number
// (mlx5dv_init_obj), the general capability page (mlx5dv_devx_general_cmd
// QUERY_HCA_CAP, op_mod 0x1), creates the memory and wire PSVs and the
// mkey (mlx5dv_devx_obj_create with the bytes devxcmd builds: the
// builders' own tests check those field by field) and never calls
// mlx5dv_create_mkey; the mkey carries the indexes the device returned.
func TestSigMkeyDouble(t *testing.T) {
	_, pd := dblOpen(t)
	mk, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 16)
	if err != nil {
		t.Fatal(err)
	}
	sent := checkCalls(t, []mlx.Func{mlx.FnInitObj, mlx.FnDevxGeneralCmd, mlx.FnDevxObjCreate, mlx.FnDevxObjCreate, mlx.FnDevxObjCreate})
	// The double fills no mlx5dv_pd, so the PD number is 0.
	caps, _ := devxcmd.QueryHCACap(mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE)
	psv, _ := devxcmd.CreatePSV(0)
	mkey, _ := devxcmd.CreateMkey(devxcmd.Mkey{PDN: 0, MaxEntries: 16, Signature: true})
	for i, want := range [][]byte{caps, psv, psv, mkey} {
		if !bytes.Equal(sent[i].bytes, want) {
			t.Errorf("command %d:\n% x\nwant\n% x", i, sent[i].bytes, want)
		}
	}
	if mk.LKey() != 0x803<<8 || mk.Mkey().MemPSV != 0x701 || mk.Mkey().WirePSV != 0x702 {
		t.Errorf("lkey %#x PSVs %#x %#x", mk.LKey(), mk.Mkey().MemPSV, mk.Mkey().WirePSV)
	}
	mv.DoubleReset(0, 0)
	if err := mk.Close(); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, []mlx.Func{mlx.FnDevxObjDestroy, mlx.FnDevxObjDestroy, mlx.FnDevxObjDestroy})
}

// TestDEKDouble: CreateDEK sends CREATE_GENERAL_OBJECT of a DEK with the
// key, keytag and opaque bytes in place, through mlx5dv_devx_obj_create
// (never mlx5dv_dek_create), and the DEK's object id is the device's.
func TestDEKDouble(t *testing.T) {
	_, pd := dblOpen(t)
	cfg := device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_256, Key: bytes.Repeat([]byte{0x3c}, 64),
		HasKeytag: true, Keytag: [8]byte{0xfe, 1, 2, 3, 4, 5, 6, 0xef}, Opaque: [8]byte{'o', 'p', 'a', 'q', 'u', 'e', '!', 0}}
	k, err := pd.CreateDEK(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sent := checkCalls(t, []mlx.Func{mlx.FnInitObj, mlx.FnDevxGeneralCmd, mlx.FnDevxObjCreate})
	want, _ := devxcmd.CreateDEK(devxcmd.DEK{Size256: true, HasKeytag: true, Opaque: cfg.Opaque, Key: cfg.InitAttr().Key})
	got := sent[1].bytes
	if !bytes.Equal(got, want) {
		t.Errorf("CREATE_GENERAL_OBJECT:\n% x\nwant\n% x", got, want)
	}
	// The key field (bytes 80 to 207): key1 and key2, then the keytag.
	if !bytes.Equal(got[80:144], cfg.Key) || !bytes.Equal(got[144:152], cfg.Keytag[:]) || !bytes.Equal(got[64:72], cfg.Opaque[:]) {
		t.Errorf("key material misplaced: % x", got[64:160])
	}
	if k.ObjectID() != 0x901 {
		t.Errorf("object id %#x, want 0x901", k.ObjectID())
	}
}
