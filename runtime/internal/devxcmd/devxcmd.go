// Package devxcmd builds and reads the device commands runtime/device
// sends through DEVX to create what libmlx5 creates but does not show:
// a signature mkey's two PSVs and the mkey itself (CREATE_PSV,
// CREATE_MKEY), a data encryption key (CREATE_GENERAL_OBJECT of type
// DEK), and the capability pages that say whether the device has them
// (QUERY_HCA_CAP). Every field is written and read through the
// generated PRM layouts of generated/mlx5prm, so no offset is written
// by hand here.
//
// The commands carry exactly the fields libmlx5 sets for the same
// request (rdma-core providers/mlx5/verbs.c, _mlx5dv_create_mkey and
// _mlx5dv_dek_create; providers/mlx5/mlx5.c, mlx5_create_psv; releases
// v44.0 to v59.0 agree), so a device sees the same bytes whether the
// program or libmlx5 created the object; the difference is that the
// program then knows the PSV indexes and the DEK's object id, which
// libmlx5 keeps in private structs.
//
// Builders return the input buffer and the length of the output buffer
// the command needs; parsers read an output the device has already
// reported success in (the caller checks the status first).
package devxcmd

import (
	"encoding/binary"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// Output lengths of the commands: the sizes of their PRM output layouts.
const (
	CreatePSVOutLen   = mlx5prm.CreatePSVOutSize
	CreateMkeyOutLen  = mlx5prm.CreateMkeyOutSize
	CreateDEKOutLen   = mlx5prm.GeneralObjOutCmdHdrSize
	QueryHCACapOutLen = mlx5prm.QueryHCACapOutSize
)

// set runs the setters of a command in order and returns the first
// refusal, naming the command: a value wider than its field.
func set(cmd string, setters ...error) error {
	for _, err := range setters {
		if err != nil {
			return fmt.Errorf("devxcmd: %s: %w", cmd, err)
		}
	}
	return nil
}

// CreatePSV returns CREATE_PSV for one PSV on the PD numbered pdn, as
// libmlx5's mlx5_create_psv asks for each of a signature mkey's two.
func CreatePSV(pdn uint32) ([]byte, error) {
	b := make([]byte, mlx5prm.CreatePSVInSize)
	in, err := mlx5prm.ViewCreatePSVIn(b)
	if err != nil {
		return nil, err
	}
	if err := set("CREATE_PSV", in.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_PSV), in.SetNumPSV(1), in.SetPD(pdn)); err != nil {
		return nil, err
	}
	return b, nil
}

// PSVIndex returns the index of the PSV CREATE_PSV made (psv0_index: the
// command asked for one).
func PSVIndex(out []byte) (uint32, error) {
	o, err := mlx5prm.ViewCreatePSVOut(out)
	if err != nil {
		return 0, fmt.Errorf("devxcmd: CREATE_PSV output: %w", err)
	}
	return o.PSV0Index(), nil
}

// DestroyPSV returns DESTROY_PSV of the PSV psvn: the command the kernel
// runs when the DEVX object CREATE_PSV made is destroyed. The program
// never sends it (mlx5dv_devx_obj_destroy takes no bytes); it is here so
// that a test, or a simulator, can build what the kernel sends.
func DestroyPSV(psvn uint32) ([]byte, error) {
	b := make([]byte, mlx5prm.DestroyPSVInSize)
	in, err := mlx5prm.ViewDestroyPSVIn(b)
	if err != nil {
		return nil, err
	}
	if err := set("DESTROY_PSV", in.SetOpcode(mlx5prm.MLX5_CMD_OP_DESTROY_PSV), in.SetPsvn(psvn)); err != nil {
		return nil, err
	}
	return b, nil
}

// Mkey describes an indirect mkey to create.
type Mkey struct {
	PDN        uint32
	MaxEntries int  // KLM entries, 1 to 65535 (mlx5dv_mkey_init_attr.max_entries)
	Signature  bool // MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE: room for a signature BSF
	Crypto     bool // MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO: crypto_en and room for a crypto BSF
	// RemoteInvalidate: MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE
	// (en_rinval).
	RemoteInvalidate bool
}

// Translations returns the KLM entries the mkey gets: MaxEntries rounded
// up to a multiple of 4, as libmlx5 rounds it (num_desc) and writes it
// back into max_entries.
func (m Mkey) Translations() int { return (m.MaxEntries + 3) &^ 3 }

