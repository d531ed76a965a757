// Package replay runs reference vectors (testdata/vectors, recorded from
// rdma-core's libmlx5) through mlx5gen's send-queue writer, runtime/sq, on
// plain memory, and compares what it writes with what libmlx5 wrote: every
// WQE byte the vector does not mark unwritten, the producer index, the
// bookkeeping, the doorbell record, the BlueFlame writes, the fence cache
// and the mkey state. mlx5gen replay prints its verdicts.
//
// Where the project is deliberately stricter than libmlx5, Divergences says
// what it does instead, and a case passes only if it does exactly that.
package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/queue"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
	"github.com/mlx5gen/mlx5gen/runtime/vectors"
	"github.com/mlx5gen/mlx5gen/runtime/wrcheck"
)

// Outcome is the verdict on one case.
type Outcome struct {
	ID         string
	Err        error       // nil: the case passed
	Divergence *Divergence // the documented divergence the case was held to, if any
}

// File replays every case of a vector file.
func File(f *vectors.File) []Outcome {
	out := make([]Outcome, 0, len(f.Cases))
	for i := range f.Cases {
		c := &f.Cases[i]
		o := Outcome{ID: c.ID, Err: Case(c)}
		if d, ok := Divergences[c.ID]; ok {
			o.Divergence = &d
			if o.Err == nil && d.Streams > 0 {
				if err := replay(c, d.Streams); err != nil {
					o.Err = fmt.Errorf("on a DCI with 2^%d streams: %w", d.Streams, err)
				}
			}
		}
		out = append(out, o)
	}
	return out
}

// Case replays one case and returns its first difference from the
// vector (or from the documented divergence), or nil.
func Case(c *vectors.Case) error { return replay(c, 0) }

// replay replays a case; streams > 0 creates its DCI with 2^streams
// streams and holds it to libmlx5's result, not to the divergence.
func replay(c *vectors.Case, streams int) (err error) {
	defer func() {
		// A malformed vector must not take the whole run down.
		if r := recover(); r != nil {
			err = fmt.Errorf("replay panicked: %v", r)
		}
	}()
	r, err := newRun(c, streams)
	if err != nil {
		return err
	}
	defer r.mem.Close()
	return r.run()
}

// run is the replay of one case.
type run struct {
	c     *vectors.Case
	res   *vectors.Result
	div   *Divergence
	mem   *queue.Memory
	q     *sq.SQ
	mkeys map[string]*sq.Mkey
	ahs   map[string]*sq.AH
	deks  map[string]*sq.DEK
	dci   bool
	// The replay stops after a batch the project rejects on purpose.
	stopped bool
	// What the last ibv_wr_complete returned.
	completeErr error
}

