package sigblock

// The passes over a transfer: the domain that has a signature field gets it
// generated and inserted, checked, or checked and stripped. Blocks are
// numbered from first (the reference tag of block n is RefTagOf(n)). [ledger: sig-ref-tag-numbering]

// Generate writes data into dst with each block's signature field after
// it: the device generating and inserting. data must hold whole blocks and
// dst len(data)/BlockSize strides. It returns the bytes written.
func (d *Domain) Generate(dst, data []byte, first uint64) (int, error) {
	if err := d.Validate(); err != nil {
		return 0, err
	}
	if d.Kind == KindNone {
		if len(dst) < len(data) {
			return 0, ErrShort
		}
		return copy(dst, data), nil
	}
	bs, ts := d.BlockSize, d.TupleSize()
	if len(data)%bs != 0 {
		return 0, ErrLength
	}
	blocks := len(data) / bs
	if len(dst) < blocks*(bs+ts) {
		return 0, ErrShort
	}
	w := 0
	for i := 0; i < blocks; i++ {
		blk := data[i*bs : (i+1)*bs]
		copy(dst[w:], blk)
		d.PutTuple(dst[w+bs:w+bs+ts], blk, first+uint64(i))
		w += bs + ts
	}
	return w, nil
}

// Check checks every block of buf (blocks each followed by its field) with
// check_mask and returns the first that fails (Error.Failed 0: none did).
func (d *Domain) Check(buf []byte, first uint64, mask uint8) (Error, error) {
	return d.pass(nil, buf, first, mask)
}

// Strip checks buf as Check does and copies the blocks' data, without
// their fields, to dst; a failed block is still copied (the device records
// the error on the mkey and completes the transfer). It returns the bytes [ledger: sig-error-moves-data]
// written.
func (d *Domain) Strip(dst, buf []byte, first uint64, mask uint8) (int, Error, error) {
	if d.Kind == KindNone {
		if len(dst) < len(buf) {
			return 0, Error{}, ErrShort
		}
		return copy(dst, buf), Error{}, nil
	}
	e, err := d.pass(dst, buf, first, mask)
	if err != nil {
		return 0, e, err
	}
	return len(buf) / d.Stride() * d.BlockSize, e, nil
}

func (d *Domain) pass(dst, buf []byte, first uint64, mask uint8) (Error, error) {
	if err := d.Validate(); err != nil {
		return Error{}, err
	}
	if d.Kind == KindNone {
		return Error{}, nil
	}
	bs, st := d.BlockSize, d.Stride()
	if len(buf)%st != 0 {
		return Error{}, ErrLength
	}
	blocks := len(buf) / st
	if dst != nil && len(dst) < blocks*bs {
		return Error{}, ErrShort
	}
	var failed Error
	for i := 0; i < blocks; i++ {
		blk := buf[i*st : i*st+bs]
		if dst != nil {
			copy(dst[i*bs:], blk)
		}
		if failed.Failed != 0 {
			continue
		}
		e := d.checkTuple(blk, buf[i*st+bs:(i+1)*st], first+uint64(i), mask, st-bs)
		if e.Failed != 0 {
			e.Offset = uint64(i * st)
			failed = e
		}
	}
	return failed, nil
}
