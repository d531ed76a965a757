// Package devxcmd builds the device commands (PRM mailboxes) the device
// API sends through DEVX to create what libmlx5's public API cannot hand
// over: a signature mkey's PSVs, whose indexes the SET_PSV work requests
// name, and a DEK, whose object id the crypto BSF names. The commands
// are the ones libmlx5 itself sends for mlx5dv_create_mkey(3) and
// mlx5dv_dek_create(3) (rdma-core providers/mlx5/verbs.c,
// _mlx5dv_create_mkey and _mlx5dv_dek_create; providers/mlx5/mlx5.c,
// mlx5_create_psv), field for field, written with the generated PRM
// layouts (generated/mlx5prm), so both backends receive the bytes a
// device does: the hardware through mlx5dv_devx_obj_create, the
// simulator by executing them.
package devxcmd

import (
	"encoding/binary"
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// Cmd is one command: its input and a zeroed output of the layout's size.
type Cmd struct {
	In, Out []byte
}

// CreatePSV is CREATE_PSV of one PSV in PD pdn (mlx5_create_psv: num_psv
// 1; a signature mkey takes two, one per domain).
func CreatePSV(pdn uint32) (Cmd, error) {
	c := Cmd{In: make([]byte, mlx5prm.CreatePSVInSize), Out: make([]byte, mlx5prm.CreatePSVOutSize)}
	in, _ := mlx5prm.ViewCreatePSVIn(c.In)
	err := errors.Join(in.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_PSV), in.SetNumPSV(1), in.SetPD(pdn))
	return c, wrap("create_psv_in", err)
}

// PSVIndex reads the index of the PSV a CREATE_PSV made.
func PSVIndex(out []byte) (uint32, error) {
	o, err := mlx5prm.ViewCreatePSVOut(out)
	if err != nil {
		return 0, err
	}
	return o.PSV0Index(), nil
}

// bsfOctwords are the BSF sizes libmlx5 gives an mkey, in 16-byte
// octowords: struct mlx5_bsf (64 bytes) for a signature, struct
// mlx5_crypto_bsf (64 bytes) for crypto.
const (
	sigBSFOctwords    = 4
	cryptoBSFOctwords = 4
)

// CreateMkey is CREATE_MKEY of an indirect mkey in PD pdn with the mkey
// context libmlx5 writes for flags: KLM access mode, free until a UMR
// configures it, UMR enabled, local read, no QP (qpn 0xffffff), key byte
// 0, translations for maxEntries rounded up to 4 (libmlx5's num_desc),
// and for a signature or crypto mkey the BSFs enabled with their size;
// crypto_en for crypto, en_rinval for remote invalidation.
func CreateMkey(pdn uint32, flags mlx.MkeyInitAttrFlags, maxEntries int) (Cmd, error) {
	if maxEntries < 1 || maxEntries > 1<<16-1 {
		return Cmd{}, fmt.Errorf("devxcmd: create_mkey_in: max_entries %d is not 1 to 65535", maxEntries)
	}
	c := Cmd{In: make([]byte, mlx5prm.CreateMkeyInSize), Out: make([]byte, mlx5prm.CreateMkeyOutSize)}
	in, _ := mlx5prm.ViewCreateMkeyIn(c.In)
	m := in.MemoryKeyMkeyEntry()
	bsf := uint32(0)
	sig := flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0
	crypto := flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO != 0
	if sig {
		bsf += sigBSFOctwords
	}
	if crypto {
		bsf += cryptoBSFOctwords
	}
	errs := []error{in.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_MKEY),
		m.SetAccessMode1To0(mlx5prm.MLX5_MKC_ACCESS_MODE_KLMS), m.SetFree(1), m.SetUMREn(1), m.SetPD(pdn),
		m.SetTranslationsOctwordSize(uint32(maxEntries+3) &^ 3), m.SetLr(1), m.SetQPN(0xffffff), m.SetMkey7To0(0)}
	if crypto {
		errs = append(errs, m.SetCryptoEn(1))
	}
	if bsf > 0 {
		errs = append(errs, m.SetBSFEn(1), m.SetBSFOctwordSize(bsf))
	}
	if flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE != 0 {
		errs = append(errs, m.SetEnRinval(1))
	}
	return c, wrap("create_mkey_in", errors.Join(errs...))
}

// MkeyKey reads the key of the mkey a CREATE_MKEY made: its index, then
// the key byte CreateMkey set (0), as libmlx5 forms lkey and rkey.
func MkeyKey(out []byte) (uint32, error) {
	o, err := mlx5prm.ViewCreateMkeyOut(out)
	if err != nil {
		return 0, err
	}
	return o.MkeyIndex() << 8, nil
}

// CreateDEK is CREATE_GENERAL_OBJECT of an encryption key (a DEK) in PD
// pdn: the plaintext import mlx5dv_dek_create(3) makes, the key bytes as
// mlx5dv_dek_init_attr.key lays them out (key1, key2, then the keytag
// when there is one) and its opaque bytes.
func CreateDEK(pdn uint32, a *mlx.DEKInitAttr) (Cmd, error) {
	var size mlx5prm.EncryptionKeySize
	switch a.KeySize {
	case mlx.MLX5DV_CRYPTO_KEY_SIZE_128:
		size = mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_128
	case mlx.MLX5DV_CRYPTO_KEY_SIZE_256:
		size = mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_256
	default:
		return Cmd{}, fmt.Errorf("devxcmd: encryption_key_obj: key_size %v is not 128 or 256 bits", a.KeySize)
	}
	if a.KeyPurpose != mlx.MLX5DV_CRYPTO_KEY_PURPOSE_AES_XTS {
		return Cmd{}, fmt.Errorf("devxcmd: encryption_key_obj: key_purpose %v is not AES_XTS", a.KeyPurpose)
	}
	c := Cmd{In: make([]byte, mlx5prm.CreateEncryptionKeyObjInSize), Out: make([]byte, mlx5prm.GeneralObjOutCmdHdrSize)}
	in, _ := mlx5prm.ViewCreateEncryptionKeyObjIn(c.In)
	h, k := in.Hdr(), in.KeyObj()
	tag := uint8(0)
	if a.HasKeytag {
		tag = 1
	}
	err := errors.Join(h.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT), h.SetObjType(mlx5prm.MLX5_OBJ_TYPE_DEK),
		k.SetKeySize(size), k.SetHasKeytag(tag), k.SetKeyPurpose(mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS),
		k.SetPD(pdn), k.SetOpaque(binary.BigEndian.Uint64(a.Opaque[:])))
	copy(k.Key(), a.Key[:])
	return c, wrap("create_encryption_key_obj_in", err)
}

// ObjID reads the id of the general object a CREATE_GENERAL_OBJECT made.
func ObjID(out []byte) (uint32, error) {
	o, err := mlx5prm.ViewGeneralObjOutCmdHdr(out)
	if err != nil {
		return 0, err
	}
	return o.ObjID(), nil
}

func wrap(layout string, err error) error {
	if err != nil {
		return fmt.Errorf("devxcmd: %s: %w", layout, err)
	}
	return nil
}
