// Package wrcheck is the work-request state machine of mlx5gen's send
// path. Before anything is written to a send queue it checks that a chain
// of ibv_wr_* and mlx5dv_wr_* calls follows the rules of the man pages
// (spec/api, listed in spec/RULES.md): which builders the QP offers, which
// setters may follow a builder and how often, the sizes the QP was created
// with, and what an mkey was created with. It runs on the function table and
// the rule errors generated into generated/mlx5dv, and it keeps the
// per-mkey signature and crypto state libmlx5 keeps, so that a builder knows
// what a UMR must carry.
//
// The send-queue writer (runtime/sq) owns the ring and its counters (the
// producer index, the work requests of the batch and those outstanding,
// the ring's room); the checker owns what the man pages' rules need: the
// open batch, the open work request, and the state of the mkeys. Each call
// answers with what the writer must do: an error, whether a setter made
// its work request whole, or, for an mkey configuration, a UMR value that
// says what the UMR carries. Nothing is read back afterwards. The writer
// checks that its WQEs fit (the sq_room rule: max_post and the ring's
// room) and reports a miss through TooMany and NoRoom, so that the error
// is latched and named like the checker's own.
//
// Every violation is a *mlx5dv.RuleError that wraps the errno libmlx5
// returns for it and says what was wrong: the work request's index in the
// batch, the call, the field, the value and the limit. The first one is
// latched: later calls of the batch return it at once, and Complete
// reports it. Nothing here allocates: the error is the chain's, and holds
// until the chain's next failing batch.
package wrcheck

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"sync/atomic"
)

// QP is what the queue pair was created with, and what the device offers
// the send path (runtime/sq's QP). The checks read every field but
// MaxPost, the writer's work-request budget.
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

// SigState is an mkey's signature state, as libmlx5 tracks it.
type SigState uint8

const (
	SigInit    SigState = iota // never configured, or configured without a signature
	SigReset                   // reset by MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR
	SigSet                     // configured by an earlier work request
	SigUpdated                 // configured by the work request being built
)

// CryptoState is an mkey's crypto state.
type CryptoState uint8

const (
	CryptoInit CryptoState = iota
	CryptoSet
	CryptoUpdated
)

// Domain is a copy of a signature domain, taken when the setter is called
// (the caller may reuse its structs afterwards).
type Domain struct {
	Present bool
	Domain  mlx.SigBlockDomain // Sig is cleared: see T10dif and Crc
	T10dif  mlx.SigT10DIF
	Crc     mlx.SigCRC
}

func (d *Domain) set(src *mlx.SigBlockDomain) {
	d.Present = src != nil
	if src == nil {
		return
	}
	// Field by field: a copy of the struct, which holds the union
	// pointer, is a typed memory move with write barriers.
	d.Domain.SigType, d.Domain.BlockSize, d.Domain.CompMask = src.SigType, src.BlockSize, src.CompMask
	if d.Domain.Sig != nil {
		d.Domain.Sig = nil
	}
	// Only the member of the type is read later; the other keeps
	// whatever it had.
	switch src.SigType {
	case mlx.MLX5DV_SIG_TYPE_T10DIF:
		d.T10dif = *src.SigDif()
	case mlx.MLX5DV_SIG_TYPE_CRC:
		d.Crc = *src.SigCRC()
	}
}

// Mkey is an indirect mkey as the checks and the builders see it.
type Mkey struct {
	LKey    uint32
	Flags   mlx.MkeyInitAttrFlags
	NumDesc int    // max_entries rounded up to a multiple of 4
	Length  uint64 // as the last layout set it

	// Signature context (Flags has BLOCK_SIGNATURE).
	MemPSV, WirePSV     uint32
	Sig                 SigState
	Mem, Wire           Domain
	SigFlags            mlx.SigBlockAttrFlags
	CheckMask, CopyMask uint8
	ErrCount            uint32
	ErrCountUpdated     bool
	// sigErrs counts the signature errors the poller recorded (SigError,
	// on the poller's goroutine); taken is how many of them the writer
	// has added to ErrCount. A pointer, so that the copies a batch keeps
	// to roll back share the poller's counter.
	sigErrs *uint32
	taken   uint32

	// Crypto context (Flags has CRYPTO).
	Crypto     CryptoState
	CryptoAttr mlx.CryptoAttr

	// Unknown is set when a batch that configured the mkey failed or was
	// aborted: the man pages call its state unknown until it is configured
	// again with its signature and crypto set or reset.
	Unknown bool

	// attrTag names the signature attributes Mem, Wire, SigFlags and the
	// masks hold: the tag of the snapshot (sigSeen) or template they were
	// copied from, 0 when they are not known to be either's. Those never
	// change under a tag, so a configuration with the attributes the mkey
	// already holds (a storage path's every I/O) does not copy them again.
	// A rollback restores it with the values it names.
	attrTag uint64
}

