package sim

import (
	"errors"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
)

// The commands that make the objects of the engine's mkey table: PSVs,
// indirect mkeys and DEKs, as libmlx5 sends them for mlx5dv_create_mkey
// and mlx5dv_dek_create (rdma-core providers/mlx5/verbs.c, mlx5.c) and
// runtime/device sends them on every DEVX backend (runtime/internal/
// devxcmd). Each is decoded with the generated PRM layouts.

// Syndromes of the simulator's refusals of these commands, in its own
// range [ledger: devx-syndromes, devx-object-statuses].
const (
	SyndromeNoPD         uint32 = 0x5e000010 // BAD_PARAM: pd names no PD of the device
	SyndromeMkeyForm     uint32 = 0x5e000011 // BAD_PARAM: an mkey context other than libmlx5's (devx-mkey-forms)
	SyndromeTableFull    uint32 = 0x5e000012 // NO_RES: the device's mkey, PSV or DEK table is full
	SyndromeNumPSV       uint32 = 0x5e000013 // BAD_PARAM: num_psv is not 1 to 4
	SyndromeObjType      uint32 = 0x5e000014 // BAD_PARAM: a general object type other than the DEK
	SyndromeKeyField     uint32 = 0x5e000015 // BAD_PARAM: a DEK's key_size or key_purpose
	SyndromeObjectInUse  uint32 = 0x5e000016 // BAD_RES_STATE: destroying a PSV an mkey uses
	SyndromeTranslations uint32 = 0x5e000017 // BAD_PARAM: translations_octword_size 0 or over the device's limit
)

// Opcodes of the object commands (mlx5prm, from mlx5_ifc.h).
var (
	opCreatePSV     = uint16(mlx5prm.MLX5_CMD_OP_CREATE_PSV)
	opCreateMkey    = uint16(mlx5prm.MLX5_CMD_OP_CREATE_MKEY)
	opCreateGeneral = uint16(mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT)
)

func init() {
	devxCommands[opCreatePSV] = devxCommand{name: "CREATE_PSV", kind: devxCreate, run: runCreatePSV}
	devxCommands[opCreateMkey] = devxCommand{name: "CREATE_MKEY", kind: devxCreate, run: runCreateMkey}
	devxCommands[opCreateGeneral] = devxCommand{name: "CREATE_GENERAL_OBJECT", kind: devxCreate, run: runCreateGeneral}
}

// tableReply turns an mkey table error into the status a device gives.
func tableReply(err error) devxReply {
	switch {
	case err == nil:
		return devxReply{}
	case errors.Is(err, mkey.ErrFull):
		return devxReply{device.DevxStatusNoResources, SyndromeTableFull}
	case errors.Is(err, mkey.ErrInUse):
		return devxReply{device.DevxStatusBadResourceState, SyndromeObjectInUse}
	}
	return devxReply{device.DevxStatusBadParam, SyndromeMkeyForm}
}

// locked runs f under the fabric's lock, where the engine's tables live.
func (x *devxCall) locked(f func(t *mkey.Table) (*devxObj, devxReply)) (*devxObj, devxReply) {
	fab := x.c.d.Fabric()
	fab.Lock()
	defer fab.Unlock()
	return f(x.c.d.Mkeys())
}

// destroyer is an object's destroy command, run under the fabric's lock.
func (x *devxCall) destroyer(f func(t *mkey.Table) error) func() devxReply {
	d := x.c.d
	return func() devxReply {
		fab := d.Fabric()
		fab.Lock()
		defer fab.Unlock()
		return tableReply(f(d.Mkeys()))
	}
}

// runCreatePSV makes num_psv PSVs (1 to 4, as create_psv_out has room
// for) in the command's PD; destroying the object destroys them all.
func runCreatePSV(x *devxCall) (*devxObj, devxReply) {
	if r, ok := x.needLen(mlx5prm.CreatePSVInSize, mlx5prm.CreatePSVOutSize); !ok {
		return nil, r
	}
	in, _ := mlx5prm.ViewCreatePSVIn(x.in)
	out, _ := mlx5prm.ViewCreatePSVOut(x.out)
	n := int(in.NumPSV())
	if n < 1 || n > 4 {
		return nil, devxReply{device.DevxStatusBadParam, SyndromeNumPSV}
	}
	return x.locked(func(t *mkey.Table) (*devxObj, devxReply) {
		if !x.c.d.HasPD(in.PD()) {
			return nil, devxReply{device.DevxStatusBadParam, SyndromeNoPD}
		}
		set := []func(uint32) error{out.SetPSV0Index, out.SetPSV1Index, out.SetPSV2Index, out.SetPSV3Index}
		var made []uint32
		for i := 0; i < n; i++ {
			ix, err := t.CreatePSV(in.PD())
			if err != nil {
				for _, m := range made {
					t.DestroyPSV(m)
				}
				return nil, tableReply(err)
			}
			made = append(made, ix)
			set[i](ix)
		}
		return &devxObj{destroy: x.destroyer(func(t *mkey.Table) error {
			for _, ix := range made {
				if err := t.DestroyPSV(ix); err != nil {
					return err
				}
			}
			return nil
		})}, devxReply{}
	})
}

