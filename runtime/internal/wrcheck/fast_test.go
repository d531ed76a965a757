package wrcheck

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// checkFastState fails if the fast paths' words let through a call the
// full checks refuse: busy 0 must mean a builder may start (the batch is
// ready, the open work request whole), and every setter wr.accept holds
// must follow the open builder, once, on a ready batch.
func checkFastState(t *testing.T, c *Chain, step int) {
	t.Helper()
	w := &c.wr
	// A run holds only where its next work request needs no check: a
	// batch without error whose open work request is a whole one of the
	// run's builder with its SGE and nothing more.
	for _, fn := range runBuilders {
		if f, s := &c.fast[fn], &c.fast[mlx.FnWRSetSGE]; c.InRun(fn) &&
			!(c.open && c.err == nil && w.isOpen() && w.meta == f.meta|uint64(s.group)<<16 && w.whole()) {
			t.Fatalf("step %d: a run of %v after %v (open %v, got %#x)", step, fn, w.fn(), c.open, w.got())
		}
	}
	// A pair (InPair) holds only where the SGE needs no check of the
	// chain's: an open write with nothing got, in a batch without error,
	// on a QP where the SGE makes it whole.
	if wf := &c.fast[mlx.FnWRRDMAWrite]; c.InPair() && !(c.open && c.err == nil && w.isOpen() && w.meta == wf.meta &&
		c.Whole(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE)) {
		t.Fatalf("step %d: a pair after %v (open %v, got %#x)", step, w.fn(), c.open, w.got())
	}
	if w.busy() == 0 && !(c.open && c.err == nil && (!w.isOpen() || w.whole())) {
		t.Fatalf("step %d: busy 0 with open %v, open WR %v, whole %v", step, c.open, w.isOpen(), w.whole())
	}
	for s := range mlx.NumFuncs {
		// The mkey setters' common case (mkeySetter, on busy) holds only
		// where its checks one by one would: an open, unfinished
		// mkey_configure with its mkey, in a batch without error.
		if c.mkeySetter(s) && !(c.open && c.err == nil && w.isOpen() && w.fn() == mlx.FnWRMkeyConfigure && w.mkey != nil &&
			w.isCounting() && !w.isFinalized() && c.follows[w.fn()][s] && w.got()&c.group[s] == 0) {
			t.Fatalf("step %d: %v taken as an mkey setter after %v (open %v, mkey %v, finalized %v)", step, s, w.fn(), c.open, w.mkey != nil, w.isFinalized())
		}
		f := &c.fast[s]
		if w.accept()&f.bit == 0 {
			continue
		}
		if !(c.open && c.err == nil && w.isOpen() && !w.isFinalized() && !w.isCounting() && c.follows[w.fn()][s] && w.got()&c.group[s] == 0) {
			t.Fatalf("step %d: %v accepted on the fast path after %v (open %v, got %#x, finalized %v)",
				step, mlx.Func(s), w.fn(), c.open, w.got(), w.isFinalized())
		}
	}
}