// setAttrs gives m signature attributes and the tag that names them.
func (m *Mkey) setAttrs(mem, wire *Domain, flags mlx.SigBlockAttrFlags, check, cp uint8, tag uint64) {
	m.Mem.copyFrom(mem)
	m.Wire.copyFrom(wire)
	m.SigFlags, m.CheckMask, m.CopyMask, m.attrTag = flags, check, cp, tag
}

// attrTags hands out the tags of signature attributes (Mkey.attrTag):
// unique across chains and templates, so that an mkey moved from one QP
// to another never takes another's values for its own.
var attrTags atomic.Uint64

// NewMkey describes a freshly created mkey (mlx5dv_create_mkey).
func NewMkey(lkey uint32, flags mlx.MkeyInitAttrFlags, maxEntries int) *Mkey {
	m := &Mkey{LKey: lkey, Flags: flags, NumDesc: (maxEntries + 3) &^ 3, sigErrs: new(uint32)}
	if m.HasSig() {
		// A fresh signature mkey has one pending error-count update.
		m.ErrCount, m.ErrCountUpdated = 1, true
	}
	return m
}

// HasSig reports whether the mkey was created with BLOCK_SIGNATURE.
func (m *Mkey) HasSig() bool {
	return m.Flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0
}

// HasCrypto reports whether the mkey was created with CRYPTO.
func (m *Mkey) HasCrypto() bool { return m.Flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO != 0 }

// UMR is the checker's answer to the call that finishes an mkey
// configuration: what its UMR carries, as libmlx5's umr_finalize decides
// it. The calls answer nil while the configuration waits for setters. The
// value is the chain's: it holds until the next configuration finishes
// (it is not copied, so that the mkey path costs no more than a pointer).
type UMR struct {
	Mkey       *Mkey // the configured mkey, its state as the UMR writes it
	Xlat       int   // bytes of translation (KLMs or repeat block), padded to 64
	WRs        int   // work requests: the UMR and its SET_PSVs
	SigBSF     bool  // a signature BSF follows the translation
	CryptoBSF  bool  // a crypto BSF follows
	DisableBSF bool  // BSF_ENABLE in the mask without a BSF: disable the mkey's BSF
	SigErr     bool  // SIG_ERR in the mask, with the parity of Mkey.ErrCount
	PSVs       bool  // SET_PSV work requests follow for the configured domains; the last reports the completion
	// SigGen, when not 0 and the UMR carries a signature BSF and no
	// crypto BSF, says that the mkey's signature attributes are the values
	// of this generation of the chain's (sigSeen): the BSF and the
	// transient signatures are those of the last UMR with the same SigGen
	// (but for the PSV indexes, which are the mkey's).
	SigGen uint64
}

// set starts the answer for mkey m, with no BSF, no SIG_ERR and no
// SET_PSV. Like wr.set, it assigns the fields one by one: a composite
// literal is built on the stack and copied with wide loads that cannot
// forward from its narrow stores (a fifth of ConfigureMkey's time).
func (u *UMR) set(m *Mkey, xlat, wrs int) *UMR {
	u.Mkey, u.Xlat, u.WRs = m, xlat, wrs
	u.SigBSF, u.CryptoBSF, u.DisableBSF, u.SigErr, u.PSVs = false, false, false, false, false
	u.SigGen = 0
	return u
}

