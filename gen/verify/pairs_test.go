package verify

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// TestPairSettersMatchFieldSetters: every setter of two adjacent 32-bit
// fields in one store (SetByteCountLKey, ...), and its ...BE form, writes
// what the two field setters write, and nothing else.
func TestPairSettersMatchFieldSetters(t *testing.T) {
	root, err := rdmacore.IncludeRoot(".", committedVersion)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, sg := range res.Package.Segments {
		for i := 0; i+1 < len(sg.Fields); i++ {
			a, b := sg.Fields[i], sg.Fields[i+1]
			one, two := make([]byte, sg.Size), make([]byte, sg.Size)
			v1, ok1 := mlx5dv.SegmentView(sg.CName, one)
			v2, ok2 := mlx5dv.SegmentView(sg.CName, two)
			if !ok1 || !ok2 {
				continue
			}
			pair := reflect.ValueOf(v1).MethodByName("Set" + a.GoName + b.GoName)
			if !pair.IsValid() {
				continue
			}
			x, y := uint32(0x11223344), uint32(0x55667788)
			pair.Call([]reflect.Value{reflect.ValueOf(x), reflect.ValueOf(y)})
			reflect.ValueOf(v2).MethodByName("Set" + a.GoName).Call([]reflect.Value{reflect.ValueOf(x)})
			reflect.ValueOf(v2).MethodByName("Set" + b.GoName).Call([]reflect.Value{reflect.ValueOf(y)})
			if !bytes.Equal(one, two) {
				t.Errorf("%s: Set%s%s wrote % x; Set%s, Set%s % x", sg.CName, a.GoName, b.GoName, one, a.GoName, b.GoName, two)
			}
			clear(one)
			reflect.ValueOf(v1).MethodByName("Set" + a.GoName + b.GoName + "BE").Call([]reflect.Value{reflect.ValueOf(mlx5dv.ToBE64(uint64(x)<<32 | uint64(y)))})
			if !bytes.Equal(one, two) {
				t.Errorf("%s: Set%s%sBE wrote % x; Set%s, Set%s % x", sg.CName, a.GoName, b.GoName, one, a.GoName, b.GoName, two)
			}
			checked[sg.GoName+".Set"+a.GoName+b.GoName] = true
			i++
		}
	}
	for _, must := range []string{"WQECtrlSeg.SetOpmodIdxOpcodeQPNDS", "WQERaddrSeg.SetRKeyReserved", "WQEDataSeg.SetByteCountLKey"} {
		if !checked[must] {
			t.Errorf("%s was not checked", must)
		}
	}
	t.Logf("%d pair setters checked", len(checked))
}