func newRun(c *vectors.Case, streams int) (*run, error) {
	s := &c.Setup
	r := &run{c: c, res: &c.Result, mkeys: map[string]*sq.Mkey{}, ahs: map[string]*sq.AH{}, deks: map[string]*sq.DEK{}, dci: s.DCI()}
	if d, ok := Divergences[c.ID]; ok && streams == 0 {
		r.div = &d
		if d.Newest {
			if c.AtNewest == nil {
				return nil, errors.New("the divergence asks for result_at_newest_commit, which the case lacks")
			}
			r.res = c.AtNewest
		}
	}
	if s.BF.InitialOffset != 0 {
		return nil, fmt.Errorf("setup: BlueFlame offset %d: replay starts at 0", s.BF.InitialOffset)
	}
	engines := s.Device.CryptoEngines.Value
	qp := wrcheck.QP{
		Type: mlx.QPRC, SendOps: mlx.IbvQpCreateSendOpsFlags(s.Caps.SendOps.Value), MlxSendOps: mlx.Mlx5dvQpCreateSendOpsFlags(s.Caps.Mlx5SendOps.Value),
		MaxInlineData: s.SQ.MaxInlineData, MaxSendSGE: s.SQ.MaxGS, MaxPost: s.SQ.MaxPost,
		MaxMemcpy: s.Device.DMAMMOMaxSize, MkeyTagSupported: s.Device.MkeyUpdateTagSupported,
		CryptoSingleBlock: engines&uint64(mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_SINGLE_BLOCK) != 0,
		CryptoMultiBlock:  engines&uint64(mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK) != 0,
	}
	if r.dci {
		qp.Type = mlx.QPDCI
		if streams > 0 {
			qp.Streams, qp.LogNumConcurent = true, streams
		}
	}
	mem, err := queue.Plain(s.SQ.WQEBBCount, 0, s.BF.BufSize)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	r.mem = mem
	// A recognisable fill, so that bytes the writer leaves alone stand out.
	for i := range mem.SQ {
		mem.SQ[i] = 0xee
	}
	r.q, err = sq.New(sq.Config{
		Mem: mem, QPN: s.QPNum, QP: qp, SigAll: s.SQ.SQSignalBits != 0,
		BF:      sq.BlueFlame{UUARN: s.BF.UUARN, Size: s.BF.BufSize, PreferBF: s.Device.PreferBF != 0, ShutUpBF: s.Device.ShutUpBF != 0},
		PD:      sq.PD{OpaqueLkey: s.PD.OpaqueMRLkey, OpaqueAddr: s.PD.OpaqueBufAddr},
		CurPost: s.SQ.InitialCurPost, Head: s.SQ.InitialHead, Tail: s.SQ.InitialTail, FmCache: s.SQ.InitialFmCache,
	})
	if err != nil {
		mem.Close()
		return nil, fmt.Errorf("setup: %w", err)
	}
	for _, m := range s.Mkeys {
		flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
		if m.Signature != nil {
			flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
		}
		if m.Crypto != nil {
			flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
		}
		mk := wrcheck.NewMkey(m.Lkey, flags, m.MaxEntries)
		if mk.NumDesc != m.NumDesc {
			mem.Close()
			return nil, fmt.Errorf("setup: mkey %s: num_desc %d, libmlx5 would make %d", m.Name, m.NumDesc, mk.NumDesc)
		}
		if g := m.Signature; g != nil {
			mk.MemPSV, mk.WirePSV, mk.ErrCount, mk.ErrCountUpdated = g.MemPSV, g.WirePSV, g.ErrCount, g.ErrCountUpdated
			if mk.Sig, err = sigState(g.BlockState); err != nil {
				mem.Close()
				return nil, fmt.Errorf("setup: mkey %s: %w", m.Name, err)
			}
		}
		if m.Crypto != nil {
			if mk.Crypto, err = cryptoState(m.Crypto.State); err != nil {
				mem.Close()
				return nil, fmt.Errorf("setup: mkey %s: %w", m.Name, err)
			}
		}
		r.mkeys[m.Name] = mk
	}
	for _, a := range s.AHs {
		av, err := vectors.Bytes(a.AVHex)
		if err != nil || len(av) != mlx.Mlx5WqeAvSize {
			mem.Close()
			return nil, fmt.Errorf("setup: ah %s: not a %d-byte address vector", a.Name, mlx.Mlx5WqeAvSize)
		}
		ah := &sq.AH{}
		copy(ah.AV[:], av)
		r.ahs[a.Name] = ah
	}
	for _, d := range s.DEKs {
		r.deks[d.Name] = &sq.DEK{ObjectID: d.DevxObjectID}
	}
	return r, nil
}

func sigState(s string) (wrcheck.SigState, error) {
	switch s {
	case "INIT":
		return wrcheck.SigInit, nil
	case "RESET":
		return wrcheck.SigReset, nil
	case "SET":
		return wrcheck.SigSet, nil
	case "UPDATED":
		return wrcheck.SigUpdated, nil
	}
	return 0, fmt.Errorf("unknown signature state %q", s)
}

func cryptoState(s string) (wrcheck.CryptoState, error) {
	switch s {
	case "INIT":
		return wrcheck.CryptoInit, nil
	case "SET":
		return wrcheck.CryptoSet, nil
	case "UPDATED":
		return wrcheck.CryptoUpdated, nil
	}
	return 0, fmt.Errorf("unknown crypto state %q", s)
}

// snapshot is the memory before a batch.
type snapshot struct {
	ring, dbr, bf []byte
	fmCache       uint8
	bfOff         int
}

func (r *run) snap() snapshot {
	return snapshot{bytes.Clone(r.mem.SQ), bytes.Clone(r.mem.DBR), bytes.Clone(r.mem.BF), r.q.FmCache(), r.q.BFOffset()}
}

