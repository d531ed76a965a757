package device

import (
	"context"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// What a backend provides, in short (the simulator's checklist):
//   - Open by name (ErrNoDevice, saying why, when nothing is there) and
//     List; Info with Caps the API checks configurations against (MaxQPWR,
//     MaxSGE, MaxCQE > 0; DC, DCI streams, CQE128 as offered); Port with a
//     LID or a GID.
//   - CQs: memory (CQ ring initialised with cq.InitBuffer, its doorbell
//     record) the backend writes CQEs into, a CQN unique in the context, a
//     UAR to learn of arming (CQMemory.UAR), optionally Progress and
//     Overrunner (what the device knows of an overrun).
//   - QPs: send ring, doorbell record and register (qmem.Memory) the
//     backend reads WQEs from, a QPN unique on its fabric, sq.QP with the
//     capabilities granted, for RC a receive ring with its stride; Modify
//     for RESET/INIT/RTR/RTS/ERR with what QPAttr says each uses;
//     QPQuerier to report the device's state (ERR after an error
//     completion) and attributes.
//   - SRQs: a ring, its stride and doorbell record, the free list's head
//     and tail, and an SRQN unique in the context; the backend takes
//     receive WQEs from the ring in the order of the free list linked in
//     their next segments (the API lays it out, rq.SRQConfig.Init), for
//     the RC QPs and DCTs created with it.
//   - MRs by the caller's bytes (their address is the MR's address: the
//     API computes MR.Addr the same way) with distinct lkeys, mkeys (a
//     signature mkey with its PSV indexes), DEKs and umems with ids.
//   - A completion channel whose Wait reports the CQN of an armed CQ that
//     got a CQE, and Close on every object (the API calls each once, and
//     never on an object whose users are still open).
//   - Blocking calls (BackendChannel.Wait, BackendContext.AsyncEvent)
//     that return promptly (well under 10 ms) once their ctx is done,
//     with ctx's error, and start no goroutine that outlives them. The
//     API ends them that way on Close: it cancels the ctx of every call
//     in progress on the object being closed (or on a CQ of the channel,
//     or on the context), waits for the calls to return, and only then
//     calls the backend's Close; so a backend never sees Close of a
//     channel or a context while a Wait or AsyncEvent on it runs, and
//     needs no guard of its own against that.
//
// Backend is what a device implementation registers (Register): the
// hardware over libibverbs and libmlx5 (runtime/device/verbs), or the
// simulated device (runtime/sim). The API above it checks every argument,
// tracks what is open and builds the send, receive and completion queue
// runtime objects from the memory a backend returns; a backend only
// creates and destroys its objects, and is never called with a nil
// argument the API could have refused, nor after Close.
type Backend interface {
	// Open opens the device called name (the full name given to
	// device.Open, prefix included; "" for the backend's first device).
	// With no device at all it returns an error matching ErrNoDevice that
	// says why.
	Open(name string) (BackendContext, error)
	// List describes the backend's devices (for mlx5gen devices): an
	// error matching ErrNoDevice when there are none.
	List() ([]Info, error)
}

// BackendContext is an open device.
type BackendContext interface {
	Info() Info
	Port() (Port, error) // port 1: the only one this API uses
	AllocPD() (BackendPD, error)
	// CreateCQ creates a CQ of at least attr.CQEs entries, bound to ch
	// when ch is not nil.
	CreateCQ(attr CQConfig, ch BackendChannel) (BackendCQ, error)
	CreateCompChannel() (BackendChannel, error)
	// RegUmem registers buf (memory the collector does not move) as a
	// devx umem.
	RegUmem(buf []byte, access mlx.AccessFlags) (BackendUmem, error)
	// AsyncEvent waits for the next asynchronous event (and acknowledges
	// it) until ctx is done; then it returns promptly with ctx's error
	// (the API cancels ctx to end it before Close).
	AsyncEvent(ctx context.Context) (AsyncEvent, error)
	Close() error
}

// BackendPD is a protection domain.
type BackendPD interface {
	// Opaque is what memcpy's metadata needs of the PD (sq.PD); zero
	// when the device has no memcpy engine.
	Opaque() sq.PD
	// RegMR registers buf, memory the collector does not move (a
	// runtime/dma buffer, or C memory), at its own address.
	RegMR(buf []byte, access mlx.AccessFlags) (BackendMR, error)
	// CreateQP creates a QP whose completions go to send and recv (the
	// same CQ, possibly), receiving through srq when it is not nil (then
	// the QP has no receive queue of its own; a DCT always has one). The
	// QP starts in RESET.
	CreateQP(cfg QPConfig, send, recv BackendCQ, srq BackendSRQ) (BackendQP, error)
	// CreateSRQ creates a shared receive queue of at least cfg.MaxWR
	// work requests of cfg.MaxSGE SGEs.
	CreateSRQ(cfg SRQConfig) (BackendSRQ, error)
	CreateMkey(flags mlx.MkeyInitAttrFlags, maxEntries int) (BackendMkey, error)
	CreateDEK(attr DEKConfig) (BackendDEK, error)
	Close() error
}

// BackendMR is a registered memory region. It keeps the bytes it was
// registered with reachable until its Close deregisters them (the device
// writes them by address, which the collector does not see); the API
// pins a runtime/dma region's memory itself.
type BackendMR interface {
	Keys() (lkey, rkey uint32)
	Close() error
}

// BackendMkey is an indirect mkey (mlx5dv_create_mkey).
type BackendMkey interface {
	LKey() uint32
	// PSVs returns the memory and wire PSV indexes of a signature mkey
	// (created with BLOCK_SIGNATURE), which its UMR's SET_PSV work
	// requests name; the API asks only for those. An error says why the
	// backend cannot tell (the mkey is then destroyed).
	PSVs() (mem, wire uint32, err error)
	Close() error
}

// BackendDEK is a data encryption key (mlx5dv_dek_create).
type BackendDEK interface {
	ObjectID() uint32
	Close() error
}

// BackendUmem is a devx umem (mlx5dv_devx_umem_reg); like a BackendMR it
// keeps its bytes reachable until Close (mlx5dv_devx_umem_dereg).
type BackendUmem interface {
	ID() uint32
	Close() error
}

// CQMemory is what a backend's CQ hands the poller (mlx5dv_init_obj's
// mlx5dv_cq): the API builds the runtime/cq poller from it.
type CQMemory struct {
	// Mem holds CQ, CQESize and CQDBR (its send-queue fields are
	// unused). Its slices must stay valid until the CQ is closed.
	Mem        *qmem.Memory
	CQN        uint32
	CQEVersion int

	// UAR is the CQ's doorbell register page, written by Arm (CQ.Wait):
	// the arm word and the CQN at MLX5_CQ_DOORBELL; Device says it is a
	// device mapping (runtime/mmio). A simulator that delivers completion
	// events gives plain memory here and watches that doorbell: the arm
	// sequence number in the word changes after every event (cq.Event),
	// so a new arm is a new value. nil: Arm writes the doorbell record
	// only, where a first arm (sequence 0, consumer index 0) is not
	// told apart from no arm.
	UAR    []byte
	Device bool

	DumpFillLKey uint32
	Scatter      cq.Memory // memory inline scatter writes to (nil: none)
}

// BackendCQ is a completion queue.
type BackendCQ interface {
	Memory() CQMemory
	Close() error
}

// Progress is an optional interface of a BackendCQ: CQ.Poll calls
// Progress before reading the CQ, so a simulator can run the work the
// doorbells it has not seen yet ask for, deterministically, on the
// poller's goroutine. Hardware needs no such call and does not implement
// it.
//
// How a backend learns of a doorbell: sq.SQ.Complete writes the doorbell
// record (its send counter) and the BlueFlame/UAR memory, exactly as on
// hardware; the API adds no shortcut around the rings. A simulator
// watches that memory: it compares each QP's doorbell record with what it
// has executed, in Progress and/or in an engine goroutine.
type Progress interface {
	Progress()
}

// Arming is an optional interface of a BackendCQ whose device reads the
// CQ's doorbell register from a goroutine other than the one arming it (a
// simulator's completion channel): CQ.Wait arms the CQ inside Arming, so
// that the backend orders its reads of that memory after the write with
// its own lock. On hardware the register is the device's, and no such
// ordering is needed.
type Arming interface {
	Arming(arm func())
}

// BackendChannel is a completion channel.
type BackendChannel interface {
	// Wait waits for the next completion event of any CQ bound to the
	// channel (ibv_get_cq_event) until ctx is done, and returns its CQN;
	// once ctx is done it returns promptly with ctx's error (the API
	// cancels ctx to end it before closing the channel or its CQs).
	Wait(ctx context.Context) (cqn uint32, err error)
	// Ack acknowledges n events of the CQ (ibv_ack_cq_events).
	Ack(cq BackendCQ, n int)
	Close() error
}

// QPMemory is what a backend's QP hands the writers (mlx5dv_init_obj's
// mlx5dv_qp, and what the QP was created with): the API builds sq.SQ and
// rq.RQ from it.
type QPMemory struct {
	QPN  uint32
	UIdx uint32 // the user index CQEs carry with cqe_version 1

	// SQ holds SQ, DBR, BF, BFSize and Device (true for hardware's UAR
	// page, written with runtime/mmio). Its slices stay valid until the QP
	// is closed.
	SQ *qmem.Memory
	BF sq.BlueFlame
	// QP is what sq.Config.QP needs: type, send ops, the capabilities
	// the QP got (max inline, SGEs, MaxPost) and the device's.
	QP     sq.QP
	SigAll bool

	// RQ is the receive ring and its doorbell record (the receive
	// counter of the QP's doorbell record); a zero RQ: no receive queue
	// (DCI, or a DCT whose receives go to an SRQ).
	RQ        rq.Memory
	RQStride  int
	RQMaxPost int
	WQSig     bool
}

// BackendQP is a queue pair.
type BackendQP interface {
	Memory() QPMemory
	// Modify moves the QP to state, with the attributes of attr that
	// transition of the QP's type needs (ibv_modify_qp with the mask the
	// backend picks: see QPAttr).
	Modify(state mlx.QPState, attr QPAttr) error
	Close() error
}

// QPQuerier is an optional interface of a BackendQP: Query reads the QP's
// state and attributes from the device (ibv_query_qp). QP.Query needs it,
// and QP.State and QP.Modify use it to learn that the device moved the QP
// to error (after an error completion); without it a QP's state is the
// one its last transition left. The simulator answers from its engine,
// the hardware backend with ibv_query_qp.
type QPQuerier interface {
	Query() (QPInfo, error)
}

// Overrunner is an optional interface of a BackendCQ: Overrun reports
// whether the device found the CQ full when it had a CQE to write (a CQ
// overrun, which ends the CQ: the device writes no more CQEs to it). CQ.
// Poll asks it when a poll finds no completion, and then fails with
// ErrCQOverrun. The simulator's engine knows at once; on hardware the
// overrun is the IBV_EVENT_CQ_ERR asynchronous event, which the verbs
// backend records for the CQ when Context.AsyncEvent reads it.
type Overrunner interface {
	Overrun() bool
}