// TestFastStateSound drives random chains of calls on random QPs and
// checks the fast paths' words after every call.
func TestFastStateSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	sig := &mlx.SigBlockAttr{}
	var ahObj [64]byte
	for round := range 3000 {
		qp := &QP{Type: mlx.QPType(1 << rng.IntN(6)), SendOps: mlx.IBVQPCreateSendOpsFlags(rng.Uint64()),
			MlxSendOps: mlx.QPCreateSendOpsFlags(rng.Uint64()), MaxInlineData: rng.IntN(256), MaxSendSGE: rng.IntN(4), MaxMemcpy: 1 << 20}
		if round%2 == 0 {
			qp.Type, qp.SendOps = mlx.QPRC, 0x3ff
		}
		c := New(qp)
		m := NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 1+rng.IntN(8)) // 4 or 8 entries
		tmpl, err := NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Builders and setters are drawn from the send path's functions
		// mostly, so that chains get past their first call.
		pick := func() mlx.Func {
			if rng.IntN(4) == 0 {
				return mlx.Func(rng.IntN(int(mlx.NumFuncs)))
			}
			fns := []mlx.Func{mlx.FnWRRDMAWrite, mlx.FnWRSend, mlx.FnWRRDMARead, mlx.FnWRSetSGE, mlx.FnWRSetSGEList,
				mlx.FnWRSetInlineData, mlx.FnWRSetDCAddr, mlx.FnWRMkeyConfigure, mlx.FnWRSetMkeyAccessFlags, mlx.FnWRLocalInv}
			return fns[rng.IntN(len(fns))]
		}
		for step := range 40 {
			fn := pick()
			switch rng.IntN(12) {
			case 0:
				c.Start()
			case 1:
				// TryComplete, where it closes the batch, leaves what
				// Complete leaves (and Complete runs where it does not).
				full := *c
				touched := len(c.touched) != 0 // m, the only mkey configured
				_, errFull := full.Complete(mlx.FnWRComplete)
				if c.TryComplete() {
					// (The mkeys the batch configured are shared with the
					// copy: both accept them; the chain's list is emptied.)
					if errFull != nil || c.open != full.open || c.err != full.err || c.wr != full.wr || c.wrs != full.wrs ||
						len(c.touched) != 0 || touched && m.Unknown {
						t.Fatalf("step %d: TryComplete left open %v wr %+v; Complete %v, %+v (%v)",
							step, c.open, c.wr, full.open, full.wr, errFull)
					}
				} else {
					c.Complete(mlx.FnWRComplete)
				}
			case 2:
				c.Abort()
			case 3, 4:
				flags := uint32(rng.IntN(32))
				rb := runBuilders[rng.IntN(len(runBuilders))]
				if (c.Ready(rb, flags) || c.InRun(rb)) && c.Whole(rb, mlx.FnWRSetSGE) && rng.IntN(3) == 1 {
					// A writer's run of one builder's work requests with
					// one SGE each (OpenRun, then CountRun while InRun
					// holds) records what the builder and the setter
					// record, but for the run's mark.
					other := *c
					if other.Builder(rb, flags) != nil {
						t.Fatalf("step %d: %v refused what Ready or InRun allows", step, rb)
					}
					if _, err := other.Data(mlx.FnWRSetSGE, 1, 0); err != nil {
						t.Fatalf("step %d: the SGE refused what Whole allows: %v", step, err)
					}
					if c.InRun(rb) {
						c.CountRun()
					} else {
						c.OpenRun(rb)
					}
					if run := c.wr; run.st&^runMarks != other.wr.st || run.st&runMarks == 0 || run.meta != other.wr.meta || c.wrs != other.wrs {
						t.Fatalf("step %d: the run left wr %+v (%d), the calls %+v (%d)", step, c.wr, c.wrs, other.wr, other.wrs)
					}
					break
				}
				if wr := mlx.FnWRRDMAWrite; (c.Ready(wr, flags) || c.InRun(wr)) && rng.IntN(3) == 0 {
					// A writer's RDMAWrite on its fast path (OpenPair,
					// after Ready or in a run) records what Builder does,
					// but for the pair's mark, where the SGE makes the
					// write whole.
					other := *c
					if other.Builder(wr, flags) != nil {
						t.Fatalf("step %d: the write refused what Ready or InRun allows", step)
					}
					c.OpenPair()
					if c.wr.st&^runMarks != other.wr.st || (c.wr.st&pairMark != 0) != c.Whole(wr, mlx.FnWRSetSGE) ||
						c.wr.meta != other.wr.meta || c.wrs != other.wrs {
						t.Fatalf("step %d: OpenPair left wr %+v (%d), Builder %+v (%d)", step, c.wr, c.wrs, other.wr, other.wrs)
					}
					break
				}
				if c.Ready(mlx.FnWRRDMAWrite, flags) && c.Whole(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE) && rng.IntN(3) == 0 {
					// OpenBurst, where a writer calls it, records what Burst records.
					n := 1 + rng.IntN(40)
					other := *c
					if !other.Burst(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE, flags, n) {
						t.Fatalf("step %d: Burst refused what Ready and Whole allow", step)
					}
					if c.OpenBurst(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE, n); c.wr != other.wr || c.wrs != other.wrs {
						t.Fatalf("step %d: OpenBurst left wr %+v (%d), Burst %+v (%d)", step, c.wr, c.wrs, other.wr, other.wrs)
					}
					break
				}
				c.Builder(fn, flags)
			case 5, 6:
				if fn == mlx.FnWRSetSGE && c.InPair() && rng.IntN(3) != 0 {
					// ClosePair records what Data records for one entry,
					// which makes the write whole, with the write's run
					// mark.
					other := *c
					if whole, err := other.Data(fn, 1, 0); err != nil || !whole {
						t.Fatalf("step %d: the SGE of a pair: Data whole %v, %v", step, whole, err)
					}
					c.ClosePair()
					if c.wr.st&^runMarks != other.wr.st || !c.InRun(mlx.FnWRRDMAWrite) || c.wr.meta != other.wr.meta || c.wrs != other.wrs {
						t.Fatalf("step %d: ClosePair left wr %+v (%d), Data %+v (%d)", step, c.wr, c.wrs, other.wr, other.wrs)
					}
					break
				}
				if fn == mlx.FnWRSetSGE && rng.IntN(2) == 0 {
					// TrySGE takes the setter where TryData with one entry does.
					other := *c
					okData, wholeData := other.TryData(fn, 1)
					if ok, whole := c.TrySGE(); ok != okData || whole != wholeData || c.wr != other.wr {
						t.Fatalf("step %d: TrySGE %v, %v, wr %+v; TryData %v, %v, %+v", step, ok, whole, c.wr, okData, wholeData, other.wr)
					}
					break
				}
				c.Data(fn, rng.IntN(5), rng.IntN(80))
			case 7:
				c.MkeyConfigure(mlx.FnWRMkeyConfigure, uint32(mlx.IBV_SEND_INLINE), m, uint8(rng.IntN(3)), &mlx.MkeyConfAttr{})
			case 8:
				if rng.IntN(2) == 0 {
					c.MkeyAccess(fn, 1)
				} else {
					c.MkeySigBlock(fn, sig)
				}
			case 9:
				if rng.IntN(2) == 0 {
					c.ConfigureMkey(mlx.FnWRMkeyConfigure, uint32(mlx.IBV_SEND_INLINE), m, tmpl, Layout{Entries: 1 + rng.IntN(4), Length: 4096})
				} else {
					c.DCAddr(fn, unsafe.Pointer(&ahObj), rng.IntN(3)-1)
				}
			case 10:
				// TryMkeyAccess, where it takes the setter, records what
				// MkeyAccess records, which accepts it and does not
				// finish the configuration.
				acc := []uint32{0, 1, 3, 1 << 20}[rng.IntN(4)]
				other := *c
				if c.TryMkeyAccess(acc) {
					if u, err := other.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, acc); err != nil || u != nil || c.wr != other.wr {
						t.Fatalf("step %d: TryMkeyAccess(%#x) took it; MkeyAccess %v, %v, wr %+v, want %+v", step, acc, u, err, other.wr, c.wr)
					}
				} else {
					c.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, acc)
				}
			case 11:
				// ListLayoutOK and TookListLayout likewise for MkeyLayout.
				l := Layout{Entries: rng.IntN(12), Length: uint64(rng.IntN(1 << 20))}
				other := *c
				if c.ListLayoutOK(l.Entries) {
					c.TookListLayout(l.Entries, l.Length)
					if u, err := other.MkeyLayout(mlx.FnWRSetMkeyLayoutList, l); err != nil || u != nil || c.wr != other.wr || m.Length != l.Length {
						t.Fatalf("step %d: ListLayoutOK(%d) took it; MkeyLayout %v, %v, wr %+v, want %+v", step, l.Entries, u, err, other.wr, c.wr)
					}
				} else {
					c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, l)
				}
			}
			checkFastState(t, c, step)
		}
	}
}

