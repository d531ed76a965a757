package mkey

import (
	"bytes"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
)

// maxTransfer is the largest message: 2 GiB.
const maxTransfer = 1 << 31

// lookup finds the mkey key names and checks an access of n bytes at
// addr (memory-domain bytes) and its crypto state. [ledger: crypto-mkey-state]
func (t *Table) lookup(key uint32, addr, n uint64, write, remote bool) (*mkey, error) {
	m := t.mkeys[key>>8]
	if m == nil || key < keyBase<<8 {
		return nil, &Fault{Kind: FaultKey, Key: key, Addr: addr, N: n, Remote: remote, Why: "no such mkey"}
	}
	if err := t.check(m, key, addr, n, write, remote); err != nil {
		return nil, err
	}
	// Bound the scratch a transfer takes before taking it: the context
	// length may exceed the layout (see ExecUMR), and no message is
	// larger than a WQE's 2 GiB.
	if n > maxTransfer || addr-m.start+n > m.layout.total() {
		return nil, &Fault{Kind: FaultBounds, Key: key, Addr: addr, N: n, Remote: remote, Why: "past the layout or above 2 GiB"}
	}
	if m.flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO == 0 {
		return m, nil
	}
	c := m.crypto
	if c == nil {
		return nil, &Fault{Kind: FaultState, Key: key, Addr: addr, N: n, Remote: remote, Why: "a crypto mkey used before its crypto attributes are set"}
	}
	d := t.deks[c.dekID]
	if c.dek == d && d != nil {
		return m, nil // checked when c.x was built for d
	}
	var why string
	switch {
	case d == nil:
		why = "its DEK is destroyed"
	case d.keytag != nil && !bytes.Equal(d.keytag, c.keytag[:]):
		why = "the keytag does not match the DEK's"
	default:
		x, err := sigblock.NewXTS(d.key, c.unit)
		if err != nil {
			why = err.Error()
			break
		}
		c.x, c.dek = x, d
		return m, nil
	}
	return nil, &Fault{Kind: FaultState, Key: key, Addr: addr, N: n, Remote: remote, Why: why}
}

// wireUnits reports whether an address and length through m count wire
// bytes. A remote address and length (an RDMA READ or WRITE's RETH) always
// do: changchengx/irdma crc32c/rdma_read_crc32c_reqck.c READs 4096+4
// bytes from a responder mkey with memory none and wire CRC32C over 4096
// bytes on mlx5 hardware, and NVIDIA's signature sample reads and writes
// (block+PI)*blocks from and into its peer's mkeys. A local SGE counts
// memory bytes when the wire domain carries a signature and wire (data)
// bytes when it has none: Linux drivers/infiniband/core/rw.c
// rdma_rw_ctx_signature_init gives the SGE the MR's length less the
// metadata when the wire has no signature; rdma-core
// tests/test_mlx5_mkey.py test_mkey_sig_err sends 512 bytes through an
// mkey with memory CRC32 over 516 and wire none; changchengx/irdma
// crc32c/check_rdma_crc32c.c READs into such an mkey with SGE length 4096
// ("do not use 4096 + 4") on a ConnectX-6 Dx. The programs all use
// address 0; that an SGE's address counts in the same units as its
// length is inferred. [ledger: sig-local-sge-length, sig-remote-wire-bytes]
func wireUnits(m *mkey, remote bool) bool {
	return remote || m.sig == nil || m.sig.wire.d.Kind == sigblock.KindNone
}

// toMem converts an address (zero-based, from m.start) or length x through
// m from the units wireUnits gives to memory-domain bytes.
func (t *Table) toMem(m *mkey, x uint64, remote bool) (uint64, error) {
	if !wireUnits(m, remote) || m.sig == nil {
		return x, nil
	}
	mem, wire := t.domain(&m.sig.mem), t.domain(&m.sig.wire)
	return t.convert(&wire, &mem, x)
}

