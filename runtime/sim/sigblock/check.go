package sigblock

import "encoding/binary"

// Fail is a set of the signature parts a block failed.
type Fail uint8

// The parts of a signature that can fail.
const (
	FailGuard Fail = 1 << iota // the guard / CRC (MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD)
	FailApp                    // the T10-DIF application tag (BAD_APPTAG)
	FailRef                    // the T10-DIF reference tag (BAD_REFTAG)
)

// MkeyErr is enum mlx5dv_mkey_err_type.
type MkeyErr uint8

// The values of enum mlx5dv_mkey_err_type.
const (
	MkeyNoErr     MkeyErr = 0 // MLX5DV_MKEY_NO_ERR
	MkeyBadGuard  MkeyErr = 1 // MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD
	MkeyBadRefTag MkeyErr = 2 // MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG
	MkeyBadAppTag MkeyErr = 3 // MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG
)

// The syndrome bits of the signature-error CQE (testdata/cqe-vectors).
const (
	SyndromeRefTag = 1 << 11
	SyndromeAppTag = 1 << 12
	SyndromeGuard  = 1 << 13
)

// Error is the first block that failed its check. As in
// mlx5dv_mkey_check(3), the guard's Actual is computed from the data and
// its Expected is what the signature field holds; for the tags Expected is
// what the domain configures (the app tag, the ref tag of the block) and
// Actual what the field holds. All failed parts are kept; the values of the
// parts that did not fail are set too. [ledger: sig-error-fields]
type Error struct {
	Failed Fail
	Kind   Kind
	CRC    CRCType
	Block  uint64 // block number (as given to the check, plus blocks passed)
	Offset uint64 // byte offset of the block in the checked buffer

	ExpectedGuard, ActualGuard uint64
	ExpectedApp, ActualApp     uint16
	ExpectedRef, ActualRef     uint32
}

// Syndrome is the CQE syndrome with a bit per failed part.
func (e *Error) Syndrome() uint16 {
	var s uint16
	if e.Failed&FailRef != 0 {
		s |= SyndromeRefTag
	}
	if e.Failed&FailApp != 0 {
		s |= SyndromeAppTag
	}
	if e.Failed&FailGuard != 0 {
		s |= SyndromeGuard
	}
	return s
}

// Reported is what mlx5dv_mkey_check returns for a CQE carrying this
// Syndrome: libmlx5 tests REFTAG, then APPTAG, then GUARD (the vectors'
// sig_syndrome_priority case).
func (e *Error) Reported() (MkeyErr, uint64, uint64) {
	switch {
	case e.Failed&FailRef != 0:
		return MkeyBadRefTag, uint64(e.ExpectedRef), uint64(e.ActualRef)
	case e.Failed&FailApp != 0:
		return MkeyBadAppTag, uint64(e.ExpectedApp), uint64(e.ActualApp)
	case e.Failed&FailGuard != 0:
		return MkeyBadGuard, e.ExpectedGuard, e.ActualGuard
	}
	return MkeyNoErr, 0, 0
}

// T10First keeps only the part the man page's T10-DIF order reports first
// (GUARD, then APPTAG, then REFTAG), for a device that writes one syndrome
// bit per block. The simulator does not: the signature-error CQE has a
// syndrome bit and expected/actual values for every part, so it writes all
// failed parts and the poller picks (libmlx5 REFTAG first, the kernel's
// mlx5_ib GUARD first).
func (e Error) T10First() Error {
	switch {
	case e.Failed&FailGuard != 0:
		e.Failed = FailGuard
	case e.Failed&FailApp != 0:
		e.Failed = FailApp
	default:
		e.Failed &= FailRef
	}
	return e
}

// CQE returns the signature-error CQE's expected_trans_sig,
// actual_trans_sig, expected_ref_tag and actual_ref_tag: T10-DIF puts
// guard<<16|app tag and the ref tags there, a 32-bit CRC its value and
// zero ref tags, CRC64_XP10 its high and low halves. [ledger: sig-error-fields]
func (e *Error) CQE() (expTrans, actTrans, expRef, actRef uint32) {
	switch {
	case e.Kind == KindT10DIF:
		return uint32(e.ExpectedGuard)<<16 | uint32(e.ExpectedApp), uint32(e.ActualGuard)<<16 | uint32(e.ActualApp),
			e.ExpectedRef, e.ActualRef
	case e.CRC.Width() == 64:
		return uint32(e.ExpectedGuard >> 32), uint32(e.ActualGuard >> 32), uint32(e.ExpectedGuard), uint32(e.ActualGuard)
	}
	return uint32(e.ExpectedGuard), uint32(e.ActualGuard), 0, 0
}

