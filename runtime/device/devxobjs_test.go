package device_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// cmdFake is the fake backend with a device that runs the DEVX commands
// the API sends for signature and crypto mkeys and DEKs: it answers
// QUERY_HCA_CAP from the capabilities its name picks, numbers the
// objects CREATE_PSV, CREATE_MKEY and CREATE_GENERAL_OBJECT make, and
// records every command's bytes and every destroy, in order. It reads
// the commands with the generated mlx5prm getters, not the builders the
// API uses, so a field the builders put in the wrong place shows.
type cmdFake struct{}

func init() { device.Register("cmdfake:", cmdFake{}) }

type cmdFakeCtx struct {
	device.BackendContext
	name string
	mu   sync.Mutex
	ins  [][]byte // the commands, in order
	log  []string // "create <opcode> <id>", "destroy <opcode> <id>"
	next uint32
}

func (cmdFake) Open(name string) (device.BackendContext, error) {
	c, err := fake{}.Open(name)
	if err != nil {
		return nil, err
	}
	return &cmdFakeCtx{BackendContext: c, name: name, next: 0x40}, nil
}
func (cmdFake) List() ([]device.Info, error) { return nil, device.ErrNoDevice }

const fakePDN = 0x5a5a5

type numberedPD struct{ device.BackendPD }

func (numberedPD) PDN() (uint32, error) { return fakePDN, nil }

func (c *cmdFakeCtx) AllocPD() (device.BackendPD, error) {
	pd, err := c.BackendContext.AllocPD()
	return numberedPD{pd}, err
}

// fail writes a failed status into out, as a device does.
func fail(out []byte, st device.DevxStatus, syndrome uint32) error {
	out[0] = byte(st)
	binary.BigEndian.PutUint32(out[4:], syndrome)
	return fmt.Errorf("cmdfake: %w", syscall.EREMOTEIO)
}

func (c *cmdFakeCtx) DevxGeneralCmd(in, out []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ins = append(c.ins, bytes.Clone(in))
	q, err := mlx5prm.ViewQueryHCACapIn(in)
	if err != nil || q.Opcode() != mlx5prm.MLX5_CMD_OP_QUERY_HCA_CAP || strings.Contains(c.name, "nocaps") {
		return fail(out, device.DevxStatusBadOp, 0x1111)
	}
	o, err := mlx5prm.ViewQueryHCACapOut(out)
	if err != nil {
		return fail(out, device.DevxStatusBadOutputLen, 0x2222)
	}
	full := !strings.Contains(c.name, "nosig")
	switch mlx5prm.HCACapOpMod(q.OpMod() &^ 1) {
	case mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE:
		g := o.CapabilityCmdHCACap()
		if full {
			g.SetSho(1)
			g.SetSigerrDomainAndSigType(1)
		}
		g.SetCrypto(1)
		g.SetAESXTSMultiBlockBETweak(1)
		if !strings.Contains(c.name, "nodek") {
			g.SetGeneralObjTypes(1 << uint(mlx5prm.MLX5_OBJ_TYPE_DEK))
		}
	case mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_CRYPTO:
		if strings.Contains(c.name, "wrapped") {
			o.CapabilityCryptoCaps().SetWrappedImportMethod(0x4)
		}
	default:
		return fail(out, device.DevxStatusBadParam, 0x3333)
	}
	return nil
}

// cmdObj is an object the fake device made.
type cmdObj struct {
	c      *cmdFakeCtx
	opcode mlx5prm.CmdOpcode
	id     uint32
}

func (o *cmdObj) Query(in, out []byte) error  { return nil }
func (o *cmdObj) Modify(in, out []byte) error { return nil }
func (o *cmdObj) Close() error {
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	o.c.log = append(o.c.log, fmt.Sprintf("destroy %v %#x", o.opcode, o.id))
	return nil
}

func (c *cmdFakeCtx) DevxObjCreate(in, out []byte) (device.BackendDevxObj, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ins = append(c.ins, bytes.Clone(in))
	h, _ := mlx5prm.ViewMboxIn(in)
	o := &cmdObj{c: c, opcode: h.Opcode(), id: c.next}
	c.next++
	switch o.opcode {
	case mlx5prm.MLX5_CMD_OP_CREATE_PSV:
		if strings.Contains(c.name, "psvlimit") && strings.Count(strings.Join(c.log, ","), "CREATE_PSV") == 1 {
			return nil, fail(out, device.DevxStatusLimit, 0x4444)
		}
		v, _ := mlx5prm.ViewCreatePSVOut(out)
		v.SetPSV0Index(o.id)
	case mlx5prm.MLX5_CMD_OP_CREATE_MKEY:
		v, _ := mlx5prm.ViewCreateMkeyOut(out)
		v.SetMkeyIndex(o.id)
	case mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT:
		v, _ := mlx5prm.ViewGeneralObjOutCmdHdr(out)
		v.SetObjID(o.id)
	default:
		return nil, fail(out, device.DevxStatusBadOp, 0x5555)
	}
	c.log = append(c.log, fmt.Sprintf("create %v %#x", o.opcode, o.id))
	return o, nil
}