// memSpan converts a span (addr, n) through m to memory-domain bytes; a
// span that is not whole signature blocks is a bounds fault.
func (t *Table) memSpan(m *mkey, key uint32, addr, n uint64, remote bool) (uint64, uint64, error) {
	fault := func(why string) error {
		return &Fault{Kind: FaultBounds, Key: key, Addr: addr, N: n, Remote: remote, Why: why}
	}
	if addr < m.start {
		return 0, 0, fault("below the mkey's start")
	}
	off, err := t.toMem(m, addr-m.start, remote)
	if err != nil {
		return 0, 0, fault("the address: " + err.Error())
	}
	mn, err := t.toMem(m, n, remote)
	if err != nil {
		return 0, 0, fault("the length: " + err.Error())
	}
	return m.start + off, mn, nil
}

// Gather reads the span of n bytes at addr of the mkey's address space
// (zero-based; counted as wireUnits says) and appends the wire bytes to
// dst: signature fields checked, stripped, generated or replaced and the
// data encrypted or decrypted as the mkey says. remote: an RDMA READ
// responder (REMOTE_READ needed). A failed signature check still
// transfers; SigError reports it.
func (t *Table) Gather(key uint32, addr, n uint64, remote bool, dst []byte) ([]byte, error) {
	m := t.mkeys[key>>8]
	if m == nil {
		return dst, &Fault{Kind: FaultKey, Key: key, Addr: addr, N: n, Remote: remote, Why: "no such mkey"}
	}
	addr, n, err := t.memSpan(m, key, addr, n, remote)
	if err != nil {
		return dst, err
	}
	if m, err = t.lookup(key, addr, n, false, remote); err != nil {
		return dst, err
	}
	at := len(dst)
	if m.sig == nil && m.crypto == nil {
		dst = grow(dst, n)
		if err := t.rw(m, addr-m.start, dst[at:], false, 0); err != nil {
			return dst[:at], err
		}
		return dst, nil
	}
	buf := grow(t.a[:0], n)
	t.a = buf
	if err := t.rw(m, addr-m.start, buf, false, 0); err != nil {
		return dst, err
	}
	out, err := t.pipeline(m, key, addr-m.start, buf, true, remote)
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil
}

// Scatter writes wire bytes arriving for addr of the mkey's address space
// (zero-based; counted as wireUnits says) in memory form. remote: an RDMA
// WRITE (REMOTE_WRITE needed); else a receive or a READ response
// (LOCAL_WRITE).
func (t *Table) Scatter(key uint32, addr uint64, wire []byte, remote bool) error {
	m := t.mkeys[key>>8]
	if m == nil {
		return &Fault{Kind: FaultKey, Key: key, Addr: addr, N: uint64(len(wire)), Remote: remote, Why: "no such mkey"}
	}
	addr, _, err := t.memSpan(m, key, addr, 0, remote)
	if err != nil {
		return err
	}
	n, err := t.memLen(m, uint64(len(wire)))
	if err != nil {
		return &Fault{Kind: FaultBounds, Key: key, Addr: addr, N: uint64(len(wire)), Remote: remote, Why: err.Error()}
	}
	if m, err = t.lookup(key, addr, n, true, remote); err != nil {
		return err
	}
	out := wire
	if m.sig != nil || m.crypto != nil {
		if out, err = t.pipeline(m, key, addr-m.start, wire, false, remote); err != nil {
			return err
		}
	}
	return t.rw(m, addr-m.start, out, true, 0)
}