func (e *Error) Error() string {
	t, exp, act := e.Reported()
	name := "guard"
	switch t {
	case MkeyBadRefTag:
		name = "reference tag"
	case MkeyBadAppTag:
		name = "application tag"
	}
	return "sigblock: block " + itoa(e.Block) + " at offset " + itoa(e.Offset) + ": bad " + name +
		": expected 0x" + hexa(exp) + ", actual 0x" + hexa(act)
}

func hexa(v uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	i := len(b)
	for {
		i--
		b[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			return string(b[i:])
		}
	}
}

// differ returns a check_mask-shaped set of the bytes of field (size
// bytes) that differ from want and that mask selects: bit 7-i for byte i
// as the field lies in memory or on the wire.
func differ(field, want []byte, mask uint8) uint8 {
	var d uint8
	for i := range want {
		if field[i] != want[i] {
			d |= 0x80 >> i
		}
	}
	return d & mask
}

// CheckTuple checks block n's data against its signature field, comparing
// the bytes check_mask selects. Escaped T10-DIF blocks (FlagAppEscape with
// app tag 0xffff, FlagAppRefEscape with app 0xffff and ref 0xffffffff) are
// not checked at all: the kernel's include/rdma/signature.h documents
// app_escape/ref_escape as "skip block check", as SBC-3 and block/t10-pi.c do;
// mlx5dv_wr_set_mkey_sig_block(3) only says the guard is not checked, but
// an escaped app tag that was still checked against the configured one
// would fail every escaped block. [ledger: sig-escapes]
// Error.Offset is left 0.
func (d *Domain) CheckTuple(data, tuple []byte, n uint64, mask uint8) (Error, error) {
	size := d.TupleSize()
	if len(tuple) < size {
		return Error{}, ErrShort
	}
	e := d.checkTuple(data, tuple, n, mask, size)
	return e, nil
}

// checkTuple compares the field byte for byte with the one the device
// would generate. A CRC's Expected is the field read little-endian; all
// failing parts of a T10-DIF field are set (the CQE carries a syndrome
// bit for each, see Syndrome).
func (d *Domain) checkTuple(data, tuple []byte, n uint64, mask uint8, size int) Error {
	e := Error{Kind: d.Kind, CRC: d.CRC, Block: n, ActualGuard: d.Guard(data)}
	if size != 4 && size != 8 {
		return e
	}
	var want [8]byte
	if d.Kind != KindT10DIF {
		if size == 8 {
			e.ExpectedGuard = binary.LittleEndian.Uint64(tuple)
		} else {
			e.ExpectedGuard = uint64(binary.LittleEndian.Uint32(tuple))
		}
		d.putTuple(want[:size], e.ActualGuard, n)
		if differ(tuple[:size], want[:size], mask) != 0 {
			e.Failed = FailGuard
		}
		return e
	}
	e.ExpectedGuard = uint64(binary.BigEndian.Uint16(tuple))
	e.ActualApp, e.ActualRef = binary.BigEndian.Uint16(tuple[2:]), binary.BigEndian.Uint32(tuple[4:])
	e.ExpectedApp, e.ExpectedRef = d.AppTag, d.RefTagOf(n)
	if d.Flags&FlagAppEscape != 0 && e.ActualApp == 0xFFFF ||
		d.Flags&FlagAppRefEscape != 0 && e.ActualApp == 0xFFFF && e.ActualRef == 0xFFFFFFFF {
		return e
	}
	d.putTuple(want[:], e.ActualGuard, n)
	diff := differ(tuple[:8], want[:], mask)
	if diff&MaskT10DIFGuard != 0 {
		e.Failed |= FailGuard
	}
	if diff&MaskT10DIFAppTag != 0 {
		e.Failed |= FailApp
	}
	if diff&MaskT10DIFRefTag != 0 {
		e.Failed |= FailRef
	}
	return e
}