func (r *run) run() error {
	calls := r.c.Calls
	batches := r.res.Batches
	bi := 0
	var before snapshot
	for i := range calls {
		call := &calls[i]
		if bi < len(batches) && i == batches[bi].Calls[0] {
			before = r.snap()
		}
		if err := r.call(call); err != nil {
			return fmt.Errorf("call %d %s: %w", i, call.Fn, err)
		}
		if bi < len(batches) && i == batches[bi].Calls[1] {
			if err := r.batch(bi, &batches[bi], before); err != nil {
				return err
			}
			if r.stopped {
				return nil
			}
			bi++
			continue
		}
		// Calls of a batch libmlx5 posts must leave the producer index
		// where libmlx5's did (unless mlx5gen rejects the batch on purpose).
		if bi < len(batches) && batches[bi].Return == 0 && !r.diverges(bi) && call.Trace.CurPostAfter != nil && *call.Trace.CurPostAfter != r.q.CurPost() {
			return fmt.Errorf("call %d %s: producer index %d, want %d", i, call.Fn, r.q.CurPost(), *call.Trace.CurPostAfter)
		}
	}
	if bi != len(batches) {
		return fmt.Errorf("the calls end %d batches early", len(batches)-bi)
	}
	return r.final()
}

// diverges reports whether mlx5gen rejects batch bi on purpose.
func (r *run) diverges(bi int) bool {
	return r.div != nil && r.div.Rule != "" && r.div.Batch == bi
}

// errno is the errno a batch's error carries (0 for none).
func errno(err error) int {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return -1
}

// batch compares the result of one batch.
func (r *run) batch(bi int, b *vectors.Batch, before snapshot) error {
	q := r.q
	where := fmt.Sprintf("batch %d", bi)
	var ret error
	if b.EndedBy == "ibv_wr_complete" {
		ret = r.completeErr
	}
	if d := r.div; r.diverges(bi) {
		// The project rejects what libmlx5 accepted: the batch must fail
		// with the documented rule and post nothing.
		var re *mlx.RuleError
		if !errors.As(ret, &re) || re.Rule != d.Rule || re.Errno != d.Errno {
			return fmt.Errorf("%s: libmlx5 accepts it, mlx5gen must reject it with rule %s (%s); got %v", where, d.Rule, d.Errno, ret)
		}
		if err := r.nothingPosted(bi, where, b, before); err != nil {
			return err
		}
		r.stopped = true
		return nil
	}
	if got := errno(ret); got != b.Return {
		return fmt.Errorf("%s: %s returned %v, want %s (%d)", where, b.EndedBy, ret, b.ReturnName, b.Return)
	}
	if ret != nil {
		var re *mlx.RuleError
		if !errors.As(ret, &re) {
			return fmt.Errorf("%s: %v is not a rule error", where, ret)
		}
		return r.nothingPosted(bi, where, b, before)
	}
	if b.EndedBy != "ibv_wr_complete" {
		return r.nothingPosted(bi, where, b, before)
	}
	if q.CurPost() != b.CurPostAfter {
		return fmt.Errorf("%s: producer index %d, want %d", where, q.CurPost(), b.CurPostAfter)
	}
	for wi := range b.WQEs {
		if err := r.wqe(fmt.Sprintf("%s WQE %d", where, wi), &b.WQEs[wi], before); err != nil {
			return err
		}
	}
	if err := r.doorbell(where, b, before); err != nil {
		return err
	}
	if q.FmCache() != b.FmCacheAfter {
		return fmt.Errorf("%s: cached fence %#x, want %#x", where, q.FmCache(), b.FmCacheAfter)
	}
	if q.BFOffset() != b.BFOffsetAfter {
		return fmt.Errorf("%s: BlueFlame offset %d, want %d", where, q.BFOffset(), b.BFOffsetAfter)
	}
	return nil
}