// TestTrySettersAgree: the writer's inlined mkey setters (TryMkeyAccess;
// ListLayoutOK with TookListLayout) take a setter only where the checks
// one by one (MkeyAccess, MkeyLayout) accept it without finishing the
// configuration, and record what they record; and they take the common
// case (the last setter, an unvalidated value, too many entries for the
// QP or the mkey are left to the checks).
func TestTrySettersAgree(t *testing.T) {
	taken := 0
	for _, inline := range []int{12, 44, 60, 316} {
		for _, maxEntries := range []int{4, 8} {
			for numSetters := range uint8(4) {
				for entries := range 11 {
					for _, acc := range []uint32{0, 1, 0xf, 0x10, 1 << 20} {
						for _, primed := range []bool{false, true} {
							c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: inline, MaxSendSGE: 2})
							m := NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, maxEntries)
							if primed { // accessSeen holds acc if the rule accepts it
								c.accessSeen = noAccess
								if mlx.ValidateArgsWRSetMkeyAccessFlags(mlx.AccessFlags(acc)) == nil {
									c.accessSeen = uint64(acc)
								}
							}
							if err := c.Start(); err != nil {
								t.Fatal(err)
							}
							if _, err := c.MkeyConfigure(mlx.FnWRMkeyConfigure, uint32(mlx.IBV_SEND_INLINE), m, numSetters, &mlx.MkeyConfAttr{}); err != nil {
								continue // the configuration itself refused: nothing open
							}
							name := fmt.Sprintf("inline %d, %d entries of %d, %d setters, access %#x", inline, entries, maxEntries, numSetters, acc)
							other := *c
							if c.TryMkeyAccess(acc) {
								taken++
								if u, err := other.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, acc); err != nil || u != nil || c.wr != other.wr {
									t.Fatalf("%s: TryMkeyAccess took it; MkeyAccess %v, %v", name, u, err)
								}
							} else if u, err := other.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, acc); err == nil && u == nil && primed {
								t.Errorf("%s: TryMkeyAccess left a setter MkeyAccess takes without finishing", name)
							}
							other = *c
							l := Layout{Entries: entries, Length: 4096}
							if c.ListLayoutOK(entries) {
								taken++
								c.TookListLayout(entries, l.Length)
								if u, err := other.MkeyLayout(mlx.FnWRSetMkeyLayoutList, l); err != nil || u != nil || c.wr != other.wr || m.Length != l.Length {
									t.Fatalf("%s: ListLayoutOK took it; MkeyLayout %v, %v", name, u, err)
								}
							} else if u, err := other.MkeyLayout(mlx.FnWRSetMkeyLayoutList, l); err == nil && u == nil {
								t.Errorf("%s: ListLayoutOK left a setter MkeyLayout takes without finishing", name)
							}
						}
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("the inlined setters took nothing")
	}
}

