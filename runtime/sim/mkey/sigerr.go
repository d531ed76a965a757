package mkey

import (
	"encoding/binary"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
)

// The domain byte of a signature-error CQE.
const (
	DomainWire   uint8 = 0
	DomainMemory uint8 = 1
)

// SigErr is a signature error recorded on an mkey, in the fields of the
// MLX5_CQE_SIG_ERR CQE the engine writes for it (runtime/cq's
// getSigErrInfo reads them back).
type SigErr struct {
	Key      uint32 // the mkey (the CQE's mkey field; the poller indexes it by Key >> 8)
	Syndrome uint16 // REFTAG 1<<11, APPTAG 1<<12, GUARD 1<<13: a bit for every failed part of the block
	// T10-DIF: guard<<16 | application tag, and the reference tags; a
	// 32-bit CRC: the CRC and zero tags; CRC64_XP10: its high and low
	// halves. [ledger: sig-error-fields]
	ExpectedTransSig, ActualTransSig uint32
	ExpectedRefTag, ActualRefTag     uint32
	Offset                           uint64 // byte offset of the failed block from the transfer's start, in the checked domain (block+field strides)
	SigType                          uint8  // 0: block signature
	Domain                           uint8  // DomainWire or DomainMemory: the domain whose check failed

	Block sigblock.Error // the failed block in sigblock's terms
}

// record keeps the first signature error of a transfer on the mkey until
// SigError takes it. Every failed part of the first failed block is
// written: rdma-core providers/mlx5/cq.c struct mlx5_sigerr_cqe carries a
// syndrome bitmask and the expected and actual guard<<16|app tag and ref
// tag, and the pollers choose (libmlx5's mlx5_decode_sigerr tests REFTAG,
// then APPTAG, then GUARD; the kernel's mlx5_ib get_sig_err_item GUARD
// first); mlx5dv_mkey_check(3)'s "first in the T10-DIF order" is what a
// poller reports, not what the CQE holds. [ledger: sig-failure-report]
// The offset is the failed block's from the transfer's start in the
// checked domain, counted in blocks with their fields: the kernel's iSER
// (drivers/infiniband/ulp/iser/iser_verbs.c) and isert
// (ulp/isert/ib_isert.c) divide sig_err_offset by the sector size plus 8.
// [ledger: sig-error-offset]
func (t *Table) record(m *mkey, e sigblock.Error, domain uint8) {
	if m.hasErr {
		return
	}
	s := SigErr{Key: m.key(), Syndrome: e.Syndrome(), Offset: e.Offset, Domain: domain, Block: e}
	s.ExpectedTransSig, s.ActualTransSig, s.ExpectedRefTag, s.ActualRefTag = e.CQE()
	m.err, m.hasErr = s, true
}

// SigError returns and clears the signature error the last transfers
// recorded on the mkey.
func (t *Table) SigError(key uint32) (SigErr, bool) {
	m := t.mkeys[key>>8]
	if m == nil || !m.hasErr {
		return SigErr{}, false
	}
	m.hasErr = false
	return m.err, true
}

// PutCQE writes e as a 64-byte MLX5_CQE_SIG_ERR CQE (the second half of a
// 128-byte entry) with the owner bit given; the other bytes are zeroed.
func (e *SigErr) PutCQE(cqe []byte, owner bool) error {
	if len(cqe) < 64 {
		return fmt.Errorf("mkey: a CQE has 64 bytes, not %d", len(cqe))
	}
	clear(cqe[:64])
	be := binary.BigEndian
	be.PutUint32(cqe[16:], e.ExpectedTransSig)
	be.PutUint32(cqe[20:], e.ActualTransSig)
	be.PutUint32(cqe[24:], e.ExpectedRefTag)
	be.PutUint32(cqe[28:], e.ActualRefTag)
	be.PutUint16(cqe[32:], e.Syndrome)
	cqe[34] = e.SigType
	cqe[35] = e.Domain
	be.PutUint32(cqe[36:], e.Key)
	be.PutUint64(cqe[40:], e.Offset)
	op := uint8(mlx.MLX5_CQE_SIG_ERR) << 4
	if owner {
		op |= 1
	}
	cqe[63] = op
	return nil
}

func (e *SigErr) Error() string {
	return fmt.Sprintf("mkey %#x: signature error in the %s domain: %v", e.Key, [2]string{"wire", "memory"}[e.Domain&1], &e.Block)
}
