package wrcheck

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// The fast paths (TryBuilder, TryData) read one word of the open work
// request, wr.st, kept with the state it summarises so that each check is
// a compare and each transition one store; its halves are:
//
//   - busy (the low half) is 0 when a builder may start at once: the batch is open
//     without error and the open work request, if any, is whole. Otherwise
//     it holds the setter groups still missing, busyCounting for an mkey
//     configuration still counting setters, or busyNotReady. Every
//     change that can make a builder wrong sets it (wr.set, fail, the
//     batch calls); a stale non-zero value only sends the next builder
//     through the full checks, which name the rule or succeed.
//   - accept (the high half) holds the setters (fastFn.bit) the open
//     work request may still take without the full checks. wr.set clears
//     it; only an ordinary builder on a ready batch sets it.
const (
	busyNotReady = 1 << 31 // no batch open, or the batch failed
	busyCounting = 1 << 30 // an mkey configuration waiting for its setters

	// runMarks, in accept's half where no setter has its bit (initFast
	// gives them bits 0..26), are the runs' marks: bits 61..63 the
	// builders' (Chain.runSt), a state word that OpenRun set for builder
	// fn and nothing has changed since, the open work request fn's made
	// whole by its SGE in one call, and the writer's own state what that
	// call left (InRun); bit 60 a template configuration's (tmplMark,
	// TemplateNext); bit 59 an RDMA write's that its SGE will make whole,
	// opened by a writer's RDMAWrite and nothing since (pairMark, InPair).
	runMarks = 31 << 59
	tmplMark = 1 << 60
	pairMark = 1 << 59
)

// runBuilders are the builders with a run, each with its mark: those
// with a one-call form (a writer's builder and ibv_wr_set_sge in one).
var runBuilders = [...]mlx.Func{mlx.FnWRRDMAWrite, mlx.FnWRRDMARead, mlx.FnWRSend}

// fastFn is what the fast paths need of one function on this QP,
// computed once by New.
type fastFn struct {
	// builder: the wr_flags it needs; bit 32, which no uint32 flags
	// have, when the QP does not offer it.
	flags uint64
	need  mlx5rules.SetterGroup // builder: the setter groups it requires here
	takes uint64                // builder: the setters (bits) that may follow it here
	bit   uint64                // setter: its bit; 0 for a setter without a fast path
	group mlx5rules.SetterGroup // setter: its group
	same  uint64                // setter: the bits of every setter of its group

	// The same in wr.st's halves: a fast transition is one operation.
	open  uint64 // builder: st once it opened a work request (takes, need)
	meta  uint64 // builder: wr.meta once it opened a work request
	bitHi uint64 // setter: bit in accept's half
	clear uint64 // setter: the bits it clears from st (same, group)
}

// initFast fills the fast paths' table from the full one.
func (c *Chain) initFast() {
	var bitOf [mlx.NumFuncs]uint64
	n := 0
	for s := range mlx.NumFuncs {
		info := &mlx5rules.Funcs[s]
		// Layout setters may repeat (the once rule exempts them); they
		// belong to mkey configurations, which never take the fast path.
		if info.Kind != mlx5rules.KindSetter || info.Group == 0 || info.Group == mlx5rules.GroupLayout || n == 27 {
			continue
		}
		bitOf[s] = 1 << n
		n++
	}
	for f := range mlx.NumFuncs {
		ff := &c.fast[f]
		ff.flags = uint64(c.wrFlags[f])
		if !c.offered[f] {
			ff.flags |= 1 << 32
		}
		ff.need = c.needs[f]
		ff.bit, ff.group = bitOf[f], c.group[f]
		for s := range mlx.NumFuncs {
			if c.follows[f][s] {
				ff.takes |= bitOf[s]
			}
			if bitOf[s] != 0 && c.group[s]&c.group[f] != 0 {
				ff.same |= bitOf[s]
			}
		}
		// ibv_wr_set_sge always has one entry: a QP without one never
		// takes it on the fast path, so TrySGE need not test max_send_sge.
		if c.maxSGE < 1 {
			ff.takes &^= bitOf[mlx.FnWRSetSGE]
		}
		ff.open = ff.takes<<32 | uint64(ff.need)
		ff.meta = packMeta(f, 0, ff.need, true, false, false, false)
		ff.bitHi = ff.bit << 32
		ff.clear = ff.same<<32 | uint64(ff.group)
	}
	s := &c.fast[mlx.FnWRSetSGE]
	for i, fn := range runBuilders {
		c.runSt[i] = (c.fast[fn].takes&^s.same)<<32 | 1<<(63-i)
	}
	wf := &c.fast[mlx.FnWRRDMAWrite]
	c.pairOpen, c.pairTest, c.pairMeta = wf.open, ^uint64(0), wf.meta|uint64(s.group)<<16
	if c.Whole(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE) {
		c.pairOpen |= pairMark
		c.pairTest = c.pairOpen
	}
}