// openCmdFake opens the fake device name and a PD on it.
func openCmdFake(t *testing.T, name string) (*device.Context, *cmdFakeCtx, *device.PD) {
	t.Helper()
	c, err := device.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	be := device.BackendOf(c).(*cmdFakeCtx)
	return c, be, pd
}

func (c *cmdFakeCtx) take() (ins [][]byte, log []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ins, log, c.ins, c.log = c.ins, c.log, nil, nil
	return ins, log
}

func opcodes(ins [][]byte) []mlx5prm.CmdOpcode {
	var ops []mlx5prm.CmdOpcode
	for _, in := range ins {
		h, _ := mlx5prm.ViewMboxIn(in)
		ops = append(ops, h.Opcode())
	}
	return ops
}

// TestDevxSigMkey: a signature mkey on a DEVX device is two CREATE_PSVs
// on the PD's number and a CREATE_MKEY with libmlx5's mkc, after the
// capability pages are read (once per context); the mkey's key is the
// mkey index shifted by 8, its PSVs the indexes the device returned;
// Close destroys the mkey, then the wire and the memory PSV.
func TestDevxSigMkey(t *testing.T) {
	_, fk, pd := openCmdFake(t, "cmdfake:full")
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	mk, err := pd.CreateMkey(flags, 5)
	if err != nil {
		t.Fatal(err)
	}
	ins, log := fk.take()
	want := []mlx5prm.CmdOpcode{mlx5prm.MLX5_CMD_OP_QUERY_HCA_CAP, mlx5prm.MLX5_CMD_OP_QUERY_HCA_CAP,
		mlx5prm.MLX5_CMD_OP_CREATE_PSV, mlx5prm.MLX5_CMD_OP_CREATE_PSV, mlx5prm.MLX5_CMD_OP_CREATE_MKEY}
	if got := opcodes(ins); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("commands %v, want %v", got, want)
	}
	for i, opMod := range []uint16{0x01, 0x35} {
		if q, _ := mlx5prm.ViewQueryHCACapIn(ins[i]); q.OpMod() != opMod {
			t.Errorf("QUERY_HCA_CAP %d: op_mod %#x, want %#x", i, q.OpMod(), opMod)
		}
	}
	for _, in := range ins[2:4] {
		if p, _ := mlx5prm.ViewCreatePSVIn(in); p.PD() != fakePDN || p.NumPSV() != 1 || len(in) != mlx5prm.CreatePSVInSize {
			t.Errorf("CREATE_PSV % x", in)
		}
	}
	v, _ := mlx5prm.ViewCreateMkeyIn(ins[4])
	m := v.MemoryKeyMkeyEntry()
	if len(ins[4]) != mlx5prm.CreateMkeyInSize || m.PD() != fakePDN || m.Free() != 1 || m.UMREn() != 1 || m.Lr() != 1 ||
		m.AccessMode1To0() != mlx5prm.MLX5_MKC_ACCESS_MODE_KLMS || m.QPN() != 0xffffff || m.BSFEn() != 1 ||
		m.BSFOctwordSize() != 4 || m.TranslationsOctwordSize() != 8 || m.CryptoEn() != 0 {
		t.Errorf("CREATE_MKEY mkc % x", ins[4][16:80])
	}
	if mk.LKey() != 0x42<<8 || mk.Mkey().MemPSV != 0x40 || mk.Mkey().WirePSV != 0x41 {
		t.Errorf("lkey %#x, PSVs %#x %#x; want 0x4200, 0x40 0x41", mk.LKey(), mk.Mkey().MemPSV, mk.Mkey().WirePSV)
	}
	if _, err := mk.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := mk.Close(); err != nil {
		t.Fatal(err)
	}
	_, log = fk.take()
	if want := "destroy MLX5_CMD_OP_CREATE_MKEY 0x42,destroy MLX5_CMD_OP_CREATE_PSV 0x41,destroy MLX5_CMD_OP_CREATE_PSV 0x40"; strings.Join(log, ",") != want {
		t.Errorf("close: %v, want %s", log, want)
	}
	// The capabilities are read once; a crypto mkey has crypto_en and a
	// crypto BSF but no PSVs; a plain indirect mkey is the backend's.
	mk2, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
	if err != nil {
		t.Fatal(err)
	}
	ins, _ = fk.take()
	if got := opcodes(ins); len(got) != 1 || got[0] != mlx5prm.MLX5_CMD_OP_CREATE_MKEY {
		t.Fatalf("crypto mkey: commands %v", got)
	}
	if v, _ := mlx5prm.ViewCreateMkeyIn(ins[0]); v.MemoryKeyMkeyEntry().CryptoEn() != 1 || v.MemoryKeyMkeyEntry().BSFOctwordSize() != 4 {
		t.Errorf("crypto mkey mkc % x", ins[0][16:80])
	}
	mk2.Close()
	if _, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4); err != nil {
		t.Fatal(err)
	}
	if ins, _ = fk.take(); len(ins) != 0 {
		t.Errorf("a plain mkey sent %v", opcodes(ins))
	}
}

