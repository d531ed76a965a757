package sim

import (
	"errors"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// SyndromeCapPage: BAD_PARAM for a QUERY_HCA_CAP page the simulator does
// not answer [ledger: devx-hca-cap].
const SyndromeCapPage uint32 = 0x5e000018

func init() {
	devxCommands[uint16(mlx5prm.MLX5_CMD_OP_QUERY_HCA_CAP)] = devxCommand{name: "QUERY_HCA_CAP", kind: devxGeneral, run: runQueryHCACap}
}

// runQueryHCACap answers the general and crypto capability pages, the
// two libmlx5 reads for signature and crypto offload (rdma-core
// providers/mlx5/verbs.c get_hca_general_caps, get_crypto_caps), from
// the simulated device's capabilities, the same ones Info reports: every
// block signature and CRC the engine runs, the AES-XTS engines it has,
// DEK general objects and plaintext key import. The current and maximum
// settings (op_mod bit 0) are the same [ledger: devx-hca-cap].
func runQueryHCACap(x *devxCall) (*devxObj, devxReply) {
	if r, ok := x.needLen(mlx5prm.QueryHCACapInSize, mlx5prm.QueryHCACapOutSize); !ok {
		return nil, r
	}
	in, _ := mlx5prm.ViewQueryHCACapIn(x.in)
	out, _ := mlx5prm.ViewQueryHCACapOut(x.out)
	caps := x.c.d.Caps()
	var err error
	switch mlx5prm.HCACapOpMod(in.OpMod() &^ 1) {
	case mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE:
		g := out.CapabilityCmdHCACap()
		multi := uint8(0)
		if caps.CryptoMultiBlock {
			multi = 1
		}
		err = errors.Join(g.SetSho(1), g.SetSigerrDomainAndSigType(1), g.SetSigerrCQE(1), g.SetSigBlock4048(1),
			g.SetSigCRC32C(1), g.SetSigCRC64XP10(1), g.SetCrypto(1), g.SetAESXTSSingleBlockLETweak(1),
			g.SetAESXTSMultiBlockBETweak(multi), g.SetGeneralObjTypes(1<<uint(mlx5prm.MLX5_OBJ_TYPE_DEK)),
			g.SetLogMaxMkey(24), g.SetLogMaxKLMListSize(16))
	case mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_CRYPTO:
		c := out.CapabilityCryptoCaps()
		// Plaintext import only (wrapped_import_method 0), no failed
		// self-test; the DEK table holds 2^16 keys.
		err = errors.Join(c.SetWrappedImportMethod(0), c.SetLogMaxNumDeks(16), c.SetFailedSelftests(0))
	default:
		return nil, devxReply{device.DevxStatusBadParam, SyndromeCapPage}
	}
	if err != nil {
		return nil, devxReply{device.DevxStatusInternal, SyndromeCapPage}
	}
	return nil, devxReply{}
}