// TestFastPathsTaken: the common chains take the fast paths (a change
// that left them always refusing would pass every rule test).
func TestFastPathsTaken(t *testing.T) {
	c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2})
	if c.TryBuilder(mlx.FnWRRDMAWrite, 0) {
		t.Fatal("a builder took the fast path outside a batch")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if !c.TryBuilder(mlx.FnWRRDMAWrite, 0) {
			t.Fatalf("work request %d: the builder did not take the fast path", i)
		}
		if ok, whole := c.TryData(mlx.FnWRSetSGE, 1); !ok || !whole {
			t.Fatalf("work request %d: TryData = %v, %v", i, ok, whole)
		}
		if ok, _ := c.TryData(mlx.FnWRSetSGE, 1); ok {
			t.Fatal("a second data setter took the fast path")
		}
	}
	if ok, _ := c.TryData(mlx.FnWRSetSGE, 3); ok {
		t.Fatal("3 SGEs above max_send_sge took the fast path")
	}
	if err := c.Builder(mlx.FnWRSend, 0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.TryData(mlx.FnWRSetSGE, 3); ok {
		t.Fatal("3 SGEs above max_send_sge took the fast path")
	}
	if whole, err := c.Data(mlx.FnWRSetInlineData, 0, 8); err != nil || !whole {
		t.Fatal(whole, err)
	}
	if c.wr.busy() != 0 || c.wr.accept()&c.fast[mlx.FnWRSetSGE].bit != 0 {
		t.Fatalf("after a full data setter: busy %#x, accept %#x", c.wr.busy(), c.wr.accept())
	}
	if c.TryBuilder(mlx.FnWRAtomicCmpSwp, 0) && c.needs[mlx.FnWRAtomicCmpSwp]&mlx5rules.GroupData == 0 {
		t.Fatal("an atomic without its data setter requirement")
	}
	if _, err := c.Complete(mlx.FnWRComplete); err == nil {
		t.Fatal("a batch ending in an atomic without data completed")
	}
	if c.TryBuilder(mlx.FnWRRDMAWrite, 0) {
		t.Fatal("a builder took the fast path after Complete")
	}
}

