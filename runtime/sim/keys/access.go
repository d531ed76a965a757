package keys

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Bytes returns the n bytes at addr under key, checked for a QP of
// protection domain pd: need is the access the operation needs (0 for a
// local read, IBV_ACCESS_LOCAL_WRITE for a local write, one of the
// IBV_ACCESS_REMOTE_* flags for an access from the wire), and remote says
// the key came from the wire (an rkey: an MW's or an MR's). It does not
// allocate; the fault is reported through f, which it fills and returns.
func (t *Table) Bytes(key, pd uint32, addr, n uint64, need mlx.AccessFlags, remote bool, f *Fault) ([]byte, *Fault) {
	kind := LocalProtection
	if remote {
		kind = RemoteAccess
	}
	e := t.lookup(key)
	switch {
	case e == nil || !e.valid:
		return nil, f.set(kind, key, addr, n, "unknown or invalid key")
	case e.pd != pd && pd != AnyPD:
		return nil, f.set(kind, key, addr, n, "the key's protection domain is not the QP's")
	case e.mw && !remote:
		return nil, f.set(kind, key, addr, n, "a memory window used as an lkey")
	case e.access&need != need:
		return nil, f.set(kind, key, addr, n, "the key lacks the access rights")
	}
	off := addr - e.start
	if addr < e.start || off > uint64(len(e.mem)) || n > uint64(len(e.mem))-off {
		return nil, f.set(kind, key, addr, n, "outside the region")
	}
	return e.mem[off : off+n : off+n], nil
}

func (f *Fault) set(k FaultKind, key uint32, addr, n uint64, why string) *Fault {
	*f = Fault{Kind: k, Key: key, Addr: addr, N: n, Why: why}
	return f
}

// BindMW binds the window whose current rkey is mwKey to length bytes at
// addr of the MR mrKey, with access, under the new tag; it returns the new
// rkey. It fails (the MW_BIND error of the bind work request) for an
// unknown or bound window, an MR without IBV_ACCESS_MW_BIND, of another PD,
// or too small, and for remote write or atomic access on an MR without
// local write (ibv_bind_mw(3)).
func (t *Table) BindMW(mwKey uint32, tag uint8, pd, mrKey uint32, addr, length uint64, access mlx.AccessFlags, f *Fault) (uint32, *Fault) {
	w := t.lookup(mwKey)
	if w == nil || !w.mw || w.pd != pd {
		return 0, f.set(LocalProtection, mwKey, addr, length, "not a memory window of the QP's protection domain")
	}
	if w.valid {
		return 0, f.set(LocalProtection, mwKey, addr, length, "the memory window is bound")
	}
	var inner Fault
	mem, bad := t.Bytes(mrKey, pd, addr, length, mlx.IBV_ACCESS_MW_BIND, false, &inner)
	if bad != nil {
		return 0, f.set(LocalProtection, mrKey, addr, length, "the MR: "+inner.Why)
	}
	mr := t.lookup(mrKey)
	if access&(mlx.IBV_ACCESS_REMOTE_WRITE|mlx.IBV_ACCESS_REMOTE_ATOMIC) != 0 && mr.access&mlx.IBV_ACCESS_LOCAL_WRITE == 0 {
		return 0, f.set(LocalProtection, mrKey, addr, length, "remote write or atomic access through an MR without local write")
	}
	w.valid, w.tag, w.access, w.mem, w.parent = true, tag, access, mem, mrKey
	w.start = addr
	if access&mlx.IBV_ACCESS_ZERO_BASED != 0 {
		w.start = 0
	}
	mr.binds++
	return mwKey&^0xff | uint32(tag), nil
}

// Invalidate invalidates an MW's rkey: a local invalidate (tag 0, the
// WQE's: the window keeps its tag, as ibv_wr_local_inv leaves mw->rkey) or
// a bind of zero length (the window takes the new tag, as ibv_bind_mw sets
// mw->rkey; a new tag of 0 is read as a local invalidate). It fails for a
// key that is not a bound window of pd. [ledger: mw-type2]
func (t *Table) Invalidate(key, pd uint32, tag uint8, f *Fault) *Fault {
	w := t.lookup(key)
	if w == nil || !w.mw || !w.valid || w.pd != pd {
		return f.set(LocalProtection, key, 0, 0, "not a bound memory window of the QP's protection domain")
	}
	t.unbind(w)
	if tag != 0 {
		w.tag = tag
	}
	return nil
}

func (t *Table) unbind(w *entry) {
	if mr := t.lookup(w.parent); mr != nil && mr.binds > 0 {
		mr.binds--
	}
	w.valid, w.mem, w.parent = false, nil, 0
}

// IsMW reports whether key's index is a memory window (whatever its tag).
func (t *Table) IsMW(key uint32) bool {
	if !t.Owns(key) {
		return false
	}
	e := &t.e[key>>8-t.base]
	return e.used && e.mw
}

// MWKey returns the window's current rkey from any of its keys' index.
func (t *Table) MWKey(key uint32) uint32 {
	e := &t.e[key>>8-t.base]
	return key&^0xff | uint32(e.tag)
}
