package device

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Info names a device and says what it can do.
type Info struct {
	Name string // the name Open takes
	GUID uint64 // node GUID (0 when the backend has none)
	Caps Caps
	// Err, from List, says why the device could not be opened to read
	// its capabilities (Caps is then zero).
	Err error
}

// Caps are the device's limits and mlx5 capabilities (ibv_query_device_ex
// and mlx5dv_query_device).
type Caps struct {
	MaxQPWR       int // work requests per queue
	MaxSGE        int
	MaxCQE        int
	MaxSRQWR      int // work requests per SRQ (0: unknown)
	MaxSRQSGE     int // SGEs per SRQ work request (0: unknown)
	MaxInlineData int // inline bytes per send WQE (0: unknown)
	CQE128        bool
	CQEVersion    int
	DC            bool // DCI and DCT QPs

	// Signature offload (MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD).
	Signature bool
	SigProt   mlx.SigProtCaps
	SigT10BG  mlx.SigT10DIFBGCaps
	SigCRC    mlx.SigCRCTypeCaps
	SigBlock  mlx.BlockSizeCaps

	// Crypto (MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD): AES-XTS engines.
	Crypto            bool
	CryptoSingleBlock bool
	CryptoMultiBlock  bool

	// DCI streams (MLX5DV_CONTEXT_MASK_DCI_STREAMS).
	DCIStreams         bool
	MaxLogNumConcurent int
	MaxLogNumErrored   int

	// MMO: the DMA memcpy engine's largest copy (0: no memcpy).
	MaxMemcpy uint64

	MkeyTag bool // an mkey's tag byte can be updated by UMR
}

// Port is port 1's state and address.
type Port struct {
	State    mlx.PortState
	MTU      mlx.MTU // active MTU
	LID      uint16
	GID      [16]byte // GID index GIDIndex
	GIDIndex int
	Ethernet bool // RoCE: the link layer is Ethernet, the GID routes
	// MaxMsgSize is the largest message the port carries (max_msg_sz); 0
	// unknown. The send queue writers refuse a work request over it.
	MaxMsgSize uint32
}

// CQConfig describes a CQ to create.
type CQConfig struct {
	CQEs    int // entries wanted (the device may round up)
	CQESize int // 64 (0 means 64) or 128
	Channel *CompChannel
}

// QPKind is the transport of a QP.
type QPKind int

const (
	RC  QPKind = iota + 1 // reliable connected
	DCI                   // dynamically connected initiator
	DCT                   // dynamically connected target
)

func (k QPKind) String() string {
	switch k {
	case RC:
		return "RC"
	case DCI:
		return "DCI"
	case DCT:
		return "DCT"
	}
	return "QPKind(invalid)"
}

// QPConfig describes a QP to create (mlx5dv_create_qp).
type QPConfig struct {
	Kind           QPKind
	SendCQ, RecvCQ *CQ // RecvCQ nil: SendCQ

	MaxSendWR, MaxRecvWR   int
	MaxSendSGE, MaxRecvSGE int
	MaxInlineData          int
	SigAll                 bool // every work request completes with a CQE
	// SRQ is the shared receive queue the QP receives through: an RC QP
	// then has no receive queue of its own (MaxRecvWR 0), and a DCT
	// needs one (mlx5dv_create_qp(3)).
	SRQ *SRQ

	SendOps     mlx.IBVQPCreateSendOpsFlags // IBV_QP_EX_WITH_*
	MlxSendOps  mlx.QPCreateSendOpsFlags    // MLX5DV_QP_EX_WITH_*
	CreateFlags mlx.QPCreateFlags           // MLX5DV_QP_CREATE_*

	// DCI streams (DCI only; 0 and 0: none).
	LogNumConcurent, LogNumErrored int
	// DCAccessKey is a DCT's access key, and the key a DCI's work
	// requests carry.
	DCAccessKey uint64
}

// QPAttr are the attributes of a state transition (ibv_qp_attr). A
// backend uses, for each transition and QP kind, what ibv_modify_qp(3)
// and mlx5dv_create_qp(3) require: RC to INIT port, pkey index and
// access; to RTR path MTU, the remote (QPN, PSN, LID or GID), max
// destination read atomics and the minimal RNR timer; to RTS timeout,
// retry counts, the send PSN and max read atomics. A DCI skips the remote
// fields, a DCT stops at RTR.
type QPAttr struct {
	Access   mlx.AccessFlags // remote access a responder allows
	PKeyIdx  uint16
	MTU      mlx.MTU
	Remote   Endpoint // RTR: who the QP talks to (RC)
	SQPSN    uint32   // RTS: the first PSN the QP sends
	MinRNR   uint8
	Timeout  uint8
	Retry    uint8
	RNRRetry uint8
	RdAtomic uint8 // max_rd_atomic and max_dest_rd_atomic
}