// TestDataWRLeavesMkeyFields: a data builder on the fast path (Open,
// OpenWhole) leaves the mkey fields of the work request (mkey, setter
// counts, translation) as an earlier mkey configuration of the batch set
// them; nothing reads them for a data work request. A batch that
// configured an mkey first answers the later calls as a batch whose first
// work request was a data one does: an mkey setter after the data
// builder, Complete, and the next batch's configuration.
func TestDataWRLeavesMkeyFields(t *testing.T) {
	qp := &QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 316, MaxSendSGE: 2}
	inline := uint32(mlx.IBV_SEND_INLINE)
	for _, whole := range []bool{false, true} {
		used, fresh := New(qp), New(qp)
		mkeys := [2]*Mkey{NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8), NewMkey(0x200, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)}
		used.Start()
		used.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, mkeys[0], 2, &mlx.MkeyConfAttr{})
		used.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, uint32(mlx.IBV_ACCESS_LOCAL_WRITE))
		if u, err := used.MkeyLayout(mlx.FnWRSetMkeyLayoutList, Layout{Entries: 5, Length: 5 << 12}); err != nil || u == nil {
			t.Fatal(u, err)
		}
		fresh.Start()
		fresh.Builder(mlx.FnWRRDMAWrite, 0)
		fresh.Data(mlx.FnWRSetSGE, 1, 0)
		// The data builder after the configuration, then the one under
		// test: Builder's setData, or OpenWhole after Ready.
		for _, c := range []*Chain{used, fresh} {
			if err := c.Builder(mlx.FnWRRDMAWrite, 0); err != nil {
				t.Fatal(err)
			}
			if whole, err := c.Data(mlx.FnWRSetSGE, 1, 0); err != nil || !whole {
				t.Fatal(whole, err)
			}
			switch {
			case !whole:
				if err := c.Builder(mlx.FnWRRDMAWrite, 0); err != nil {
					t.Fatal(err)
				}
			case !c.Ready(mlx.FnWRRDMAWrite, 0):
				t.Fatal("the one-call builder misses the fast path")
			default:
				c.OpenWhole(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE)
			}
		}
		if used.wr.mkey == nil || used.wr.xlat == 0 {
			t.Fatal("the data builder cleared the mkey fields: the test checks nothing")
		}
		_, e1 := used.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, 0)
		_, e2 := fresh.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, 0)
		if e1 == nil {
			t.Fatal("an mkey setter after a data builder was accepted")
		}
		sameRule(t, "an mkey setter after the data builder", e1, e2)
		_, e1 = used.Complete(mlx.FnWRComplete)
		_, e2 = fresh.Complete(mlx.FnWRComplete)
		sameRule(t, "Complete", e1, e2)
		var umr [2]UMR
		for i, c := range []*Chain{used, fresh} {
			c.Start()
			c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, mkeys[i], 1, &mlx.MkeyConfAttr{})
			u, err := c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, Layout{Entries: 2, Length: 2 << 12})
			if err != nil || u == nil {
				t.Fatal(u, err)
			}
			umr[i] = *u
			umr[i].Mkey = nil
			if _, err := c.Complete(mlx.FnWRComplete); err != nil {
				t.Fatal(err)
			}
		}
		if umr[0] != umr[1] {
			t.Fatalf("the next configuration's UMR: %+v after the data builder, %+v on a fresh chain", umr[0], umr[1])
		}
	}
}

