package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
)

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
	if b.Return == 0 && ret != nil {
		// libmlx5 accepted what mlx5gen rejects: a documented
		// divergence posts nothing, and the replay ends here.
		d, err := r.diverges(bi, where, ret)
		if err != nil {
			return err
		}
		if err := r.nothingPosted(where, b, before, true); err != nil {
			return err
		}
		r.div = d
		return nil
	}
	if r.pending != nil {
		return r.pending
	}
	if got := errno(ret); got != b.Return {
		return fmt.Errorf("%s: %s returned %v, want %s (%d)", where, b.EndedBy, ret, b.ReturnName, b.Return)
	}
	if ret != nil {
		var re *mlx.RuleError
		if !errors.As(ret, &re) {
			return fmt.Errorf("%s: %v is not a rule error", where, ret)
		}
		return r.nothingPosted(where, b, before, false)
	}
	if b.EndedBy != "ibv_wr_complete" {
		return r.nothingPosted(where, b, before, false)
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
// and the fence cache rolled back, no doorbell. libmlx5's fence cache and
// BlueFlame offset after it are compared unless mlx5gen diverged.
func (r *run) nothingPosted(where string, b *vectors.Batch, before snapshot, diverged bool) error {
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
	if !diverged && (q.FmCache() != b.FmCacheAfter || q.BFOffset() != b.BFOffsetAfter) {
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
	if len(got) > 3 && sl.Opcode != got[3] {
		return fmt.Errorf("%s: bookkeeping records opcode %#x for a WQE of opcode %#x", where, sl.Opcode, got[3])
	}
	if sl.WRID != bk.WRID || uint32(sl.WRData) != bk.WRData || sl.WQEHead != bk.WQEHead {
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