// Endpoint is what the other side of an RC connection needs to know of a
// QP: its number and first PSN, and its port's address.
type Endpoint struct {
	QPN uint32
	PSN uint32
	LID uint16
	GID [16]byte
	// GIDIndex is the local GID index the QP sends from (RoCE).
	GIDIndex int
	Ethernet bool
}

// DEKConfig describes a plaintext data encryption key (mlx5dv_dek_create,
// struct mlx5dv_dek_init_attr).
type DEKConfig struct {
	KeySize mlx.CryptoKeySize    // 128 or 256 bit AES-XTS
	Purpose mlx.CryptoKeyPurpose // AES_XTS (the zero value), the only one
	Key     []byte               // the two AES-XTS keys, key1 then key2: 32 or 64 bytes
	// HasKeytag: the DEK has a keytag, Keytag, which every crypto mkey
	// using it must name (mlx5dv_crypto_attr.keytag); a mismatch fails
	// the transfer.
	HasKeytag bool
	Keytag    [8]byte
	Opaque    [8]byte // plaintext metadata describing the key (not the keytag)
}

// InitAttr returns the mlx5dv_dek_init_attr of the key (PD and crypto
// login left for the backend): its key field holds key1, key2, then the
// keytag if there is one, as mlx5dv_dek_create(3) lays out a plaintext
// key.
func (c *DEKConfig) InitAttr() mlx.DEKInitAttr {
	a := mlx.DEKInitAttr{KeySize: c.KeySize, HasKeytag: c.HasKeytag, KeyPurpose: c.Purpose, Opaque: c.Opaque}
	n := copy(a.Key[:], c.Key)
	if c.HasKeytag {
		copy(a.Key[n:], c.Keytag[:])
	}
	return a
}

// AsyncEvent is an asynchronous event (ibv_get_async_event), already
// acknowledged. Context.AsyncEvent returns the zero AsyncEvent with an
// error: its Type field reads IBV_EVENT_CQ_ERR (the enum's 0) but it is
// no event; IsZero tells it apart and String prints it as "no event".
type AsyncEvent struct {
	Type mlx.EventType
	QPN  uint32 // for QP events
	CQN  uint32 // for CQ events
	SRQN uint32 // for SRQ events (IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_ERR)
	Port int    // for port events

	ok bool // set by Context.AsyncEvent on an event the device reported
}

// IsZero reports whether e is the zero AsyncEvent: not an event.
func (e AsyncEvent) IsZero() bool { return e == AsyncEvent{} }

// String names the event's type and the object it is about.
func (e AsyncEvent) String() string {
	switch {
	case !e.ok:
		return "no event"
	case e.QPN != 0:
		return fmt.Sprintf("%v (QP %#x)", e.Type, e.QPN)
	case e.Type == mlx.IBV_EVENT_CQ_ERR:
		return fmt.Sprintf("%v (CQ %#x)", e.Type, e.CQN)
	case e.SRQN != 0:
		return fmt.Sprintf("%v (SRQ %#x)", e.Type, e.SRQN)
	case e.Port != 0:
		return fmt.Sprintf("%v (port %d)", e.Type, e.Port)
	}
	return e.Type.String()
}

// QPCaps are the sizes a QP got (ibv_qp_cap): at least what QPConfig
// asked; a device may round up.
type QPCaps struct {
	MaxSendWR, MaxRecvWR   int
	MaxSendSGE, MaxRecvSGE int
	MaxInlineData          int
}

// QPInfo is what QP.Query reports (ibv_query_qp): the state the device
// has the QP in, and the attributes the transitions set, as the device
// keeps them. As ibv_query_qp(3) says, an attribute is meaningful only
// once a transition set it (Access and PKeyIdx from INIT, MTU, Remote and
// MinRNR from RTR, SQPSN, Timeout, Retry and RNRRetry from RTS), and a
// QP moved to RESET forgets them.
type QPInfo struct {
	State mlx.QPState
	// Attr holds the transitions' attributes: Remote.QPN is dest_qp_num,
	// Remote.PSN rq_psn (the first PSN expected from the peer), Remote.LID
	// and Remote.GID the primary path's destination, Remote.GIDIndex its
	// source GID index and Remote.Ethernet whether it routes by GID (a
	// global route); RdAtomic is max_rd_atomic.
	Attr QPAttr
	// DestRdAtomic is max_dest_rd_atomic (QPAttr.RdAtomic sets both).
	DestRdAtomic uint8
	Caps         QPCaps
}
