package mkey

import (
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
)

// Memory is the simulated device's registered memory (the engine
// implements it). key is an MR's lkey or rkey; remote says the access
// comes from the wire (rkey, remote access flags). The slice it returns
// is the memory itself: a write through it lands in the region. Its error
// should be a *Fault.
type Memory interface {
	Bytes(key uint32, addr, n uint64, write, remote bool) ([]byte, error)
}

// FaultKind is what went wrong with an access.
type FaultKind uint8

// The kinds of fault. The engine maps them to completion syndromes: a
// local Key, Access or State fault is a local protection error, Bounds a
// local length error; any remote one a remote access error. [ledger: syndrome-mkey]
const (
	FaultKey    FaultKind = iota + 1 // no such mkey, a stale tag, or an invalidated (free) mkey
	FaultAccess                      // the mkey's access flags do not allow it
	FaultBounds                      // past the mkey's length, or outside its layout
	FaultState                       // not usable yet: crypto not configured, DEK gone or keytag mismatch [ledger: crypto-mkey-state]
)

func (k FaultKind) String() string {
	switch k {
	case FaultKey:
		return "invalid key"
	case FaultAccess:
		return "access denied"
	case FaultBounds:
		return "out of bounds"
	case FaultState:
		return "mkey not usable"
	}
	return fmt.Sprintf("fault kind %d", uint8(k))
}

// Fault is an access through an mkey that the device refuses.
type Fault struct {
	Kind   FaultKind
	Remote bool
	Key    uint32
	Addr   uint64
	N      uint64
	Why    string
}

func (f *Fault) Error() string {
	side := "local"
	if f.Remote {
		side = "remote"
	}
	s := fmt.Sprintf("mkey: %s %s: key %#x, %d bytes at %#x", side, f.Kind, f.Key, f.N, f.Addr)
	if f.Why != "" {
		s += ": " + f.Why
	}
	return s
}

// keyBase is the first mkey index: bit 31 of every mkey key is set.
const keyBase = 0x800000

// Table holds a device's indirect mkeys, their PSVs and the DEKs.
type Table struct {
	mem    Memory
	mkeys  map[uint32]*mkey // by index (key >> 8)
	psvs   map[uint32]*psv
	deks   map[uint32]*dek
	nextIx uint32
	nextPS uint32
	nextID uint32

	// CryptoMultiBlock: the device's AES-XTS engine is the multi-block
	// one (the QPs' sq.QP.CryptoMultiBlock): the crypto BSF holds the
	// initial tweak byte-reversed. [ledger: crypto-engine, xts-tweak-byte-order]
	CryptoMultiBlock bool

	// scratch for transfers with a signature or crypto
	a, b, c, d []byte
}

// psv is a PSV: an object of its own (CREATE_PSV), named by the
// signature BSF of the mkeys that use it.
type psv struct {
	pdn   uint32
	value uint64 // the transient signature SET_PSV wrote
	set   bool
}

type dek struct {
	key    []byte
	keytag []byte // nil: the DEK has none
}

// NewTable makes the mkey table of a device over its registered memory.
func NewTable(mem Memory) *Table {
	return &Table{mem: mem, mkeys: map[uint32]*mkey{}, psvs: map[uint32]*psv{}, deks: map[uint32]*dek{},
		nextIx: keyBase, nextPS: 0x100, nextID: 1}
}

// Errors of Table calls with bad arguments.
var (
	ErrNoMkey = errors.New("mkey: no such mkey")
	ErrNoDEK  = errors.New("mkey: no such DEK")
	ErrNoPSV  = errors.New("mkey: no such PSV")
	ErrInUse  = errors.New("mkey: in use")
	ErrFull   = errors.New("mkey: the device's table is full")
)

// Create makes an indirect mkey (mlx5dv_create_mkey) of pd pdn: flags
// must have INDIRECT; BLOCK_SIGNATURE gives it a memory and a wire PSV
// (see PSVs), made as CreatePSV makes them, as libmlx5 does. maxEntries
// bounds its layouts' translation entries.
func (t *Table) Create(pdn uint32, flags mlx.MkeyInitAttrFlags, maxEntries int) (uint32, error) {
	key, err := t.CreateMkey(pdn, flags, maxEntries, 0)
	if err != nil || flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE == 0 {
		return key, err
	}
	mem, err := t.CreatePSV(pdn)
	if err != nil {
		t.Destroy(key)
		return 0, err
	}
	wire, err := t.CreatePSV(pdn)
	if err != nil {
		t.DestroyPSV(mem)
		t.Destroy(key)
		return 0, err
	}
	m := t.mkeys[key>>8]
	m.memPSV, m.wirePSV, m.ownPSVs = mem, wire, true
	return key, nil
}

// CreateMkey makes an indirect mkey with key byte tag and no PSVs of its
// own: what CREATE_MKEY makes; the PSVs its signature BSF names are
// made apart (CREATE_PSV).
func (t *Table) CreateMkey(pdn uint32, flags mlx.MkeyInitAttrFlags, maxEntries int, tag uint8) (uint32, error) {
	known := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE |
		mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG |
		mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE
	switch {
	case flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT == 0:
		return 0, errors.New("mkey: create_flags lacks MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT")
	case flags&^known != 0:
		return 0, fmt.Errorf("mkey: unknown create_flags %#x", uint32(flags&^known))
	case maxEntries <= 0 || maxEntries > 1<<16:
		return 0, fmt.Errorf("mkey: max_entries %d is not 1 to 65536", maxEntries)
	}
	if t.nextIx > 0xffffff {
		return 0, ErrFull
	}
	ix := t.nextIx
	t.nextIx++
	t.mkeys[ix] = &mkey{index: ix, tag: tag, pdn: pdn, flags: flags, numDesc: (maxEntries + 3) &^ 3, free: true}
	return ix<<8 | uint32(tag), nil
}