// TestDevxMkeyRefused: a device without block signature refuses a
// signature mkey naming the capability, before any create command; a
// failed CREATE_PSV is a *DevxError with the device's status and
// syndrome, and the PSV made before it is destroyed; a failed capability
// query fails the create.
func TestDevxMkeyRefused(t *testing.T) {
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	_, fk, pd := openCmdFake(t, "cmdfake:nosig")
	_, err := pd.CreateMkey(flags, 4)
	if !errors.Is(err, device.ErrNoFeature) || !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "BLOCK_SIGNATURE") || !strings.Contains(err.Error(), "sho") {
		t.Errorf("no signature: %v", err)
	}
	if ins, _ := fk.take(); len(ins) != 2 {
		t.Errorf("commands %v, want the two capability queries only", opcodes(ins))
	}

	_, fk, pd = openCmdFake(t, "cmdfake:psvlimit")
	_, err = pd.CreateMkey(flags, 4)
	var de *device.DevxError
	if !errors.As(err, &de) || de.Status != device.DevxStatusLimit || de.Syndrome != 0x4444 || de.Opcode != 0x600 || !strings.Contains(err.Error(), "wire PSV") {
		t.Errorf("second PSV refused: %v", err)
	}
	if _, log := fk.take(); strings.Join(log, ",") != "create MLX5_CMD_OP_CREATE_PSV 0x40,destroy MLX5_CMD_OP_CREATE_PSV 0x40" {
		t.Errorf("objects %v: the memory PSV is not destroyed", log)
	}

	_, _, pd = openCmdFake(t, "cmdfake:nocaps")
	if _, err = pd.CreateMkey(flags, 4); !errors.As(err, &de) || de.Status != device.DevxStatusBadOp || !strings.Contains(err.Error(), "QUERY_HCA_CAP") {
		t.Errorf("capabilities unreadable: %v", err)
	}
}

// TestDevxDEK: a DEK is one CREATE_GENERAL_OBJECT of type DEK with the
// key field laid out as mlx5dv_dek_create(3) says (key1, key2, keytag);
// its ObjectID is the device's object id; a device that takes wrapped
// keys only, or makes no DEK objects, is refused naming why.
func TestDevxDEK(t *testing.T) {
	c, fk, pd := openCmdFake(t, "cmdfake:full")
	h, err := c.HCACaps()
	if err != nil || !h.BlockSignature || !h.AESXTSMultiBlock || !h.AESXTSSingleBlock || !h.DEKObjects || h.WrappedImportOnly || !h.CryptoPage {
		t.Fatalf("HCACaps %+v, %v", h, err)
	}
	fk.take()
	key := bytes.Repeat([]byte{0xa1, 0xb2}, 16)
	cfg := device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_128, Key: key, HasKeytag: true,
		Keytag: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}, Opaque: [8]byte{9, 8, 7, 6, 5, 4, 3, 2}}
	k, err := pd.CreateDEK(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ins, _ := fk.take()
	if len(ins) != 1 {
		t.Fatalf("commands %v", opcodes(ins))
	}
	v, _ := mlx5prm.ViewCreateEncryptionKeyObjIn(ins[0])
	o := v.KeyObj()
	wantKey := append(append(bytes.Clone(key), cfg.Keytag[:]...), make([]byte, 128-40)...)
	if v.Hdr().Opcode() != mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT || v.Hdr().ObjType() != mlx5prm.MLX5_OBJ_TYPE_DEK ||
		o.KeySize() != mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_128 || o.HasKeytag() != 1 || o.PD() != fakePDN ||
		o.KeyPurpose() != mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS || o.Opaque() != 0x0908070605040302 ||
		!bytes.Equal(o.Key(), wantKey) {
		t.Errorf("CREATE_GENERAL_OBJECT % x", ins[0])
	}
	if k.ObjectID() != 0x40 || k.DEK().ObjectID != 0x40 {
		t.Errorf("object id %#x, want 0x40", k.ObjectID())
	}
	k.Close()
	if _, log := fk.take(); len(log) != 1 || log[0] != "destroy MLX5_CMD_OP_CREATE_GENERAL_OBJECT 0x40" {
		t.Errorf("close: %v", log)
	}
	for name, want := range map[string]string{"cmdfake:wrapped": "crypto login", "cmdfake:nodek": "MLX5_OBJ_TYPE_DEK"} {
		_, fk, pd := openCmdFake(t, name)
		_, err := pd.CreateDEK(cfg)
		if !errors.Is(err, device.ErrNoFeature) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrNoFeature saying %q", name, err, want)
		}
		if _, log := fk.take(); len(log) != 0 {
			t.Errorf("%s: objects %v", name, log)
		}
	}
}