// pending is busy for a work request that needs the groups need, has
// got, and counts setters until finalized.
func pending(need, got mlx5rules.SetterGroup, counting, finalized bool) uint32 {
	b := uint32(need &^ got)
	if counting && !finalized {
		b |= busyCounting
	}
	return b
}

// got records setter fn, checked in full, in the open work request and
// reports whether the work request is now whole: the writer finishes its
// WQE. The setters of fn's group are no longer accepted on the fast path.
func (c *Chain) got(fn mlx.Func) (whole bool) {
	w := &c.wr
	g := c.group[fn]
	w.addGot(g)
	// runMarks too: a setter without a fast-path bit (or group) would
	// leave the word as it was.
	w.st &^= c.fast[fn].same<<32 | uint64(g) | runMarks
	return w.need()&^w.got() == 0
}

// notReady stops the fast paths until the next batch.
func (c *Chain) notReady() { c.wr.st = busyNotReady }

// Ready reports whether builder fn, with wrFlags, passes its checks on
// the fast path (TryBuilder's test), without recording anything: a writer
// tests its own conditions too before it opens the work request with
// Open.
func (c *Chain) Ready(fn mlx.Func, wrFlags uint32) bool {
	f := &c.fast[fn]
	return c.wr.busy() == 0 && uint64(wrFlags)&f.flags == f.flags
}

// Free is Ready's first half: a builder may start (busy is 0), whatever
// its wr_flags. A writer that computed FlagsOK for its current wr_flags
// tests only this per call.
func (c *Chain) Free() bool { return c.wr.busy() == 0 }

// FlagsOK is Ready's second half: the QP offers builder fn with
// wrFlags. It depends only on the QP and the flags, so a writer computes
// it when its wr_flags change.
func (c *Chain) FlagsOK(fn mlx.Func, wrFlags uint32) bool {
	f := &c.fast[fn]
	return uint64(wrFlags)&f.flags == f.flags
}

// TrySGE is TryData for ibv_wr_set_sge, whose one entry initFast
// already held to max_send_sge: the setter's table entry a constant, one
// test fewer, for the per-call path's setter.
func (c *Chain) TrySGE() (ok, whole bool) {
	w := &c.wr
	f := &c.fast[mlx.FnWRSetSGE]
	if w.st&f.bitHi != 0 {
		st := w.st &^ f.clear
		w.st = st
		w.addGot(f.group)
		return true, uint32(st) == 0
	}
	return false, false
}

// OpenBurst records n work requests of builder fn each made whole by
// setter, as Burst does, after Ready said fn may start and Whole that
// setter makes it whole (a writer computes Whole once per QP): the
// burst's checks on the fast path's words instead of Burst's tables.
func (c *Chain) OpenBurst(fn, setter mlx.Func, n int) {
	c.OpenWhole(fn, setter)
	c.wrs += n - 1
}

// TryComplete is Complete's common case, inlinable into a writer's
// Complete: busy is 0 (the batch is open without error and its open work
// request, if any, is whole), so there is nothing to check or restore: it
// accepts the mkeys the batch configured, closes the batch and reports
// true. Otherwise it does nothing and reports false, and the writer calls
// Complete.
func (c *Chain) TryComplete() bool {
	if c.wr.busy() != 0 {
		return false
	}
	if len(c.touched) != 0 {
		c.succeed()
	}
	c.closeClean()
	return true
}