// nothingPosted checks a batch that posted nothing: the producer index
// and the fence cache rolled back, no doorbell.
func (r *run) nothingPosted(bi int, where string, b *vectors.Batch, before snapshot) error {
	q := r.q
	if q.CurPost() != b.CurPostBefore {
		return fmt.Errorf("%s: producer index %d after a batch that posted nothing, want %d", where, q.CurPost(), b.CurPostBefore)
	}
	if q.Last.Rung || !bytes.Equal(r.mem.DBR, before.dbr) || !bytes.Equal(r.mem.BF, before.bf) {
		return fmt.Errorf("%s: a batch that posted nothing rang the doorbell", where)
	}
	if q.FmCache() != before.fmCache || q.BFOffset() != before.bfOff {
		return fmt.Errorf("%s: cached fence %#x and BlueFlame offset %d after a batch that posted nothing, want %#x and %d",
			where, q.FmCache(), q.BFOffset(), before.fmCache, before.bfOff)
	}
	if !r.diverges(bi) && (q.FmCache() != b.FmCacheAfter || q.BFOffset() != b.BFOffsetAfter) {
		return fmt.Errorf("%s: cached fence %#x and BlueFlame offset %d, want %#x and %d", where, q.FmCache(), q.BFOffset(), b.FmCacheAfter, b.BFOffsetAfter)
	}
	return nil
}

// wqe compares one posted WQE and its bookkeeping.
func (r *run) wqe(where string, w *vectors.WQE, before snapshot) error {
	want, err := vectors.Bytes(w.Hex)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if len(want) != 64*len(w.Slots) {
		return fmt.Errorf("%s: %d bytes for %d slots", where, len(want), len(w.Slots))
	}
	got := make([]byte, 0, len(want))
	old := make([]byte, 0, len(want))
	for _, s := range w.Slots {
		got = append(got, r.mem.SQ[s*64:s*64+64]...)
		old = append(old, before.ring[s*64:s*64+64]...)
	}
	where = fmt.Sprintf("%s (producer index %d)", where, w.ProducerIndex)
	unwritten := func(j int) bool {
		for _, u := range w.Unwritten {
			if j >= u[0] && j < u[1] {
				return true
			}
		}
		return false
	}
	for j := range want {
		if unwritten(j) {
			if got[j] != old[j] {
				return fmt.Errorf("%s: %s: wrote %#02x where libmlx5 writes nothing", where, r.locate(want, j), got[j])
			}
			continue
		}
		if got[j] != want[j] {
			return fmt.Errorf("%s: %s: got %s, want %s", where, r.locate(want, j), r.fieldHex(got, want, j, true), r.fieldHex(got, want, j, false))
		}
	}
	slot := w.ProducerIndex & uint32(r.mem.WQEBBs()-1)
	bk, sl := &w.Bookkeeping, &r.q.Slots[slot]
	if sl.WRID != bk.WRID || sl.WRData != bk.WRData || sl.WQEHead != bk.WQEHead {
		return fmt.Errorf("%s: bookkeeping wr_id %#x wr_data %d wqe_head %d, want %#x %d %d", where,
			sl.WRID, sl.WRData, sl.WQEHead, bk.WRID, bk.WRData, bk.WQEHead)
	}
	return nil
}

// locate names the segment and field of byte j of a WQE.
func (r *run) locate(wqe []byte, j int) string {
	segs, _ := mlx.Split(wqe, mlx.SplitOptions{DCI: r.dci})
	for _, s := range segs {
		if j < s.Offset || j >= s.Offset+len(s.Raw) {
			continue
		}
		if f, ok := mlx.FieldAt(s.Name, j-s.Offset); ok {
			return fmt.Sprintf("byte %d, %s.%s", j, s.Name, f.Name)
		}
		return fmt.Sprintf("byte %d, %s +%d", j, s.Name, j-s.Offset)
	}
	return fmt.Sprintf("byte %d (past the WQE's segments)", j)
}

// fieldHex prints the field around byte j (or the byte) of got or want.
func (r *run) fieldHex(got, want []byte, j int, mine bool) string {
	b := want
	if mine {
		b = got
	}
	lo, hi := j, j+1
	segs, _ := mlx.Split(want, mlx.SplitOptions{DCI: r.dci})
	for _, s := range segs {
		if j >= s.Offset && j < s.Offset+len(s.Raw) {
			if f, ok := mlx.FieldAt(s.Name, j-s.Offset); ok && f.Size <= 16 {
				lo, hi = s.Offset+f.Offset, s.Offset+f.Offset+f.Size
			}
		}
	}
	return fmt.Sprintf("%x", b[lo:hi])
}