// mkeyFlags are the mlx5dv_create_mkey flags an mkey context stands for.
// The simulator models the indirect mkeys libmlx5 makes: KLM access mode,
// free until a UMR configures them, UMR enabled, no QP; and a BSF size
// that holds the signature BSF, the crypto BSF or both
// [ledger: devx-mkey-forms].
func mkeyFlags(c *mlx5prm.Mkc) (mlx.MkeyInitAttrFlags, bool) {
	if c.AccessMode1To0() != mlx5prm.MLX5_MKC_ACCESS_MODE_KLMS || c.AccessMode4To2() != 0 || c.Free() != 1 ||
		c.UMREn() != 1 || c.QPN() != 0xffffff || c.CryptoEn() > 1 {
		return 0, false
	}
	f := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	bsf := c.BSFOctwordSize()
	if c.CryptoEn() == 1 {
		f |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
		if bsf < 4 {
			return 0, false
		}
		bsf -= 4
	}
	switch {
	case c.BSFEn() == 0 && c.BSFOctwordSize() != 0, c.BSFEn() == 1 && c.BSFOctwordSize() == 0:
		return 0, false
	case bsf == 4:
		f |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	case bsf != 0:
		return 0, false
	}
	if c.EnRinval() == 1 {
		f |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE
	}
	return f, true
}

// runCreateMkey makes an indirect mkey from the command's mkey context;
// its key byte is mkey_7_0, and the output names its index.
func runCreateMkey(x *devxCall) (*devxObj, devxReply) {
	if r, ok := x.needLen(mlx5prm.CreateMkeyInSize, mlx5prm.CreateMkeyOutSize); !ok {
		return nil, r
	}
	in, _ := mlx5prm.ViewCreateMkeyIn(x.in)
	out, _ := mlx5prm.ViewCreateMkeyOut(x.out)
	c := in.MemoryKeyMkeyEntry()
	flags, ok := mkeyFlags(c)
	if !ok {
		return nil, devxReply{device.DevxStatusBadParam, SyndromeMkeyForm}
	}
	entries := int(c.TranslationsOctwordSize())
	if entries < 1 || entries > 1<<16 {
		return nil, devxReply{device.DevxStatusBadParam, SyndromeTranslations}
	}
	return x.locked(func(t *mkey.Table) (*devxObj, devxReply) {
		if !x.c.d.HasPD(c.PD()) {
			return nil, devxReply{device.DevxStatusBadParam, SyndromeNoPD}
		}
		key, err := t.CreateMkey(c.PD(), flags, entries, c.Mkey7To0())
		if err != nil {
			return nil, tableReply(err)
		}
		out.SetMkeyIndex(key >> 8)
		return &devxObj{destroy: x.destroyer(func(t *mkey.Table) error { return t.Destroy(key) })}, devxReply{}
	})
}

// runCreateGeneral makes a general object: the simulator models the DEK
// (encryption key) object alone [ledger: devx-general-objects], with a
// plaintext key.
func runCreateGeneral(x *devxCall) (*devxObj, devxReply) {
	if r, ok := x.needLen(mlx5prm.GeneralObjInCmdHdrSize, mlx5prm.GeneralObjOutCmdHdrSize); !ok {
		return nil, r
	}
	h, _ := mlx5prm.ViewGeneralObjInCmdHdr(x.in)
	if h.ObjType() != mlx5prm.MLX5_OBJ_TYPE_DEK {
		return nil, devxReply{device.DevxStatusBadParam, SyndromeObjType}
	}
	if r, ok := x.needLen(mlx5prm.CreateEncryptionKeyObjInSize, mlx5prm.GeneralObjOutCmdHdrSize); !ok {
		return nil, r
	}
	in, _ := mlx5prm.ViewCreateEncryptionKeyObjIn(x.in)
	out, _ := mlx5prm.ViewGeneralObjOutCmdHdr(x.out)
	k := in.KeyObj()
	n := 0
	switch k.KeySize() {
	case mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_128:
		n = 32
	case mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_256:
		n = 64
	}
	if n == 0 || k.KeyPurpose() != mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS || k.HasKeytag() > 1 {
		return nil, devxReply{device.DevxStatusBadParam, SyndromeKeyField}
	}
	// The key field holds key1 and key2, then the keytag when there is
	// one, as mlx5dv_dek_init_attr.key does.
	var tag []byte
	if k.HasKeytag() == 1 {
		tag = k.Key()[n : n+8]
	}
	return x.locked(func(t *mkey.Table) (*devxObj, devxReply) {
		if !x.c.d.HasPD(k.PD()) {
			return nil, devxReply{device.DevxStatusBadParam, SyndromeNoPD}
		}
		id, err := t.CreateDEK(k.Key()[:n], tag)
		if err != nil {
			return nil, tableReply(err)
		}
		out.SetObjID(id)
		return &devxObj{destroy: x.destroyer(func(t *mkey.Table) error { return t.DestroyDEK(id) })}, devxReply{}
	})
}