// pipeline runs the operations of mlx5dv_wr_set_mkey_crypto(3)'s table:
// on TX (memory to wire) Op1, Op2, Op3; on RX their inverses in reverse.
// Crypto is Op1 when the signature comes after it on TX (or there is no
// signature), else Op3. off is the memory-domain offset of the transfer. [ledger: crypto-order]
func (t *Table) pipeline(m *mkey, key uint32, off uint64, in []byte, tx, remote bool) ([]byte, error) {
	var sc sigConf
	if m.sig != nil {
		sc = *m.sig
	}
	mem, wire := t.domain(&sc.mem), t.domain(&sc.wire)
	hasSig := mem.Kind != sigblock.KindNone || wire.Kind != sigblock.KindNone
	cr := m.crypto
	memSide := cr != nil && (cr.sigAfter || !hasSig)
	wireSide := cr != nil && !memSide
	fault := func(err error) error {
		return &Fault{Kind: FaultBounds, Key: key, Addr: off, N: uint64(len(in)), Remote: remote, Why: err.Error()}
	}
	from, to, inOff := &mem, &wire, off
	if !tx {
		from, to = &wire, &mem
		w, err := t.convert(&mem, &wire, off)
		if err != nil {
			return nil, fault(err)
		}
		inOff = w
	}
	buf := in
	// Crypto runs once, first or last, always into t.d: the signature
	// pass uses t.b and t.c.
	if tx && memSide || !tx && wireSide {
		// Crypto first: on the memory data on TX, the wire data on RX.
		t.d = grow(t.d[:0], uint64(len(in)))
		if err := crypt(cr, t.d, in, inOff, tx); err != nil {
			return nil, fault(err)
		}
		buf = t.d
	}
	out, outOff, serr, err := t.sigPass(from, to, &sc, buf, inOff)
	if err != nil {
		return nil, fault(err)
	}
	if serr.Failed != 0 {
		dom := DomainWire
		if tx {
			dom = DomainMemory
		}
		t.record(m, serr, dom)
	}
	if tx && wireSide || !tx && memSide {
		t.d = grow(t.d[:0], uint64(len(out)))
		if err := crypt(cr, t.d, out, outOff, tx); err != nil {
			return nil, fault(err)
		}
		out = t.d
	}
	return out, nil
}

// crypt runs AES-XTS over src into dst: data unit i of the transfer takes
// the initial tweak (128 bits, little-endian, carried past 64 bits) plus
// i. mlx5dv_wr_set_mkey_crypto(3): the initial tweak "is incremented by
// the device for every data unit in the message", normally "the LBA of
// the first block in the message"; so the transfer's first unit takes the
// initial tweak wherever in the mkey it starts. off is the transfer's
// offset in the domain and must be whole units. A message of several SGEs
// through crypto mkeys numbers each SGE's units from its own first one.
// [ledger: xts-tweak-numbering] TX encrypts when encrypt_on_tx is set, RX
// decrypts; else the other way.
func crypt(c *cryptoConf, dst, src []byte, off uint64, tx bool) error {
	if off%uint64(c.unit) != 0 {
		return fmt.Errorf("mkey: a crypto transfer at offset %d does not start on a %d-byte data unit", off, c.unit)
	}
	if tx == c.encOnTx {
		return c.x.EncryptWide(dst, src, c.tweak)
	}
	return c.x.DecryptWide(dst, src, c.tweak)
}

