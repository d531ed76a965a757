package cq

import (
	"encoding/binary"
	"sync"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// SigErr is a signature error as a signature-error CQE reports it
// (libmlx5's struct mlx5_sig_err).
type SigErr struct {
	Syndrome uint16 // REFTAG 1<<11, APPTAG 1<<12, GUARD 1<<13
	Expected uint64 // transaction signature << 32 | reference tag
	Actual   uint64
	Offset   uint64
	SigType  uint8 // 0: block signature
	Domain   uint8 // 0: wire, 1: memory
}

// Signature-error syndrome bits and values (verbs.c's MLX5_SIGERR_CQE_*).
const (
	SigSyndromeRefTag = 1 << 11
	SigSyndromeAppTag = 1 << 12
	SigSyndromeGuard  = 1 << 13

	sigTypeBlock = 0
	domainWire   = 0
	domainMemory = 1
)

// SigRecorder is an mkey that records signature errors: the poller calls
// RecordSigErr for each signature-error CQE naming it, and the CQE is
// never returned as a completion. false: the mkey has no signature
// context (libmlx5 would crash); the CQE is reported as unknown.
type SigRecorder interface {
	RecordSigErr(e SigErr) bool
}

// getSigErrInfo decodes a signature-error CQE; the type and domain bytes
// are masked to their 3 bits as rdma-core 54.0 and later do (rule
// cq.sigerr_domain_mask). rdma-core: get_sig_err_info.
func getSigErrInfo(cqe []byte) SigErr {
	be := binary.BigEndian
	return SigErr{
		Syndrome: be.Uint16(cqe[32:34]),
		Expected: uint64(be.Uint32(cqe[16:20]))<<32 | uint64(be.Uint32(cqe[24:28])),
		Actual:   uint64(be.Uint32(cqe[20:24]))<<32 | uint64(be.Uint32(cqe[28:32])),
		Offset:   be.Uint64(cqe[40:48]),
		SigType:  cqe[34] & 7,
		Domain:   cqe[35] & 7,
	}
}

// SigKind is how a domain's signature was configured (libmlx5's enum
// mlx5_sig_type plus the CRC type).
type SigKind uint8

const (
	SigNone SigKind = iota
	SigCRC32
	SigCRC32C
	SigCRC64XP10
	SigT10DIF
)

// Mkey is an mkey's signature context as the poller and MkeyCheck see it
// (libmlx5's struct mlx5_sig_ctx): the signature of each domain, and the
// last error recorded. RecordSigErr (the poller's) and Check may run on
// different goroutines: they take the mkey's lock, as libmlx5 takes the
// signature context's (sig->lock). Set the domains before the mkey is
// registered with a CQ, or under its lock (Lock, Unlock).
type Mkey struct {
	mu sync.Mutex

	// NoContext says the mkey was created without a signature context:
	// Check fails with EINVAL and a signature-error CQE naming it is
	// unknown (libmlx5 would crash on it).
	NoContext bool
	Mem, Wire SigKind

	ErrInfo         SigErr
	ErrCount        uint32
	ErrExists       bool
	ErrCountUpdated bool
}

// Lock and Unlock take the mkey's lock, to change its domains while it is
// registered with a CQ that is being polled.
func (m *Mkey) Lock() { m.mu.Lock() }

// Unlock releases the lock Lock took.
func (m *Mkey) Unlock() { m.mu.Unlock() }

// RecordSigErr records a signature error (the SIG_ERR case of
// mlx5_parse_cqe).
func (m *Mkey) RecordSigErr(e SigErr) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.NoContext {
		return false
	}
	m.ErrExists = true
	m.ErrCount++
	m.ErrCountUpdated = true
	m.ErrInfo = e
	return true
}

// MkeyErr is struct mlx5dv_mkey_err with its signature error.
type MkeyErr struct {
	Type     mlx.MkeyErrType
	Expected uint64
	Actual   uint64
	Offset   uint64
}

// Check reports the signature error recorded on the mkey and clears it
// (MLX5DV_MKEY_NO_ERR if there is none). It fails with EINVAL, keeping
// the error, for a syndrome without a known bit, a transaction that is
// not a block signature, an unknown domain, or a domain without a
// signature. The reference tag is reported before the application tag
// before the guard; the guard is 16 bits for T10-DIF, 32 for CRC32 and
// CRC32C, 64 for CRC64-XP10. rdma-core: _mlx5dv_mkey_check,
// mlx5_decode_sigerr.
//
// It sees only what a poller recorded: the poller of the CQ the
// signature-error CQE landed on, the CQ of the side whose mkey checked the
// data (on an RDMA WRITE between two devices, the target's, not the
// initiator's, whose completion is a success). Poll that CQ first;
// runtime/device's Mkey.Check says which CQ that is.
func (m *Mkey) Check() (MkeyErr, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.NoContext {
		return MkeyErr{}, syscall.EINVAL
	}
	if !m.ErrExists {
		return MkeyErr{Type: mlx.MLX5DV_MKEY_NO_ERR}, nil
	}
	e := &m.ErrInfo
	if e.Syndrome&(SigSyndromeRefTag|SigSyndromeAppTag|SigSyndromeGuard) == 0 || e.SigType != sigTypeBlock {
		return MkeyErr{}, syscall.EINVAL
	}
	var kind SigKind
	switch e.Domain {
	case domainWire:
		kind = m.Wire
	case domainMemory:
		kind = m.Mem
	default:
		return MkeyErr{}, syscall.EINVAL
	}
	if kind == SigNone {
		return MkeyErr{}, syscall.EINVAL
	}
	r := MkeyErr{Offset: e.Offset}
	switch {
	case e.Syndrome&SigSyndromeRefTag != 0:
		r.Type, r.Expected, r.Actual = mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG, e.Expected&0xffffffff, e.Actual&0xffffffff
	case e.Syndrome&SigSyndromeAppTag != 0:
		r.Type, r.Expected, r.Actual = mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG, e.Expected>>32&0xffff, e.Actual>>32&0xffff
	default:
		r.Type = mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD
		switch kind {
		case SigT10DIF:
			r.Expected, r.Actual = e.Expected>>48, e.Actual>>48
		case SigCRC64XP10:
			r.Expected, r.Actual = e.Expected, e.Actual
		default:
			r.Expected, r.Actual = e.Expected>>32, e.Actual>>32
		}
	}
	m.ErrExists = false
	return r, nil
}