// CreateMkey returns CREATE_MKEY of an indirect (KLM) mkey that only
// UMR configures, as _mlx5dv_create_mkey builds it: free and umr_en set
// (the mkey starts unusable, to be filled by UMR), local read, no QP
// bound (qpn 0xffffff), mkey_7_0 0, translations_octword_size the
// rounded entries (one 16-byte KLM each), and bsf_en with the BSF's
// size in octwords for a signature and/or crypto mkey.
func CreateMkey(m Mkey) ([]byte, error) {
	if m.MaxEntries < 1 || m.MaxEntries > 1<<16-1 {
		return nil, fmt.Errorf("devxcmd: CREATE_MKEY: MaxEntries %d: mlx5dv_mkey_init_attr.max_entries is 1 to 65535", m.MaxEntries)
	}
	b := make([]byte, mlx5prm.CreateMkeyInSize)
	in, err := mlx5prm.ViewCreateMkeyIn(b)
	if err != nil {
		return nil, err
	}
	mkc := in.MemoryKeyMkeyEntry()
	err = set("CREATE_MKEY", in.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_MKEY),
		mkc.SetAccessMode1To0(mlx5prm.MLX5_MKC_ACCESS_MODE_KLMS),
		mkc.SetFree(1), mkc.SetUMREn(1), mkc.SetPD(m.PDN),
		mkc.SetTranslationsOctwordSize(uint32(m.Translations())),
		mkc.SetLr(1), mkc.SetQPN(0xffffff), mkc.SetMkey7To0(0))
	if err != nil {
		return nil, err
	}
	bsf := 0
	if m.Signature {
		bsf += mlx.BSFSize // libmlx5: sizeof(struct mlx5_bsf)
	}
	if m.Crypto {
		bsf += mlx.CryptoBSFSize // sizeof(struct mlx5_crypto_bsf)
		if err := set("CREATE_MKEY", mkc.SetCryptoEn(1)); err != nil {
			return nil, err
		}
	}
	if bsf > 0 {
		if err := set("CREATE_MKEY", mkc.SetBSFEn(1), mkc.SetBSFOctwordSize(uint32(bsf/16))); err != nil {
			return nil, err
		}
	}
	if m.RemoteInvalidate {
		if err := set("CREATE_MKEY", mkc.SetEnRinval(1)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// MkeyIndex returns the index of the mkey CREATE_MKEY made; its key is
// the index shifted left by 8 (the low byte is mkey_7_0, 0).
func MkeyIndex(out []byte) (uint32, error) {
	o, err := mlx5prm.ViewCreateMkeyOut(out)
	if err != nil {
		return 0, fmt.Errorf("devxcmd: CREATE_MKEY output: %w", err)
	}
	return o.MkeyIndex(), nil
}

// MkeyKey returns the lkey (and rkey) of the mkey at index.
func MkeyKey(index uint32) uint32 { return index << 8 }

// DEKKeyLen is the size of a DEK's key field (encryption_key_obj.key):
// key1, key2 and the keytag as mlx5dv_dek_create(3) lays them out.
const DEKKeyLen = 128

// DEK describes a plaintext data encryption key to create.
type DEK struct {
	PDN       uint32
	Size256   bool // 256-bit AES keys (else 128-bit)
	HasKeytag bool
	Opaque    [8]byte
	Key       [DEKKeyLen]byte
}

// CreateDEK returns CREATE_GENERAL_OBJECT of a DEK (obj_type
// MLX5_OBJ_TYPE_DEK) as _mlx5dv_dek_create builds it for a plaintext key:
// key_size, has_keytag, key_purpose AES-XTS, the PD, the opaque bytes
// and the key field copied as they are.
func CreateDEK(d DEK) ([]byte, error) {
	b := make([]byte, mlx5prm.CreateEncryptionKeyObjInSize)
	in, err := mlx5prm.ViewCreateEncryptionKeyObjIn(b)
	if err != nil {
		return nil, err
	}
	hdr, obj := in.Hdr(), in.KeyObj()
	size := mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_128
	if d.Size256 {
		size = mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_256
	}
	var tag uint8
	if d.HasKeytag {
		tag = 1
	}
	err = set("CREATE_GENERAL_OBJECT (DEK)", hdr.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT),
		hdr.SetObjType(mlx5prm.MLX5_OBJ_TYPE_DEK), obj.SetKeySize(size), obj.SetHasKeytag(tag),
		obj.SetKeyPurpose(mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS), obj.SetPD(d.PDN),
		// opaque is bytes libmlx5 copies as they are: read them
		// big-endian so the big-endian field holds them in order.
		obj.SetOpaque(binary.BigEndian.Uint64(d.Opaque[:])))
	if err != nil {
		return nil, err
	}
	copy(obj.Key(), d.Key[:])
	return b, nil
}

// ObjID returns the id of the general object a CREATE_GENERAL_OBJECT
// made: a DEK's, which crypto work requests name.
func ObjID(out []byte) (uint32, error) {
	o, err := mlx5prm.ViewGeneralObjOutCmdHdr(out)
	if err != nil {
		return 0, fmt.Errorf("devxcmd: CREATE_GENERAL_OBJECT output: %w", err)
	}
	return o.ObjID(), nil
}