// Open opens the work request of builder fn after Ready said it may.
func (c *Chain) Open(fn mlx.Func) {
	c.wrs++
	c.wr.setData(&c.fast[fn])
}

// Whole reports whether a work request of builder fn is whole once setter
// follows it on the fast path (a one-call form: builder and setter in one
// method): the QP takes the setter after fn and one entry, and fn needs
// nothing more. A writer computes it once per QP.
func (c *Chain) Whole(fn, setter mlx.Func) bool {
	f := &c.fast[fn]
	return f.takes&c.fast[setter].bit != 0 && f.need&^c.group[setter] == 0 && c.maxSGE >= 1
}

// OpenRun is OpenWhole for builder fn (one of runBuilders) and its SGE
// in one call (Whole holds for them on this QP, Ready said fn may start),
// with fn's run mark in the state word: InRun(fn) holds until any other
// transition of the chain, and until EndRun.
func (c *Chain) OpenRun(fn mlx.Func) {
	c.wrs++
	w, f, s := &c.wr, &c.fast[fn], &c.fast[mlx.FnWRSetSGE]
	w.meta = f.meta | uint64(s.group)<<16
	w.st = c.runSt[runIndex(fn)]
}

// InRun reports whether the last transition was OpenRun(fn) (or a
// CountRun after it): the batch is open without error and its open work
// request is fn's, whole with one SGE, so another one needs no check of
// the chain's and records itself with CountRun. Every other transition
// stores a state word without fn's mark (got clears them), so a stale
// true is impossible. fn is one of runBuilders.
func (c *Chain) InRun(fn mlx.Func) bool { return c.wr.st == c.runSt[runIndex(fn)] }

// runIndex is fn's place in runBuilders (fn one of them): constant where
// fn is.
func runIndex(fn mlx.Func) int {
	switch fn {
	case mlx.FnWRRDMAWrite:
		return 0
	case mlx.FnWRRDMARead:
		return 1
	}
	return 2
}

// CountRun records another work request of the run's builder with one
// SGE while InRun holds: all it changes is the count, since its state is
// the last one's.
func (c *Chain) CountRun() { c.wrs++ }

// EndRun ends a run: a writer whose own state changed outside the
// chain's transitions (new wr_flags) calls it.
func (c *Chain) EndRun() { c.wr.st &^= runMarks }

// OpenPair is Open for the RDMA write (a writer's RDMAWrite on its fast
// path: after Ready, or while InRun(FnWRRDMAWrite) holds), with pairMark
// in the state word where its SGE makes it whole on this QP: InPair holds
// until any other transition of the chain, and until EndRun.
func (c *Chain) OpenPair() {
	c.wrs++
	w := &c.wr
	w.meta = c.fast[mlx.FnWRRDMAWrite].meta
	w.st = c.pairOpen
}

// InPair reports whether the last transition was OpenPair on a QP where
// ibv_wr_set_sge makes the write whole: the batch is open without error
// and its open work request is the write, with nothing since, so that its
// SGE needs no check of the chain's (its length is the writer's) and
// records itself with ClosePair.
func (c *Chain) InPair() bool { return c.wr.st == c.pairTest }

// ClosePair records the SGE of OpenPair's write while InPair holds, as
// TrySGE would, with the write's run mark: the state OpenRun leaves, so
// that a write after it (RDMAWrite or RDMAWriteSGE) is a run's next.
func (c *Chain) ClosePair() {
	w := &c.wr
	w.meta = c.pairMeta
	w.st = c.runSt[runIndex(mlx.FnWRRDMAWrite)]
}

// OpenWhole opens the work request of builder fn and records setter, as
// Open and TryData would, after Ready said fn may start and Whole that
// setter makes it whole (so nothing is missing: busy is 0).
func (c *Chain) OpenWhole(fn, setter mlx.Func) {
	c.wrs++
	w, f, s := &c.wr, &c.fast[fn], &c.fast[setter]
	w.meta = f.meta | uint64(s.group)<<16
	w.st = (f.takes &^ s.same) << 32
}
