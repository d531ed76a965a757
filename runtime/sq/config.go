package sq

import (
	"fmt"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// BlueFlame describes the QP's BlueFlame register (its bfreg).
type BlueFlame struct {
	UUARN    int  // 0: the register without BlueFlame buffers
	Size     int  // bytes per half of the register (buf_size)
	PreferBF bool // MLX5_POST_SEND_PREFER_BF: BlueFlame every single-WQE batch that fits
	ShutUpBF bool // MLX5_SHUT_UP_BF: never BlueFlame
}

// PD is what memcpy needs of the protection domain: the opaque MR and
// buffer its metadata segment points at.
type PD struct {
	OpaqueLKey uint32
	OpaqueAddr uint64
}

// QP is what the queue pair was created with, and what the device
// offers the send path: one struct, which the writer reads its budget
// (MaxPost) from and the checker its capabilities.
//
// It is declared here rather than as an alias of the checker's type so
// that go doc shows its fields; New converts it (the two structs have the
// same fields, which the compiler checks at that conversion).
type QP struct {
	Type       mlx.QPType                  // QPRC or QPDCI
	SendOps    mlx.IBVQPCreateSendOpsFlags // ibv send_ops_flags (IBV_QP_EX_WITH_*)
	MlxSendOps mlx.QPCreateSendOpsFlags    // mlx5dv send_ops_flags (MLX5DV_QP_EX_WITH_*)

	MaxInlineData int // cap.max_inline_data as the QP was created
	MaxSendSGE    int // cap.max_send_sge
	MaxPost       int // work requests the send queue holds (libmlx5's max_post); 0: not limited

	Streams         bool // a DCI created with MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS
	LogNumConcurent int  // its dci_streams.log_num_concurent

	MaxMemcpy         uint64 // mlx5dv_context.max_wr_memcpy_length; 0: memcpy unsupported
	MaxMsgSize        uint64 // the port's max_msg_sz (ibv_query_port); 0: unknown, not checked (rule ibv_wr.msg_size)
	MkeyTagSupported  bool   // the device can update an mkey's tag byte
	CryptoSingleBlock bool   // the AES-XTS engine handles a single data unit per mkey
	CryptoMultiBlock  bool   // the AES-XTS engine handles many
}

// Config describes a send queue.
type Config struct {
	Mem    *qmem.Memory
	QPN    uint32
	QP     QP   // what the QP was created with
	SigAll bool // the QP was created with sq_sig_all
	BF     BlueFlame
	PD     PD

	// Where a queue starts (0 for a new QP). Head-Tail work requests
	// may be outstanding (posted, not completed), as libmlx5's sq.head
	// and sq.tail count them; they hold ring room until Completed.
	CurPost, Head, Tail uint32
	FmCache             uint8

	// Starts are the producer indexes at which the outstanding work
	// requests begin, oldest (Tail) first, each below the next and all
	// within one ring before CurPost. nil: each took one WQEBB, the
	// newest ending at CurPost (the least room they can hold; libmlx5
	// itself counts only work requests, not WQEBBs).
	Starts []uint32

	// CloseWait bounds how long Close waits for a batch in progress on
	// another goroutine; 0 is DefaultCloseWait.
	CloseWait time.Duration
}

// maxDS is the largest WQE size a control segment can state: 6 bits of
// 16-byte units.
const maxDS = 0x3f

// checkWQESizes refuses capabilities that would let a work request grow
// past maxDS units, which the control segment cannot state: inline data
// after an RDMA header, an SGE list after an atomic's, and (on a QP with
// the mkey builders) a UMR's translation and BSFs, which fit
// max_inline_data + 4 bytes rounded up to a WQEBB.
func checkWQESizes(qp *QP) error {
	t := 0
	if qp.Type == mlx.QPDCI {
		t = avSize / 16
	}
	umr := qp.MlxSendOps&(mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE|mlx.MLX5DV_QP_EX_WITH_MR_LIST|mlx.MLX5DV_QP_EX_WITH_MR_INTERLEAVED) != 0
	switch {
	case 2+t+(qp.MaxInlineData+4+15)/16 > maxDS:
		return fmt.Errorf("sq: max_inline_data %d: an inline work request would exceed the %d 16-byte units a WQE can have", qp.MaxInlineData, maxDS)
	case 3+t+qp.MaxSendSGE > maxDS:
		return fmt.Errorf("sq: max_send_sge %d: a work request would exceed the %d 16-byte units a WQE can have", qp.MaxSendSGE, maxDS)
	case umr && umrFixed/16+align64(qp.MaxInlineData+4)/16 > maxDS:
		return fmt.Errorf("sq: max_inline_data %d: an mkey configuration would exceed the %d 16-byte units a WQE can have", qp.MaxInlineData, maxDS)
	}
	return nil
}