// sameRule fails unless both errors are nil or break the same rule.
func sameRule(t *testing.T, what string, e1, e2 error) {
	t.Helper()
	r1, _ := e1.(*mlx.RuleError)
	r2, _ := e2.(*mlx.RuleError)
	if (e1 == nil) != (e2 == nil) || e1 != nil && (r1 == nil || r2 == nil || r1.Rule != r2.Rule || r1.WR != r2.WR) {
		t.Fatalf("%s: %v after an mkey configuration, %v on a fresh chain", what, e1, e2)
	}
}

// TestPackMeta: a work request's builder, setter groups and flags come
// back from its meta word as they went in, each independent of the
// others (the extreme values of each field included), and addGot adds a
// group without touching the rest.
func TestPackMeta(t *testing.T) {
	for _, fn := range []mlx.Func{0, 1, mlx.FnWRMkeyConfigure, 0xffff} {
		for _, got := range []mlx5rules.SetterGroup{0, 1, 0x8001, 0xffff} {
			for _, need := range []mlx5rules.SetterGroup{0, 2, 0xffff} {
				for flags := range 16 {
					open, counting, finalized, resetSig := flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
					w := wr{meta: packMeta(fn, got, need, open, counting, finalized, resetSig)}
					if w.fn() != fn || w.got() != got || w.need() != need || w.isOpen() != open || w.isCounting() != counting ||
						w.isFinalized() != finalized || w.isResetSig() != resetSig {
						t.Fatalf("packMeta(%#x, %#x, %#x, %04b) reads back %#x, %#x, %#x, %v %v %v %v", fn, got, need, flags,
							w.fn(), w.got(), w.need(), w.isOpen(), w.isCounting(), w.isFinalized(), w.isResetSig())
					}
					w.addGot(0x10)
					if w.got() != got|0x10 || w.fn() != fn || w.need() != need || w.isOpen() != open || w.isResetSig() != resetSig {
						t.Fatalf("addGot changed more than got: %#x", w.meta)
					}
				}
			}
		}
	}
}

// TestRunEnds: a run ends at every setter the chain records, whatever
// its group or fast-path bit (got clears the marks: a setter without
// either would leave the state word as it was), and at EndRun; and one
// builder's run is not another's.
func TestRunEnds(t *testing.T) {
	for _, fn := range runBuilders {
		for s := range mlx.NumFuncs {
			if mlx5rules.Funcs[s].Kind != mlx5rules.KindSetter {
				continue
			}
			c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MaxInlineData: 64, MaxSendSGE: 2})
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			c.OpenRun(fn)
			for _, other := range runBuilders {
				if c.InRun(other) != (other == fn) {
					t.Fatalf("after OpenRun(%v), InRun(%v) is %v", fn, other, c.InRun(other))
				}
			}
			c.got(s)
			if c.InRun(fn) {
				t.Fatalf("%v recorded, the run of %v goes on", s, fn)
			}
			c.OpenRun(fn)
			if c.EndRun(); c.InRun(fn) {
				t.Fatal("EndRun left the run")
			}
		}
	}
}