// maxPSVs bounds the device's PSVs (a PSV index is 24 bits).
const maxPSVs = 1 << 20

// CreatePSV makes a PSV of pd pdn and returns its index.
func (t *Table) CreatePSV(pdn uint32) (uint32, error) {
	if len(t.psvs) >= maxPSVs || t.nextPS > 0xffffff {
		return 0, ErrFull
	}
	ix := t.nextPS
	t.nextPS++
	t.psvs[ix] = &psv{pdn: pdn}
	return ix, nil
}

// DestroyPSV removes a PSV. One an mkey's signature configuration names,
// or one made with its mkey (Create), stays until the mkey goes: the
// device would otherwise check against freed state [ledger: psv-in-use].
func (t *Table) DestroyPSV(ix uint32) error {
	if t.psvs[ix] == nil {
		return fmt.Errorf("%w: %#x", ErrNoPSV, ix)
	}
	for _, m := range t.mkeys {
		if m.ownPSVs && (m.memPSV == ix || m.wirePSV == ix) ||
			m.sig != nil && (m.sig.mem.psv == ix || m.sig.wire.psv == ix) {
			return fmt.Errorf("%w: PSV %#x is in use by mkey %#x", ErrInUse, ix, m.key())
		}
	}
	delete(t.psvs, ix)
	return nil
}

// PSVPD returns the PD a PSV was made in.
func (t *Table) PSVPD(ix uint32) (uint32, bool) {
	p := t.psvs[ix]
	if p == nil {
		return 0, false
	}
	return p.pdn, true
}

// PSVs returns the memory and wire PSV indexes of a signature mkey.
func (t *Table) PSVs(key uint32) (mem, wire uint32, err error) {
	m := t.mkeys[key>>8]
	if m == nil || m.memPSV == 0 {
		return 0, 0, fmt.Errorf("%w with a signature context: %#x", ErrNoMkey, key)
	}
	return m.memPSV, m.wirePSV, nil
}

// PD returns the protection domain an mkey was created in, for the
// engine to match against the QP using it.
func (t *Table) PD(key uint32) (uint32, bool) {
	m := t.mkeys[key>>8]
	if m == nil {
		return 0, false
	}
	return m.pdn, true
}

// Destroy removes an mkey and its PSVs (mlx5dv_destroy_mkey).
func (t *Table) Destroy(key uint32) error {
	m := t.mkeys[key>>8]
	if m == nil {
		return fmt.Errorf("%w: %#x", ErrNoMkey, key)
	}
	if m.ownPSVs {
		delete(t.psvs, m.memPSV)
		delete(t.psvs, m.wirePSV)
	}
	delete(t.mkeys, key>>8)
	return nil
}

// Is reports whether key names one of the table's mkeys with its current
// tag byte.
func (t *Table) Is(key uint32) bool {
	m := t.mkeys[key>>8]
	return m != nil && m.tag == uint8(key)
}

// Invalidate frees an mkey (a local or remote invalidate): it keeps its
// attributes but accesses fault until a UMR configures it again. [ledger: mkey-free-until-umr]
func (t *Table) Invalidate(key uint32) error {
	if !t.Is(key) {
		return fmt.Errorf("%w: %#x", ErrNoMkey, key)
	}
	t.mkeys[key>>8].free = true
	return nil
}

// RemoteInvalidate is Invalidate for a SEND with invalidate from the
// wire: the mkey must have been created with REMOTE_INVALIDATE.
func (t *Table) RemoteInvalidate(key uint32) error {
	if !t.Is(key) {
		return &Fault{Kind: FaultKey, Key: key, Remote: true, Why: "no such mkey"}
	}
	if t.mkeys[key>>8].flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE == 0 {
		return &Fault{Kind: FaultAccess, Key: key, Remote: true, Why: "created without MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE"}
	}
	return t.Invalidate(key)
}

// CreateDEK loads a plaintext AES-XTS data encryption key
// (mlx5dv_dek_create): key is key1 then key2, 32 bytes (key size 128) or
// 64 (key size 256); keytag is nil or the DEK's 8-byte keytag. It returns
// the DEK's object id, which crypto BSFs name.
func (t *Table) CreateDEK(key, keytag []byte) (uint32, error) {
	if len(key) != 32 && len(key) != 64 {
		return 0, sigblock.ErrKeySize
	}
	if keytag != nil && len(keytag) != 8 {
		return 0, fmt.Errorf("mkey: a DEK keytag has 8 bytes, not %d", len(keytag))
	}
	id := t.nextID
	t.nextID++
	d := &dek{key: append([]byte(nil), key...)}
	if keytag != nil {
		d.keytag = append([]byte(nil), keytag...)
	}
	t.deks[id] = d
	return id, nil
}

// DestroyDEK removes a DEK; mkeys configured with it fault until
// configured again.
func (t *Table) DestroyDEK(id uint32) error {
	if t.deks[id] == nil {
		return fmt.Errorf("%w: %d", ErrNoDEK, id)
	}
	delete(t.deks, id)
	return nil
}