// wr is the work request being built. It is small: every builder resets
// it, but for the mkey fields (mkey, numSetters, setters, xlat), which
// only an mkey builder's wr.set writes and only an mkey configuration's
// calls read: a data builder leaves them (two stores and a write
// barrier's test fewer per work request; TestDataWRLeavesMkeyFields).
type wr struct {
	// meta is the builder, the setter groups got and needed, and the
	// flags (open; counting: an mkey configuration counting setters;
	// finalized; resetSig) in one word (packMeta), so that a data
	// builder's fast path opens a work request in one store of a value
	// New precomputed (fastFn.meta) where it took a store per field.
	meta       uint64
	numSetters int32
	setters    int32
	xlat       int32  // translation bytes
	sigGen     uint64 // the sigSeen generation MkeySigBlock set (0: none)
	mkey       *Mkey
	// st is the fast paths' state in one word (fast.go): busy (0: a
	// builder may start) in the low half, accept (the setters the work
	// request takes on the fast path) in the high half, so that each fast
	// transition is one load and one store of a value New precomputed.
	st uint64
}

// busy is st's low half: 0 when a builder may start on the fast path.
func (w *wr) busy() uint32 { return uint32(w.st) }

// accept is st's high half: the setters (fastFn.bit) the open work
// request takes on the fast path.
func (w *wr) accept() uint64 { return w.st >> 32 }

// set starts an mkey configuration's work request, which counts its
// setters: meta as packMeta gives it and st as pending does (finalized
// when the call finished the configuration: its setters are then all
// counted). The callers take both from values precomputed per QP
// (fastFn.meta), so that set inlines. It assigns the fields one
// by one: a composite literal is built on the stack and copied with wide
// loads that cannot forward from its narrow stores, which costs more
// than the rest of a builder's checks.
func (w *wr) set(meta, st uint64, m *Mkey, numSetters int32) {
	w.meta = meta
	w.numSetters, w.xlat, w.sigGen, w.setters = numSetters, 0, 0, 0
	if meta&metaFinalized != 0 {
		w.setters = numSetters
	}
	w.mkey = m
	w.st = st
}

// setData starts the work request of an ordinary builder, f its fast
// table entry: set with what such a builder has (the mkey fields left as
// they are), and the setters it takes on the fast path.
func (w *wr) setData(f *fastFn) {
	meta, st := f.meta, f.open // read once: the stores to w could alias f for the compiler
	w.meta = meta
	w.st = st
}

// whole reports whether the work request may be closed: it got the
// setters it needs, and an mkey configuration got all it announced.
func (w *wr) whole() bool {
	return w.need()&^w.got() == 0 && (!w.isCounting() || w.isFinalized())
}

// The flags of wr.meta, above its builder (bits 0-15), the groups got
// (16-31) and needed (32-47).
const (
	metaOpen      = 1 << 48
	metaCounting  = 1 << 49
	metaFinalized = 1 << 50
	metaResetSig  = 1 << 51
)

// packMeta is wr.meta of a work request of builder fn that got and needs
// those setter groups, with those flags.
func packMeta(fn mlx.Func, got, need mlx5rules.SetterGroup, open, counting, finalized, resetSig bool) uint64 {
	m := uint64(fn) | uint64(got)<<16 | uint64(need)<<32
	if open {
		m |= metaOpen
	}
	if counting {
		m |= metaCounting
	}
	if finalized {
		m |= metaFinalized
	}
	if resetSig {
		m |= metaResetSig
	}
	return m
}

// The fields of wr.meta.
func (w *wr) fn() mlx.Func                   { return mlx.Func(w.meta) }
func (w *wr) got() mlx5rules.SetterGroup     { return mlx5rules.SetterGroup(w.meta >> 16) }
func (w *wr) need() mlx5rules.SetterGroup    { return mlx5rules.SetterGroup(w.meta >> 32) }
func (w *wr) isOpen() bool                   { return w.meta&metaOpen != 0 }
func (w *wr) isCounting() bool               { return w.meta&metaCounting != 0 }
func (w *wr) isFinalized() bool              { return w.meta&metaFinalized != 0 }
func (w *wr) isResetSig() bool               { return w.meta&metaResetSig != 0 }
func (w *wr) addGot(g mlx5rules.SetterGroup) { w.meta |= uint64(g) << 16 }