// sigPass turns buf, from's format at offset inOff of from's domain, into
// to's format: from's fields checked (check_mask) and stripped, to's
// generated, and with the same block structure the copy_mask bytes taken
// from from's fields. It returns the output, its offset in to's domain,
// and the first block that failed its check. Blocks are numbered from the
// transfer's first (its reference tag is the configured one):
// mlx5dv_wr_set_mkey_sig_block(3) says the initial ref_tag "should be the
// value of the first block to be transmitted". The offset must still be
// whole blocks. [ledger: sig-ref-tag-numbering]
func (t *Table) sigPass(from, to *sigblock.Domain, sc *sigConf, buf []byte, inOff uint64) ([]byte, uint64, sigblock.Error, error) {
	var e sigblock.Error
	if from.Kind == sigblock.KindNone && to.Kind == sigblock.KindNone {
		return buf, inOff, e, nil
	}
	bs, inStride := to.BlockSize, to.BlockSize
	if from.Kind != sigblock.KindNone {
		bs, inStride = from.BlockSize, from.Stride()
	}
	if inOff%uint64(inStride) != 0 || len(buf)%inStride != 0 {
		return nil, 0, e, fmt.Errorf("mkey: %d bytes at offset %d are not whole %d-byte signature blocks", len(buf), inOff, inStride)
	}
	raw, rawOff := buf, inOff/uint64(inStride)*uint64(bs)
	if from.Kind != sigblock.KindNone {
		t.b = grow(t.b[:0], uint64(len(buf)/inStride*bs))
		var err error
		if _, e, err = from.Strip(t.b, buf, 0, sc.checkMask); err != nil {
			return nil, 0, e, err
		}
		raw = t.b
	}
	if to.Kind == sigblock.KindNone {
		return raw, rawOff, e, nil
	}
	obs := uint64(to.BlockSize)
	if rawOff%obs != 0 || uint64(len(raw))%obs != 0 {
		return nil, 0, e, fmt.Errorf("mkey: %d data bytes at %d are not whole %d-byte blocks of the output domain", len(raw), rawOff, obs)
	}
	blocks := uint64(len(raw)) / obs
	t.c = grow(t.c[:0], blocks*uint64(to.Stride()))
	if _, err := to.Generate(t.c, raw, 0); err != nil {
		return nil, 0, e, err
	}
	if sc.sbs && sc.copyMask != 0 && from.Kind != sigblock.KindNone {
		st, ts := to.Stride(), to.TupleSize()
		for i := 0; i < int(blocks); i++ {
			f := (i+1)*st - ts
			sigblock.CopyFields(t.c[f:f+ts], buf[f:f+ts], ts, sc.copyMask)
		}
	}
	return t.c, rawOff / obs * uint64(to.Stride()), e, nil
}

// convert maps a length or block-aligned offset n in from's domain to
// to's.
func (t *Table) convert(from, to *sigblock.Domain, n uint64) (uint64, error) {
	raw := n
	if from.Kind != sigblock.KindNone {
		st := uint64(from.Stride())
		if n%st != 0 {
			return 0, fmt.Errorf("mkey: %d bytes are not whole %d-byte signature blocks", n, st)
		}
		raw = n / st * uint64(from.BlockSize)
	}
	if to.Kind == sigblock.KindNone {
		return raw, nil
	}
	if raw%uint64(to.BlockSize) != 0 {
		return 0, fmt.Errorf("mkey: %d data bytes are not whole %d-byte signature blocks", raw, to.BlockSize)
	}
	return raw / uint64(to.BlockSize) * uint64(to.Stride()), nil
}

func (t *Table) memLen(m *mkey, wire uint64) (uint64, error) {
	if m.sig == nil {
		return wire, nil
	}
	mem, w := t.domain(&m.sig.mem), t.domain(&m.sig.wire)
	return t.convert(&w, &mem, wire)
}

// SpanWire returns the wire bytes a span of n bytes through the mkey
// carries, n counted as wireUnits says: a receive SGE of n bytes takes a
// message of that many wire bytes, an RDMA READ's local SGEs ask the
// responder for their sum. Only a local span through an mkey whose wire
// domain has a signature converts (its memory bytes, whole blocks).
func (t *Table) SpanWire(key uint32, n uint64, remote bool) (uint64, error) {
	m := t.mkeys[key>>8]
	if m == nil {
		return 0, fmt.Errorf("%w: %#x", ErrNoMkey, key)
	}
	if wireUnits(m, remote) {
		return n, nil
	}
	mem, w := t.domain(&m.sig.mem), t.domain(&m.sig.wire)
	return t.convert(&mem, &w, n)
}

// grow returns b extended by n bytes (reusing its capacity).
func grow(b []byte, n uint64) []byte {
	need := len(b) + int(n)
	if cap(b) < need {
		nb := make([]byte, need, need+need/4)
		copy(nb, b)
		return nb
	}
	return b[:need]
}
