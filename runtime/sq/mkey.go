package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// Mkey is an indirect mkey: how it was created, its PSVs, and the
// signature and crypto state its configurations leave, as libmlx5 tracks
// them. Make one with NewMkey (runtime/device's Mkey.Mkey hands out its
// own); the writer updates it as configurations are posted.
//
// Its fields mirror the checker's mkey (runtime/internal/wrcheck) one for
// one, so that the writer hands the checker the same memory on every
// configuration without a copy: the hot path converts the pointer
// (check), and TestMkeyMirrorsChecker keeps the two layouts equal.
type Mkey struct {
	LKey    uint32
	Flags   mlx.MkeyInitAttrFlags
	NumDesc int    // max_entries rounded up to a multiple of 4
	Length  uint64 // as the last layout set it

	// Signature context (Flags has BLOCK_SIGNATURE).
	MemPSV, WirePSV     uint32   // the PSV indexes the SET_PSV work requests name
	Sig                 SigState // the signature state
	Mem, Wire           Domain   // the domains last configured
	SigFlags            mlx.SigBlockAttrFlags
	CheckMask, CopyMask uint8
	ErrCount            uint32 // signature errors counted so far (the UMR's SIG_ERR parity)
	ErrCountUpdated     bool   // the next configuration tells the device ErrCount
	sigErrs             *uint32
	taken               uint32

	// Crypto context (Flags has CRYPTO).
	Crypto     CryptoState
	CryptoAttr mlx.CryptoAttr

	// Unknown is set when a batch that configured the mkey failed or was
	// aborted: the man pages call its state unknown until it is configured
	// again with its signature and crypto set or reset.
	Unknown bool

	// attrTag names the signature attributes Mem, Wire, SigFlags and the
	// masks hold (the checker's Mkey.attrTag): a configuration with the
	// same attributes does not copy them again. So those fields are the
	// writer's record; set them, if at all, only on an mkey no writer has
	// configured yet (taking one over), as the state fields.
	attrTag uint64
}

// Domain is a copy of a signature domain, taken when the setter is called
// (the caller may reuse its structs afterwards).
type Domain struct {
	Present bool
	Domain  mlx.SigBlockDomain // Sig is cleared: see T10dif and Crc
	T10dif  mlx.SigT10DIF
	Crc     mlx.SigCRC
}

// SigState is an mkey's signature state, as libmlx5 tracks it (Mkey.Sig);
// CryptoState its crypto state (Mkey.Crypto). A caller sets them only to
// take over an mkey a previous owner configured (conformance replay).
type (
	SigState    uint8
	CryptoState uint8
)

// The signature and crypto states: the checker's values.
const (
	SigInit       = SigState(wrcheck.SigInit)    // never configured, or configured without a signature
	SigReset      = SigState(wrcheck.SigReset)   // reset by MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR
	SigSet        = SigState(wrcheck.SigSet)     // configured by an earlier work request
	SigUpdated    = SigState(wrcheck.SigUpdated) // configured by the work request being built
	CryptoInit    = CryptoState(wrcheck.CryptoInit)
	CryptoSet     = CryptoState(wrcheck.CryptoSet)
	CryptoUpdated = CryptoState(wrcheck.CryptoUpdated)
)

// NewMkey describes an indirect mkey created with flags and maxEntries
// (mlx5dv_create_mkey).
func NewMkey(lkey uint32, flags mlx.MkeyInitAttrFlags, maxEntries int) *Mkey {
	return (*Mkey)(unsafe.Pointer(wrcheck.NewMkey(lkey, flags, maxEntries)))
}

// check is the checker's view of m: the same memory (nil for nil).
func (m *Mkey) check() *wrcheck.Mkey { return (*wrcheck.Mkey)(unsafe.Pointer(m)) }

// HasSig reports whether the mkey was created with BLOCK_SIGNATURE.
func (m *Mkey) HasSig() bool { return m.check().HasSig() }

// HasCrypto reports whether the mkey was created with CRYPTO.
func (m *Mkey) HasCrypto() bool { return m.check().HasCrypto() }

// SigError records a signature-error completion of the mkey, as the CQ
// poller sees it: the error count moves on, and the mkey's next
// configuration tells the device (SIG_ERR in the UMR). It is the
// poller's call and may run beside the writer.
func (m *Mkey) SigError() { m.check().SigError() }

// PendingSigErrs returns the signature errors the poller recorded that
// the writer has not yet added to ErrCount (it does when it next
// configures the mkey).
func (m *Mkey) PendingSigErrs() uint32 { return m.check().PendingSigErrs() }

// SameState reports whether m and o hold the same state: every field
// but the poller's counter, which is each mkey's own.
func (m *Mkey) SameState(o *Mkey) bool { return m.check().SameState(o.check()) }
