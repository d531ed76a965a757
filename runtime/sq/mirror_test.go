package sq

import (
	"reflect"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// TestMkeyMirrorsChecker: Mkey is converted to the checker's mkey by
// pointer (Mkey.check), so the two must agree field by field: the same
// names in the same order, at the same offsets, of the same types or of
// mirrored ones (Domain, SigState, CryptoState), recursively.
func TestMkeyMirrorsChecker(t *testing.T) {
	mirrors := map[reflect.Type]reflect.Type{
		reflect.TypeFor[Mkey]():        reflect.TypeFor[wrcheck.Mkey](),
		reflect.TypeFor[Domain]():      reflect.TypeFor[wrcheck.Domain](),
		reflect.TypeFor[SigState]():    reflect.TypeFor[wrcheck.SigState](),
		reflect.TypeFor[CryptoState](): reflect.TypeFor[wrcheck.CryptoState](),
	}
	for a, b := range mirrors {
		if err := sameLayout(a, b, mirrors); err != "" {
			t.Errorf("%v does not mirror %v: %s", a, b, err)
		}
	}
}

// sameLayout reports how a and b differ ("" if they do not).
func sameLayout(a, b reflect.Type, mirrors map[reflect.Type]reflect.Type) string {
	if m, ok := mirrors[a]; ok && m != b {
		return "mirrors " + m.String()
	} else if !ok && a != b {
		return "a different type, " + b.String()
	}
	if a.Size() != b.Size() || a.Align() != b.Align() || a.Kind() != b.Kind() {
		return "a different size, alignment or kind"
	}
	if a.Kind() != reflect.Struct {
		return ""
	}
	if a.NumField() != b.NumField() {
		return "a different number of fields"
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Offset != fb.Offset {
			return "field " + fa.Name + " is " + fb.Name + " there, or elsewhere"
		}
		if err := sameLayout(fa.Type, fb.Type, mirrors); err != "" {
			return "field " + fa.Name + ": " + err
		}
	}
	return ""
}

// TestMkeyConversionSharesState: what the checker writes through the
// converted pointer is what the caller reads, and the poller's counter
// (unexported) travels with it.
func TestMkeyConversionSharesState(t *testing.T) {
	m := NewMkey(0x1200, 0, 5)
	if m.NumDesc != 8 || m.LKey != 0x1200 {
		t.Fatalf("NewMkey: %+v", m)
	}
	m.check().Length = 4096
	m.SigError()
	if m.Length != 4096 || m.PendingSigErrs() != 1 {
		t.Fatalf("after the checker's writes: length %d, pending %d", m.Length, m.PendingSigErrs())
	}
	var nilMk *Mkey
	if nilMk.check() != nil {
		t.Fatal("a nil Mkey converts to a non-nil checker mkey")
	}
}
