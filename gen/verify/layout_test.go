package verify

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// committedVersion is the rdma-core release generated/mlx5dv is generated
// from (see generated/generate.go).
const committedVersion = "44.0"

// TestSegmentLayoutMatchesC checks every header segment of the generated
// package against gcc through cgo: the size of the Go type against sizeof,
// and, for every field, where the generated setter actually writes against
// offsetof and sizeof of the C member.
func TestSegmentLayoutMatchesC(t *testing.T) {
	root, err := rdmacore.IncludeRoot(".", committedVersion)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
	if err != nil {
		t.Fatal(err)
	}

	var c bytes.Buffer
	c.WriteString("#include <stddef.h>\n#include <stdio.h>\n#include <infiniband/mlx5dv.h>\nstatic void dump(void) {\n")
	for _, sg := range res.Package.Segments {
		if sg.Private != "" {
			continue // not in the public header: the vectors test these
		}
		ct := "struct " + sg.CName
		if sg.Union {
			ct = "union " + sg.CName
		}
		fmt.Fprintf(&c, "\tprintf(\"%s %%zu\\n\", sizeof(%s));\n", sg.CName, ct)
		for _, f := range sg.Fields {
			fmt.Fprintf(&c, "\tprintf(\"%s.%s %%zu %%zu\\n\", offsetof(%s, %s), sizeof(((%s *)0)->%s));\n",
				sg.CName, f.CName, ct, f.CName, ct, f.CName)
		}
	}
	c.WriteString("\tfflush(stdout);\n}\n")
	prog := "package main\n\n/*\n" + c.String() + "*/\nimport \"C\"\n\nfunc main() { C.dump() }\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+root, "GO111MODULE=on", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run (cgo layout program): %v\n%s", err, stderr.String())
	}
	want := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		want[k] = v
	}

	checked := 0
	for _, sg := range res.Package.Segments {
		if sg.Private != "" {
			continue
		}
		buf := make([]byte, sg.Size)
		view, ok := mlx5dv.SegmentView(sg.CName, buf)
		if !ok {
			t.Errorf("%s: the generated package has no view", sg.CName)
			continue
		}
		if got := fmt.Sprint(reflect.ValueOf(view).Elem().Len()); got != want[sg.CName] {
			t.Errorf("%s: Go type is %s bytes, sizeof says %s", sg.CName, got, want[sg.CName])
		}
		for _, f := range sg.Fields {
			clear(buf)
			fill(t, view, f)
			lo, hi := bytes.IndexByte(buf, 0xff), bytes.LastIndexByte(buf, 0xff)
			if lo < 0 || bytes.Count(buf[lo:hi+1], []byte{0xff}) != hi-lo+1 {
				t.Errorf("%s.%s: the setter wrote %x", sg.CName, f.CName, buf)
				continue
			}
			got := fmt.Sprintf("%d %d", lo, hi-lo+1)
			if k := sg.CName + "." + f.CName; got != want[k] {
				t.Errorf("%s: the generated setter writes bytes at offset,size %s; C says %s", k, got, want[k])
			}
			checked++
		}
	}
	t.Logf("%d header segments, %d fields checked against offsetof/sizeof", len(want)-checked, checked)
	if checked < 100 {
		t.Errorf("only %d fields checked", checked)
	}
}

// fill sets every bit of field f through the generated accessors.
func fill(t *testing.T, view any, f *model.Field) {
	v := reflect.ValueOf(view)
	switch f.Kind {
	case model.IntField:
		m := v.MethodByName("Set" + f.GoName)
		m.Call([]reflect.Value{reflect.ValueOf(^uint64(0)).Convert(m.Type().In(0))})
	case model.IntArray:
		m := v.MethodByName("Set" + f.GoName)
		for i := 0; i < f.Len; i++ {
			m.Call([]reflect.Value{reflect.ValueOf(i), reflect.ValueOf(^uint64(0)).Convert(m.Type().In(1))})
		}
	case model.BytesField, model.NestedField:
		a := v.MethodByName(f.GoName).Call(nil)[0].Elem()
		for i := 0; i < a.Len(); i++ {
			a.Index(i).SetUint(0xff)
		}
	}
}
