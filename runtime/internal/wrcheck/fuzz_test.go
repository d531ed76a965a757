package wrcheck_test

import (
	"reflect"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// byteSource hands out fuzz bytes.
type byteSource struct{ b []byte }

func (s *byteSource) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	x := s.b[0]
	s.b = s.b[1:]
	return x
}

func (s *byteSource) uint64() uint64 {
	var v uint64
	for i := 0; i < 8; i++ {
		v = v<<8 | uint64(s.next())
	}
	return v
}

// fillRandom fills a mirror from fuzz bytes: integers, and pointers to
// mirrored structs (filled in turn) or nil; opaque pointers are nil or a
// dummy.
func fillRandom(v reflect.Value, s *byteSource, depth int) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(s.next()&1 == 1)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(s.uint64())
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
			f.SetInt(int64(s.uint64()))
		case reflect.Pointer:
			if depth < 3 && s.next()&1 == 1 {
				p := reflect.New(f.Type().Elem())
				fillRandom(p.Elem(), s, depth+1)
				f.Set(p)
			}
		case reflect.UnsafePointer:
			// Union pointers: point at a mirror of either member so that
			// the validator may follow them safely.
			if s.next()&1 == 1 {
				f.SetPointer(unsafe.Pointer(new([64]byte)))
			}
		case reflect.Struct:
			fillRandom(f, s, depth+1)
		case reflect.Array:
			for j := 0; j < f.Len(); j++ {
				if e := f.Index(j); e.CanSet() && e.Kind() == reflect.Uint8 {
					e.SetUint(uint64(s.next()))
				}
			}
		}
	}
}

var fuzzStructs = []string{
	"mlx5dv_sig_block_attr", "mlx5dv_sig_block_domain", "mlx5dv_sig_crc", "mlx5dv_sig_t10dif",
	"mlx5dv_crypto_attr", "mlx5dv_mkey_conf_attr", "mlx5dv_qp_init_attr", "mlx5dv_devx_umem_in",
	"mlx5dv_mkey_init_attr", "mlx5dv_dc_init_attr",
}

// FuzzValidators: any field values give nil or a *RuleError, never a
// panic.
func FuzzValidators(f *testing.F) {
	f.Add([]byte{0}, byte(0))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1}, byte(1))
	f.Fuzz(func(t *testing.T, data []byte, which byte) {
		name := fuzzStructs[int(which)%len(fuzzStructs)]
		v, ok := mlx.NewMirror(name)
		if !ok {
			t.Fatalf("no mirror %s", name)
		}
		fillRandom(reflect.ValueOf(v).Elem(), &byteSource{data}, 0)
		err := v.(interface{ Validate() error }).Validate()
		if _, isRule := err.(*mlx.RuleError); err != nil && !isRule {
			t.Fatalf("%s: %v is not a *RuleError", name, err)
		}
	})
}

// FuzzChain: any sequence of calls gives nil or a *RuleError, never a
// panic, and Complete always closes the batch.
func FuzzChain(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 9})
	f.Add([]byte{0, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &byteSource{data}
		qp := &wrcheck.QP{Type: mlx.QPType(1 << (s.next() % 6)), SendOps: mlx.IBVQPCreateSendOpsFlags(s.uint64()), MlxSendOps: mlx.QPCreateSendOpsFlags(s.uint64()),
			MaxInlineData: int(s.next()), MaxSendSGE: int(s.next() % 16), MaxMemcpy: s.uint64(),
			Streams: s.next()&1 == 1, LogNumConcurent: int(s.next() % 8)}
		c := wrcheck.New(qp)
		m := wrcheck.NewMkey(uint32(s.next()), mlx.MkeyInitAttrFlags(s.next()&0x1f), int(s.next()))
		sig := &mlx.SigBlockAttr{}
		fillRandom(reflect.ValueOf(sig).Elem(), s, 1)
		crypto := &mlx.CryptoAttr{}
		fillRandom(reflect.ValueOf(crypto).Elem(), s, 1)
		var ahObj [64]byte
		check := func(err error) {
			if _, ok := err.(*mlx.RuleError); err != nil && !ok {
				t.Fatalf("%v is not a *RuleError", err)
			}
		}
		// A setter's answer: an error, or whether the work request is whole.
		setter := func(_ bool, err error) { check(err) }
		// An mkey call's answer: an error, or what the UMR carries.
		umr := func(u *wrcheck.UMR, err error) {
			check(err)
			switch {
			case err != nil && u != nil:
				t.Fatalf("an error (%v) with a UMR to write", err)
			case u != nil && (u.Mkey != m || u.WRs < 1 || u.WRs > 3 || u.Xlat%64 != 0 || u.Xlat < 0):
				t.Fatalf("UMR %+v", u)
			}
		}
		for len(s.b) > 0 {
			fn := mlx.Func(int(s.next()) % int(mlx.NumFuncs))
			switch s.next() % 12 {
			case 0:
				check(c.Start())
			case 1:
				_, err := c.Complete(mlx.FnWRComplete)
				check(err)
			case 2:
				c.Abort()
			case 3:
				check(c.Builder(fn, uint32(s.next())))
			case 4:
				setter(c.Data(fn, int(s.next()), int(s.next())))
			case 5:
				mk, attr := m, &mlx.MkeyConfAttr{ConfFlags: mlx.MkeyConfFlags(s.next() & 3)}
				switch s.next() % 8 { // nil arguments are rule errors, never a panic
				case 0:
					mk = nil
				case 1:
					attr = nil
				}
				umr(c.MkeyConfigure(fn, uint32(s.next()), mk, uint8(s.next()), attr))
			case 6:
				umr(c.MkeyLayout(fn, wrcheck.Layout{Entries: int(s.next()), Length: s.uint64(), Interleaved: s.next()&1 == 1, Long: int(s.next() % 3)}))
			case 7:
				umr(c.MkeyAccess(fn, uint32(s.next())))
			case 8:
				if s.next()%8 == 0 {
					umr(c.MkeySigBlock(fn, nil))
				} else {
					umr(c.MkeySigBlock(fn, sig))
				}
			case 9:
				if s.next()%8 == 0 {
					umr(c.MkeyCrypto(fn, nil))
				} else {
					umr(c.MkeyCrypto(fn, crypto))
				}
			case 10:
				ah := unsafe.Pointer(&ahObj)
				if s.next()%8 == 0 {
					ah = nil
				}
				setter(c.DCAddr(fn, ah, int(s.next())-1))
			case 11:
				check(c.Memcpy(fn, uint32(s.next()), s.uint64()))
			}
		}
		_, err := c.Complete(mlx.FnWRComplete)
		check(err)
	})
}