// Chain checks the calls of one QP. The zero value is not usable; call
// New.
type Chain struct {
	qp   *QP
	open bool
	err  *mlx.RuleError
	wrs  int // work requests the batch opened, as the user counts them: builder calls
	wr   wr

	// The errors the chain reports live here: the latched one, one for a
	// call outside a batch, and a validator's before it is latched.
	errv, outv, scratch mlx.RuleError

	umr UMR // the answer of the last finished mkey configuration
	// unknownTouched says that a mkey the batch touched was unknown when
	// it did (succeed clears the mark of those only: a batch that touched
	// none skips the loop).
	unknownTouched bool
	// sigUMR is finishSig's answer: its kind (a signature BSF and SET_PSVs,
	// no crypto BSF, no SIG_ERR, no BSF disable), set by Init, never
	// changes, so an answer stores only the rest.
	sigUMR UMR
	sig    sigSeen
	// accessSeen is the access flags mlx5dv_wr_set_mkey_access_flags'
	// validator last accepted (as sig, a value validated once need not
	// be again: the rule is a function of it alone); noAccess before.
	accessSeen uint64
	listLimit  int // the most entries of a list layout: (max_inline_data + 4) / 16

	// touched lists the mkeys the batch configured, with their state
	// before it, so that a failed or aborted batch can restore them and
	// mark them unknown; its storage is reused.
	touched []touchedMkey

	// Tables of what the QP allows, computed once so that the common
	// calls check a few words (the full checks run when one fails, to
	// name the rule).
	offered [mlx.NumFuncs]bool                  // builder offered on the QP's type and send ops
	follows [mlx.NumFuncs][mlx.NumFuncs]bool    // [builder][setter]: the setter may follow the builder on this QP
	needs   [mlx.NumFuncs]mlx5rules.SetterGroup // builder: the setter groups its work requests must get here
	wrFlags [mlx.NumFuncs]uint32                // builder: the wr_flags it needs
	group   [mlx.NumFuncs]mlx5rules.SetterGroup // setter: its group

	// tmplEntries[sig] is the most list entries a template configuration
	// (ConfigureMkey, with or without a signature) takes on this QP in
	// one call; 0 when the QP does not offer the calls it stands for.
	tmplEntries [2]int
	fast        [mlx.NumFuncs]fastFn // the same, for the fast paths (fast.go)
	maxSGE      int                  // qp.MaxSendSGE
	sgeLimit    uint32               // the longest SGE a message may have here (SGELimit)

	// runSt[i] is the state word OpenRun stores for runBuilders[i]
	// (runMarks). Last, not in the fast table: an entry more there (a
	// stride of 88 bytes) measured the four mkey calls 12% slower at a
	// doorbell each, their instructions unchanged.
	runSt [len(runBuilders)]uint64
	// pairOpen is the state word OpenPair stores: the RDMA write's open
	// word, with pairMark where ibv_wr_set_sge makes it whole on this QP;
	// pairTest the word InPair compares with (pairOpen there, else ^0,
	// which no state has); pairMeta the meta ClosePair stores (the
	// write's, with the SGE's group got).
	pairOpen, pairTest, pairMeta uint64
}

// New returns a state machine for a QP. The QP must not change
// afterwards.
func New(qp *QP) *Chain {
	c := &Chain{}
	c.Init(qp)
	return c
}

// Init makes c, which must be zero, a state machine for qp, as New does:
// a writer keeps its chain in its own struct, one pointer less on its hot
// path.
func (c *Chain) Init(qp *QP) {
	c.qp, c.maxSGE = qp, qp.MaxSendSGE
	c.sgeLimit = MaxSGELength
	if qp.MaxMsgSize != 0 && qp.MaxMsgSize < MaxSGELength {
		c.sgeLimit = uint32(qp.MaxMsgSize)
	}
	for b := range mlx.NumFuncs {
		info := &mlx5rules.Funcs[b]
		c.offered[b] = info.QPTypes&qp.Type != 0 &&
			(info.SendOp == 0 || uint64(qp.SendOps)&info.SendOp != 0) &&
			(info.MlxSendOp == 0 || uint64(qp.MlxSendOps)&info.MlxSendOp != 0)
		c.needs[b] = info.Requires
		c.wrFlags[b] = info.WRFlags
		c.group[b] = info.Group
		if c.needsAddr(mlx.Func(b)) {
			c.needs[b] |= mlx5rules.GroupDCAddr
		}
		for s := range mlx.NumFuncs {
			c.follows[b][s] = mlx5rules.Funcs[s].QPTypes&qp.Type != 0 && c.takes(mlx.Func(b), mlx.Func(s))
		}
	}
	c.tmplEntries = c.templateEntries()
	c.sigUMR.SigBSF, c.sigUMR.PSVs = true, true
	c.accessSeen, c.listLimit = noAccess, (qp.MaxInlineData+4)/16
	c.initFast()
	c.notReady()
}

