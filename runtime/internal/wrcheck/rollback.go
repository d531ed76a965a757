package wrcheck

import mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"

// A batch that fails or is aborted posts nothing, so the mkeys it
// configured go back to the state they had before it (and are marked
// unknown: forget). touch records that state when the batch first
// configures an mkey: the fields a configuration changes, but for the two
// large groups, the signature attributes (the domains, flags and masks)
// and the crypto attributes, which most configurations leave as they are
// (attrTag: the same attributes are not copied again). Those are saved
// by the calls that change them, before they do (saveAttrs,
// saveCrypto). Copying the whole mkey (288 bytes) was a tenth of a
// template configuration with a doorbell each.
//
// The fields a batch never changes (LKey, Flags, NumDesc, the PSVs,
// sigErrs) are not saved; TestRollbackCoversMkey holds every field of
// Mkey to one of these groups.
type touchedMkey struct {
	m *Mkey

	length                  uint64
	sig                     SigState
	crypto                  CryptoState
	errCount, taken         uint32
	errCountUpdated         bool
	attrsSaved, cryptoSaved bool

	mem, wire           Domain
	sigFlags            mlx.SigBlockAttrFlags
	checkMask, copyMask uint8
	attrTag             uint64
	cryptoAttr          mlx.CryptoAttr
}

// touch remembers an mkey's state before the batch changes it. The
// test of a batch's later configurations of one mkey inlines; callers
// call touchFirst before it, which inlines too: a batch of one
// configuration takes that case every time (one function would not
// inline).
func (c *Chain) touch(m *Mkey) {
	if len(c.touched) != 1 || c.touched[0].m != m {
		c.touchSlow(m)
	}
}

// touchFirst records m when the batch has touched no mkey yet and the
// list has room (after the first batch), and reports whether it did.
func (c *Chain) touchFirst(m *Mkey) bool {
	if len(c.touched) != 0 || cap(c.touched) == 0 {
		return false
	}
	c.touched = c.touched[:1]
	c.touched[0].save(m)
	c.unknownTouched = c.unknownTouched || m.Unknown
	return true
}

func (c *Chain) touchSlow(m *Mkey) {
	if c.touchedEntry(m) != nil {
		return
	}
	// Grown in place: append of a composite literal builds the entry on
	// the stack and copies it again.
	n := len(c.touched)
	if n == cap(c.touched) {
		c.touched = append(c.touched, touchedMkey{})
	} else {
		c.touched = c.touched[:n+1]
	}
	c.touched[n].save(m)
	c.unknownTouched = c.unknownTouched || m.Unknown
}

// save records m's state, but for the attributes (saveAttrs and
// saveCrypto save them when a call changes them).
func (e *touchedMkey) save(m *Mkey) {
	e.m = m
	e.length, e.sig, e.crypto = m.Length, m.Sig, m.Crypto
	e.errCount, e.taken, e.errCountUpdated = m.ErrCount, m.taken, m.ErrCountUpdated
	e.attrsSaved, e.cryptoSaved = false, false
}

// touchedEntry returns m's entry (nil when the batch has not touched m: a
// Post form's configuration, which has nothing to roll back).
func (c *Chain) touchedEntry(m *Mkey) *touchedMkey {
	for i := range c.touched {
		if c.touched[i].m == m {
			return &c.touched[i]
		}
	}
	return nil
}

// saveAttrs saves m's signature attributes before the batch first
// changes them.
func (c *Chain) saveAttrs(m *Mkey) {
	if e := c.touchedEntry(m); e != nil && !e.attrsSaved {
		e.mem, e.wire = m.Mem, m.Wire
		e.sigFlags, e.checkMask, e.copyMask, e.attrTag = m.SigFlags, m.CheckMask, m.CopyMask, m.attrTag
		e.attrsSaved = true
	}
}

// saveCrypto saves m's crypto attributes before the batch first changes
// them.
func (c *Chain) saveCrypto(m *Mkey) {
	if e := c.touchedEntry(m); e != nil && !e.cryptoSaved {
		e.cryptoAttr = m.CryptoAttr
		e.cryptoSaved = true
	}
}

// forget restores the mkeys a failed or aborted batch configured (nothing
// was posted) and marks them unknown: the man pages require their next
// configuration to set or reset the signature and crypto attributes.
// libmlx5 keeps the half-applied state instead (and can lose a pending
// signature-error update); see spec/RULES.md.
func (c *Chain) forget() {
	for i := len(c.touched) - 1; i >= 0; i-- {
		e := &c.touched[i]
		m := e.m
		m.Length, m.Sig, m.Crypto = e.length, e.sig, e.crypto
		m.ErrCount, m.taken, m.ErrCountUpdated = e.errCount, e.taken, e.errCountUpdated
		if e.attrsSaved {
			m.Mem, m.Wire = e.mem, e.wire
			m.SigFlags, m.CheckMask, m.CopyMask, m.attrTag = e.sigFlags, e.checkMask, e.copyMask, e.attrTag
		}
		if e.cryptoSaved {
			m.CryptoAttr = e.cryptoAttr
		}
		m.Unknown = true
	}
	c.touched = c.touched[:0]
	c.unknownTouched = false
}

// succeed accepts what the batch did to its mkeys.
func (c *Chain) succeed() {
	if c.unknownTouched { // else every touched mkey's Unknown is false already
		for i := range c.touched {
			c.touched[i].m.Unknown = false
		}
		c.unknownTouched = false
	}
	c.touched = c.touched[:0]
}