// doorbell compares the doorbell record and the BlueFlame register.
func (r *run) doorbell(where string, b *vectors.Batch, before snapshot) error {
	q := r.q
	if !b.DBR.Written {
		if q.Last.Rung || !bytes.Equal(r.mem.DBR, before.dbr) {
			return fmt.Errorf("%s: doorbell record written, libmlx5 leaves it", where)
		}
	} else {
		got := binary.BigEndian.Uint32(r.mem.DBR[4:8])
		if !q.Last.Rung || b.DBR.SendValue == nil || got != *b.DBR.SendValue {
			return fmt.Errorf("%s: doorbell record %d (written %v), want %v", where, got, q.Last.Rung, deref(b.DBR.SendValue))
		}
	}
	switch {
	case len(b.BFWrites) == 0:
		if !bytes.Equal(r.mem.BF, before.bf) {
			return fmt.Errorf("%s: wrote the doorbell register, libmlx5 does not", where)
		}
		return nil
	case len(b.BFWrites) > 1:
		return fmt.Errorf("%s: the vector has %d doorbell writes; a batch makes one", where, len(b.BFWrites))
	}
	w := &b.BFWrites[0]
	kind := "an 8-byte doorbell"
	if q.Last.BlueFlame {
		kind = "a BlueFlame copy"
	}
	if q.Last.Offset != w.Offset || q.Last.Length != w.Length {
		return fmt.Errorf("%s: %s of %d bytes at register offset %d, want %d bytes at %d", where, kind, q.Last.Length, q.Last.Offset, w.Length, w.Offset)
	}
	want, err := vectors.Bytes(w.Hex)
	if err != nil || len(want) != w.Length {
		return fmt.Errorf("%s: bad BlueFlame write in the vector", where)
	}
	got := r.mem.BF[w.Offset : w.Offset+w.Length]
	for j := range want {
		skip := false
		for _, u := range w.Unwritten {
			skip = skip || j >= u[0] && j < u[1]
		}
		if !skip && got[j] != want[j] {
			return fmt.Errorf("%s: %s, byte %d: got %#02x, want %#02x", where, kind, j, got[j], want[j])
		}
	}
	return nil
}

func deref(p *uint32) any {
	if p == nil {
		return "none"
	}
	return *p
}

// final compares the state after the last call.
func (r *run) final() error {
	f := &r.res.Final
	if r.q.CurPost() != f.CurPost {
		return fmt.Errorf("final producer index %d, want %d", r.q.CurPost(), f.CurPost)
	}
	failed := false
	for _, b := range r.res.Batches {
		failed = failed || b.Return != 0 || b.EndedBy != "ibv_wr_complete"
	}
	for _, fm := range f.Mkeys {
		mk := r.mkeys[fm.Name]
		if mk == nil {
			return fmt.Errorf("final: no mkey %s", fm.Name)
		}
		if mk.Unknown {
			// libmlx5 keeps what a rejected or aborted batch did to the
			// mkey; mlx5gen restores it and marks it unknown (RULES.md,
			// mkey_state).
			if !failed {
				return fmt.Errorf("final: mkey %s is unknown, but no batch failed", fm.Name)
			}
			continue
		}
		if mk.Length != fm.Length {
			return fmt.Errorf("final: mkey %s length %d, want %d", fm.Name, mk.Length, fm.Length)
		}
		if fm.SigBlockState != nil {
			if s, err := sigState(*fm.SigBlockState); err != nil || s != mk.Sig {
				return fmt.Errorf("final: mkey %s signature state %v, want %s", fm.Name, mk.Sig, *fm.SigBlockState)
			}
		}
		if fm.SigErrCountUpdated != nil && *fm.SigErrCountUpdated != mk.ErrCountUpdated {
			return fmt.Errorf("final: mkey %s error-count update pending %v, want %v", fm.Name, mk.ErrCountUpdated, *fm.SigErrCountUpdated)
		}
		if fm.CryptoState != nil {
			if s, err := cryptoState(*fm.CryptoState); err != nil || s != mk.Crypto {
				return fmt.Errorf("final: mkey %s crypto state %v, want %s", fm.Name, mk.Crypto, *fm.CryptoState)
			}
		}
	}
	return nil
}