// Start opens a batch (ibv_wr_start).
func (c *Chain) Start() error {
	if c.open {
		return c.outside(mlx.FnWRStart)
	}
	// Every way out of a batch (TryComplete, Complete, Abort) leaves the
	// chain clean: no error latched, no mkey touched, no work request
	// open. So a batch starts with three stores, not a reset of the whole
	// state (issue 26: a doorbell each pays Start per work request).
	c.open, c.wrs = true, 0
	c.wr.st = 0
	return nil
}

// IsOpen reports whether a batch is open (Start without Complete or
// Abort yet).
func (c *Chain) IsOpen() bool { return c.open }

// Complete closes the batch (ibv_wr_complete): the open work request must
// be whole. It reports whether a batch was open, and returns the latched
// error, if any; then the batch must post nothing, and the mkeys it
// configured are in an unknown state.
func (c *Chain) Complete(fn mlx.Func) (wasOpen bool, err error) {
	if !c.open {
		return false, c.outside(fn)
	}
	if c.err == nil && c.wr.isOpen() {
		c.closeWR()
	}
	c.closeClean()
	if err := c.err; err != nil {
		c.forget()
		c.err = nil
		return true, err
	}
	c.succeed()
	return true, nil
}

// closeClean closes the batch with no work request open and the fast
// paths' word not ready, as Start expects every closed batch (the mkey
// fields of the work request are left: only an mkey builder reads them,
// after writing them).
func (c *Chain) closeClean() {
	c.open = false
	c.wr.meta = 0
	c.notReady()
}

// Abort discards the batch (ibv_wr_abort) and reports whether one was
// open.
func (c *Chain) Abort() (wasOpen bool) {
	wasOpen = c.open
	if c.open {
		c.forget()
	}
	c.open, c.err, c.wr = false, nil, wr{st: busyNotReady}
	return wasOpen
}

// SigError records a signature-error completion of the mkey, as the CQ
// poller sees it: the error count moves on, and the mkey's next
// configuration tells the device (SIG_ERR in the UMR).
//
// It is the poller's call and may run beside the writer: it only counts;
// the writer adds the count to ErrCount when it next configures the mkey
// (takeSigErrs).
func (m *Mkey) SigError() {
	if m.sigErrs == nil {
		m.sigErrs = new(uint32) // an Mkey made without NewMkey, before use
	}
	atomic.AddUint32(m.sigErrs, 1)
}

// PendingSigErrs returns the signature errors the poller recorded that
// the writer has not yet added to ErrCount (it does when it next
// configures the mkey).
func (m *Mkey) PendingSigErrs() uint32 {
	if m.sigErrs == nil {
		return 0
	}
	return atomic.LoadUint32(m.sigErrs) - m.taken
}

// SameState reports whether m and o hold the same state: every field
// but the poller's counter, which is each mkey's own.
func (m *Mkey) SameState(o *Mkey) bool {
	a, b := *m, *o
	a.sigErrs, b.sigErrs = nil, nil
	a.attrTag, b.attrTag = 0, 0 // which copy the values came from, not state
	return a == b && m.PendingSigErrs() == o.PendingSigErrs()
}

// takeSigErrs adds the signature errors the poller recorded since the
// last call to ErrCount (the writer's side of SigError).
func (m *Mkey) takeSigErrs() {
	if m.sigErrs == nil {
		return
	}
	if n := atomic.LoadUint32(m.sigErrs); n != m.taken {
		m.ErrCount += n - m.taken
		m.taken = n
		m.ErrCountUpdated = true
	}
}
