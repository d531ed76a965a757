// Package keys is a simulated device's protection table: the memory
// regions (MRs) and memory windows (MWs) its keys name, each over real
// memory, with the access flags, bounds and protection domain every access
// is checked against. Lookups do not allocate: the engine calls them for
// every scatter/gather entry.
//
// A key is an index (bits 31..8) and a tag (bits 7..0), as an mlx5 mkey:
// an MR's lkey and rkey are the same key; a type 2 MW gets a new tag each
// time it is bound, so a stale rkey of an earlier binding fails.
package keys

import (
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// FaultKind says which check an access failed.
type FaultKind uint8

const (
	// LocalProtection: an unknown or invalidated lkey, a PD that is not
	// the QP's, a local write to an MR without IBV_ACCESS_LOCAL_WRITE, or
	// an access outside the MR.
	LocalProtection FaultKind = iota + 1
	// RemoteAccess: an unknown or invalidated rkey, a PD that is not the
	// QP's, missing remote access rights, or an access outside the region. [ledger: syndrome-keys]
	RemoteAccess
)

func (k FaultKind) String() string {
	switch k {
	case LocalProtection:
		return "local protection"
	case RemoteAccess:
		return "remote access"
	}
	return fmt.Sprintf("FaultKind(%d)", uint8(k))
}

// Fault is an access a key does not allow.
type Fault struct {
	Kind FaultKind
	Key  uint32
	Addr uint64
	N    uint64
	Why  string
}

func (f *Fault) Error() string {
	return fmt.Sprintf("keys: %v fault: key %#x, %d bytes at %#x: %s", f.Kind, f.Key, f.N, f.Addr, f.Why)
}

// Errors of the table's management calls.
var (
	ErrUnknownKey = errors.New("keys: no such key")
	ErrFull       = errors.New("keys: the protection table is full")
	ErrBound      = errors.New("keys: the MR has memory windows bound to it")
)

// MaxEntries bounds the table: a key's index has 24 bits, and keys with
// bit 31 set are the indirect mkeys' (runtime/sim/mkey).
const MaxEntries = 1 << 23

// AnyPD in place of a PD skips the protection-domain check: an access on
// behalf of an indirect mkey, which checked its own.
const AnyPD = ^uint32(0)

type entry struct {
	used   bool
	mw     bool
	valid  bool // an MR: registered; an MW: bound
	tag    uint8
	pd     uint32
	access mlx.AccessFlags
	start  uint64 // the address the region's first byte has for its users
	mem    []byte // the memory (an MW: the part of its MR it covers)
	parent uint32 // an MW: its MR's key
	binds  int    // an MR: MWs bound to it
}

// Table is one device's protection table. It is not safe for concurrent
// use: the device (its engine) owns it.
type Table struct {
	e     []entry
	free  []uint32
	base  uint32 // the first index this table hands out
	tagSq uint8
}

// New makes a table whose keys have indexes from base up (so that two
// tables of one device, MRs and indirect mkeys, never hand out one key).
func New(base uint32) *Table {
	return &Table{base: base}
}

func (t *Table) alloc() (uint32, *entry, error) {
	var i uint32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
	} else {
		if int(t.base)+len(t.e) >= MaxEntries {
			return 0, nil, ErrFull
		}
		i = uint32(len(t.e))
		t.e = append(t.e, entry{})
	}
	t.tagSq++
	e := &t.e[i]
	*e = entry{used: true, tag: t.tagSq}
	return i, e, nil
}

func (t *Table) key(i uint32) uint32 { return (t.base+i)<<8 | uint32(t.e[i].tag) }

// lookup finds key's entry (its tag checked); nil if there is none.
func (t *Table) lookup(key uint32) *entry {
	i := key>>8 - t.base
	if key>>8 < t.base || i >= uint32(len(t.e)) {
		return nil
	}
	e := &t.e[i]
	if !e.used || e.tag != uint8(key) {
		return nil
	}
	return e
}

// Owns reports whether key's index is one this table hands out.
func (t *Table) Owns(key uint32) bool {
	return key>>8 >= t.base && key>>8-t.base < uint32(len(t.e))
}

// RegMR registers mem, whose first byte has address addr, for pd with the
// access flags; it returns the MR's key (lkey = rkey).
func (t *Table) RegMR(pd uint32, mem []byte, addr uint64, access mlx.AccessFlags) (uint32, error) {
	if addr+uint64(len(mem)) < addr {
		return 0, fmt.Errorf("keys: %d bytes at %#x wrap the address space", len(mem), addr)
	}
	remote := mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_ATOMIC
	if access&remote != 0 && access&mlx.IBV_ACCESS_LOCAL_WRITE == 0 {
		// ibv_reg_mr(3): remote write or atomic access needs local write.
		return 0, fmt.Errorf("keys: access %v: IBV_ACCESS_REMOTE_WRITE and IBV_ACCESS_REMOTE_ATOMIC need IBV_ACCESS_LOCAL_WRITE", access)
	}
	i, e, err := t.alloc()
	if err != nil {
		return 0, err
	}
	e.valid, e.pd, e.access, e.start, e.mem = true, pd, access, addr, mem
	if access&mlx.IBV_ACCESS_ZERO_BASED != 0 {
		e.start = 0
	}
	return t.key(i), nil
}

// Dereg removes an MR or an MW. An MR with windows bound to it stays
// (ibv_dereg_mr fails with EBUSY).
func (t *Table) Dereg(key uint32) error {
	e := t.lookup(key)
	if e == nil {
		return fmt.Errorf("%w: %#x", ErrUnknownKey, key)
	}
	if !e.mw && e.binds > 0 {
		return ErrBound
	}
	if e.mw && e.valid {
		t.unbind(e)
	}
	*e = entry{tag: e.tag}
	t.free = append(t.free, key>>8-t.base)
	return nil
}

// AllocMW allocates an unbound type 2 memory window of pd; its rkey takes
// a new tag at each bind. [ledger: mw-type2]
func (t *Table) AllocMW(pd uint32) (uint32, error) {
	i, e, err := t.alloc()
	if err != nil {
		return 0, err
	}
	e.mw, e.pd = true, pd
	return t.key(i), nil
}
