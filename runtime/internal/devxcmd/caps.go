package devxcmd

import (
	"fmt"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// QueryHCACap returns QUERY_HCA_CAP of the current settings (not the
// maxima) of capability page, as libmlx5 reads the general and crypto
// pages when it opens a device (providers/mlx5/verbs.c,
// get_hca_general_caps and get_crypto_caps).
func QueryHCACap(page mlx5prm.HCACapOpMod) ([]byte, error) {
	b := make([]byte, mlx5prm.QueryHCACapInSize)
	in, err := mlx5prm.ViewQueryHCACapIn(b)
	if err != nil {
		return nil, err
	}
	opMod := uint16(page) | uint16(mlx5prm.HCA_CAP_OPMOD_GET_CUR)
	if err := set("QUERY_HCA_CAP", in.SetOpcode(mlx5prm.MLX5_CMD_OP_QUERY_HCA_CAP), in.SetOpMod(opMod)); err != nil {
		return nil, err
	}
	return b, nil
}

// General is what the general capability page (cmd_hca_cap) says of
// signature and crypto offload and of the objects they need.
type General struct {
	// Sho and SigerrDomainAndSigType: both set is libmlx5's condition
	// for block signature offload (get_hca_sig_caps: T10-DIF and CRC on
	// 512, 520, 4096 and 4160-byte blocks, CRC32 guards).
	Sho, SigerrDomainAndSigType bool
	SigBlock4048                bool // 4048-byte blocks too
	SigCRC32C, SigCRC64XP10     bool // more CRC guards
	// Crypto: the crypto capability page exists (cmd_hca_cap.crypto).
	Crypto bool
	// The AES-XTS engines: single-block (little-endian tweak), and
	// multi-block (big-endian tweak), which libmlx5 counts as both.
	AESXTSSingleBlock, AESXTSMultiBlock bool
	GeneralObjTypes                     uint64 // bit n: general objects of type n
	LogMaxMkey                          uint8
	LogMaxKLMListSize                   uint8
	UMRIndirectMkeyDisabled             bool
}

// BlockSignature reports libmlx5's condition for block signature
// offload (sig_caps.block_prot non-zero).
func (g General) BlockSignature() bool { return g.Sho && g.SigerrDomainAndSigType }

// AESXTS reports whether an AES-XTS engine is there: libmlx5's condition
// for crypto mkeys and DEKs (crypto_engines non-zero).
func (g General) AESXTS() bool { return g.AESXTSSingleBlock || g.AESXTSMultiBlock }

// DEKObjects reports whether the device creates DEK general objects
// (general_obj_types bit MLX5_OBJ_TYPE_DEK), libmlx5's other condition
// for mlx5dv_dek_create.
func (g General) DEKObjects() bool {
	return g.GeneralObjTypes&(1<<uint(mlx5prm.MLX5_OBJ_TYPE_DEK)) != 0
}

// ParseGeneral reads the general capability page from QUERY_HCA_CAP's
// output.
func ParseGeneral(out []byte) (General, error) {
	o, err := mlx5prm.ViewQueryHCACapOut(out)
	if err != nil {
		return General{}, fmt.Errorf("devxcmd: QUERY_HCA_CAP output: %w", err)
	}
	c := o.CapabilityCmdHCACap()
	return General{
		Sho: c.Sho() != 0, SigerrDomainAndSigType: c.SigerrDomainAndSigType() != 0,
		SigBlock4048: c.SigBlock4048() != 0, SigCRC32C: c.SigCRC32C() != 0, SigCRC64XP10: c.SigCRC64XP10() != 0,
		Crypto: c.Crypto() != 0, AESXTSSingleBlock: c.AESXTSSingleBlockLETweak() != 0, AESXTSMultiBlock: c.AESXTSMultiBlockBETweak() != 0,
		GeneralObjTypes: c.GeneralObjTypes(), LogMaxMkey: c.LogMaxMkey(), LogMaxKLMListSize: c.LogMaxKLMListSize(),
		UMRIndirectMkeyDisabled: c.UMRIndirectMkeyDisabled() != 0,
	}, nil
}

// WrappedImportAES is the bit of crypto_caps.wrapped_import_method
// saying that keys must be imported wrapped with AES key wrap, under a
// crypto login (rdma-core providers/mlx5/mlx5_ifc.h,
// MLX5_CRYPTO_CAPS_WRAPPED_IMPORT_METHOD_AES = 0x4; generated/mlx5prm
// describes the field but not its values). libmlx5 refuses a plaintext
// DEK when it is set (verbs.c, check_dek_import_method).
const WrappedImportAES = 0x4

// Crypto is what the crypto capability page (crypto_caps) says.
type Crypto struct {
	WrappedCryptoOperational          bool
	WrappedCryptoGoingToCommissioning bool
	WrappedImportMethod               uint8
	LogMaxNumDEKs                     uint8
	FailedSelftests                   uint16
}

// WrappedOnly reports whether keys must be imported wrapped (crypto
// login): then the device refuses plaintext keys.
func (c Crypto) WrappedOnly() bool { return c.WrappedImportMethod&WrappedImportAES != 0 }

// ParseCrypto reads the crypto capability page from QUERY_HCA_CAP's
// output.
func ParseCrypto(out []byte) (Crypto, error) {
	o, err := mlx5prm.ViewQueryHCACapOut(out)
	if err != nil {
		return Crypto{}, fmt.Errorf("devxcmd: QUERY_HCA_CAP output: %w", err)
	}
	c := o.CapabilityCryptoCaps()
	return Crypto{
		WrappedCryptoOperational:          c.WrappedCryptoOperational() != 0,
		WrappedCryptoGoingToCommissioning: c.WrappedCryptoGoingToCommissioning() != 0,
		WrappedImportMethod:               c.WrappedImportMethod(),
		LogMaxNumDEKs:                     c.LogMaxNumDeks(),
		FailedSelftests:                   c.FailedSelftests(),
	}, nil
}
