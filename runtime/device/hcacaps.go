package device

import (
	"errors"
	"fmt"
	"sync"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	"github.com/mlx5gen/mlx5gen/runtime/internal/devxcmd"
)

// HCACaps are the signature and crypto capabilities a DEVX device
// reports in its QUERY_HCA_CAP pages (the general page, and the crypto
// page when the general page says there is one), read with the commands
// libmlx5 itself sends when it opens a device. They decide, at create
// time, whether the API creates a signature or crypto mkey or a DEK.
//
// Why QUERY_HCA_CAP rather than mlx5dv_query_device (Info().Caps):
// libmlx5 derives its signature and crypto caps from these same pages,
// but does not pass on two facts the API needs before creating a DEK by
// command (whether the device makes DEK general objects at all, and
// whether it accepts plaintext keys); and a command is the same bytes on
// every DEVX backend, so the simulator answers the question hardware is
// asked.
type HCACaps struct {
	// BlockSignature: T10-DIF and CRC block signatures (cmd_hca_cap sho
	// and sigerr_domain_and_sig_type both set: libmlx5's block_prot).
	BlockSignature bool
	SigBlock4048   bool // 4048-byte blocks (sig_block_4048)
	SigCRC32C      bool // sig_crc32c
	SigCRC64XP10   bool // sig_crc64_xp10

	// AES-XTS engines: single-block (aes_xts_single_block_le_tweak)
	// and multi-block (aes_xts_multi_block_be_tweak, which libmlx5
	// counts as both).
	AESXTSSingleBlock bool
	AESXTSMultiBlock  bool
	// DEKObjects: the device makes DEK general objects
	// (general_obj_types bit MLX5_OBJ_TYPE_DEK).
	DEKObjects bool
	// CryptoPage: cmd_hca_cap.crypto, the crypto page was read.
	CryptoPage bool
	// WrappedImportOnly: keys must be imported wrapped under a crypto
	// login (crypto_caps.wrapped_import_method AES); plaintext keys, the
	// only ones this API loads, are refused.
	WrappedImportOnly bool
	LogMaxNumDEKs     int    // crypto_caps.log_max_num_deks
	FailedSelftests   uint16 // crypto_caps.failed_selftests (0: none failed)

	LogMaxKLMListSize int // log2 of the KLM entries an indirect mkey takes
}

// AESXTS reports whether the device has an AES-XTS engine: what crypto
// mkeys and DEKs need.
func (h HCACaps) AESXTS() bool { return h.AESXTSSingleBlock || h.AESXTSMultiBlock }

// HCACaps reads the device's signature and crypto capabilities with
// QUERY_HCA_CAP (the general page, then the crypto page if there is
// one) through DEVX; ErrNoDevx when the backend has none. The first
// answer is kept: capabilities do not change while a device is open.
func (c *Context) HCACaps() (HCACaps, error) {
	c.hca.mu.Lock()
	defer c.hca.mu.Unlock()
	if c.hca.ok {
		return c.hca.caps, nil
	}
	d, err := c.devx("HCACaps")
	if err != nil {
		return HCACaps{}, err
	}
	if err := c.root.enter("HCACaps"); err != nil {
		return HCACaps{}, err
	}
	defer c.root.leave()
	h, err := queryHCACaps(d)
	if err != nil {
		return HCACaps{}, fmt.Errorf("device: HCACaps: %q: %w", c.name, err)
	}
	c.hca.caps, c.hca.ok = h, true
	return h, nil
}

// hcaCache is the context's HCACaps, read once.
type hcaCache struct {
	mu   sync.Mutex
	ok   bool
	caps HCACaps
}

// queryHCACaps runs the QUERY_HCA_CAP commands.
func queryHCACaps(d DevxBackend) (HCACaps, error) {
	out, err := queryPage(d, mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE)
	if err != nil {
		return HCACaps{}, err
	}
	g, err := devxcmd.ParseGeneral(out)
	if err != nil {
		return HCACaps{}, err
	}
	h := HCACaps{
		BlockSignature: g.BlockSignature(), SigBlock4048: g.SigBlock4048, SigCRC32C: g.SigCRC32C, SigCRC64XP10: g.SigCRC64XP10,
		AESXTSSingleBlock: g.AESXTSSingleBlock || g.AESXTSMultiBlock, AESXTSMultiBlock: g.AESXTSMultiBlock,
		DEKObjects: g.DEKObjects(), CryptoPage: g.Crypto, LogMaxKLMListSize: int(g.LogMaxKLMListSize),
	}
	if !g.Crypto {
		return h, nil
	}
	if out, err = queryPage(d, mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_CRYPTO); err != nil {
		return HCACaps{}, err
	}
	cr, err := devxcmd.ParseCrypto(out)
	if err != nil {
		return HCACaps{}, err
	}
	h.WrappedImportOnly, h.LogMaxNumDEKs, h.FailedSelftests = cr.WrappedOnly(), int(cr.LogMaxNumDEKs), cr.FailedSelftests
	return h, nil
}

// queryPage runs QUERY_HCA_CAP of one page and returns its output.
func queryPage(d DevxBackend, page mlx5prm.HCACapOpMod) ([]byte, error) {
	in, err := devxcmd.QueryHCACap(page)
	if err != nil {
		return nil, err
	}
	out := make([]byte, devxcmd.QueryHCACapOutLen)
	if err := devxResult("HCACaps", in, out, d.DevxGeneralCmd(in, out)); err != nil {
		return nil, fmt.Errorf("QUERY_HCA_CAP %v: %w", page, err)
	}
	return out, nil
}

// ErrNoFeature: the device lacks what a create call needs, as its
// QUERY_HCA_CAP pages say. It matches errors.ErrUnsupported.
var ErrNoFeature = fmt.Errorf("the device does not offer it: %w", errors.ErrUnsupported)

// lacks is the error of a create call needing feature, which the device
// lacks; why names the capability bits.
func lacks(feature, why string) error {
	return fmt.Errorf("%s: %s: %w", feature, why, ErrNoFeature)
}
