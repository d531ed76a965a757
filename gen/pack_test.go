package gen_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/emit"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// packedRoot copies rdma-core 44.0's headers with before and after around
// struct mlx5dv_qp_init_attr and attr (an attribute, or "") after its
// closing brace, and returns the include root and the line of mlx5dv.h
// where before starts.
func packedRoot(t *testing.T, before, after, attr string) (string, int) {
	t.Helper()
	src, err := rdmacore.IncludeRoot(".", committed)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "infiniband", "mlx5dv.h")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	const head = "struct mlx5dv_qp_init_attr {"
	i := strings.Index(h, head)
	j := i + strings.Index(h[i:], "};\n") + 3
	if i < 0 || j < i+3 {
		t.Fatal("mlx5dv_qp_init_attr not found as expected")
	}
	line := strings.Count(h[:i], "\n") + 1
	if attr != "" {
		h = h[:j-3] + "} " + attr + ";\n" + h[j:]
		j += len(attr) + 1
	}
	h = h[:i] + before + h[i:j] + after + h[j:]
	if err := os.WriteFile(path, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, line
}

// TestPackedMirror generates the package with #pragma pack forms around
// mlx5dv_qp_init_attr: a form that leaves a field where its Go type
// cannot be is refused at the pragma that packs the struct; any other
// generates a package that type-checks, whose mirror has the C model's
// offsets and size, which are gcc's (checked here with gcc when present).
func TestPackedMirror(t *testing.T) {
	forms := []struct {
		name, before, after string
		at                  int // the line of before that packs the struct; 0: generated
		pack                int
	}{
		{"pack 1", "#pragma pack(1)\n", "#pragma pack()\n", 1, 1},
		{"pack 2", "#pragma pack(2)\n", "#pragma pack()\n", 1, 2},
		{"pack 4", "#pragma pack(4)\n", "#pragma pack()\n", 1, 4},
		{"push 1, pop", "#pragma pack(push, 1)\n", "#pragma pack(pop)\n", 1, 1},
		{"push id 2, push 8, pop", "#pragma pack(push, r, 2)\n#pragma pack(push, 8)\n#pragma pack(pop)\n", "#pragma pack(pop, r)\n", 1, 2},
		{"push 1, push 4, pop, push", "#pragma pack(push, 1)\n#pragma pack(push, 4)\n#pragma pack(pop)\n#pragma pack(push)\n", "#pragma pack(pop)\n#pragma pack(pop)\n", 1, 1},
		// A _Pragma has no position: the struct (the line after it) is named.
		{"_Pragma push 2", "_Pragma(\"pack(push, 2)\")\n", "_Pragma(\"pack(pop)\")\n", 2, 2},
		{"pack 8", "#pragma pack(8)\n", "#pragma pack()\n", 0, 8},
		{"push 16, pop", "#pragma pack(push, 16)\n", "#pragma pack(pop)\n", 0, 16},
		{"push 1, pack 8, pop", "#pragma pack(push, 1)\n#pragma pack(8)\n", "#pragma pack(pop)\n", 0, 8},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			root, line := packedRoot(t, f.before, f.after, "")
			res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Version: committed})
			if f.at != 0 {
				want := fmt.Sprintf("infiniband/mlx5dv.h:%d:", line+f.at-1)
				if err == nil || !strings.Contains(err.Error(), want) ||
					!strings.Contains(err.Error(), fmt.Sprintf("pack(%d)", f.pack)) ||
					(!strings.HasPrefix(f.before, "_Pragma") && !strings.Contains(err.Error(), fmt.Sprintf("#pragma pack(%d) at %s", f.pack, want))) ||
					!strings.Contains(err.Error(), "struct mlx5dv_qp_init_attr") {
					t.Fatalf("error %v, want struct mlx5dv_qp_init_attr refused at %s (the pragma)", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := res.C.Struct("mlx5dv_qp_init_attr")
			if r.Pack != int64(f.pack) {
				t.Errorf("pack %d in force, want %d", r.Pack, f.pack)
			}
			checkMirror(t, res, root, "mlx5dv_qp_init_attr")
		})
	}
}

// TestPackedAttributeMirror: the packed attribute on
// mlx5dv_qp_init_attr (with or without an alignment) leaves dc_init_attr
// at offset 12; there is no pragma to name, so the struct is refused at
// its own position, naming the attribute.
func TestPackedAttributeMirror(t *testing.T) {
	for _, attr := range []string{"__attribute__((packed))", "__attribute__((packed, aligned(8)))"} {
		t.Run(attr, func(t *testing.T) {
			t.Parallel()
			root, line := packedRoot(t, "", "", attr)
			_, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Version: committed})
			want := fmt.Sprintf("infiniband/mlx5dv.h:%d:1: struct mlx5dv_qp_init_attr: field dc_init_attr at offset 12", line)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "__attribute__((packed)) packs it") {
				t.Fatalf("error %v, want %s ... __attribute__((packed)) packs it", err, want)
			}
		})
	}
}

// checkMirror compares the mirror of struct name with the C model and,
// when gcc is installed, with gcc.
func checkMirror(t *testing.T, res *gen.Result, root, name string) {
	r := res.C.Struct(name)
	for _, m := range res.Package.API.Mirrors {
		if m.CName != name {
			continue
		}
		if m.Size != r.Size {
			t.Errorf("mirror: %d bytes, the model %d", m.Size, r.Size)
		}
		want := []int64{r.Size}
		prog := "#include <stdio.h>\n#include <stddef.h>\n#include <infiniband/mlx5dv.h>\nint main(void) {\n" +
			fmt.Sprintf("\tprintf(\"%%zu\\n\", sizeof(struct %s));\n", name)
		for i, mf := range m.Fields {
			if off := r.Fields[i].Offset(); mf.Offset != off {
				t.Errorf("mirror: %s at %d, the model at %d", mf.CName, mf.Offset, off)
			}
			want = append(want, mf.Offset)
			prog += fmt.Sprintf("\tprintf(\"%%zu\\n\", offsetof(struct %s, %s));\n", name, mf.CName)
		}
		gccOffsets(t, root, prog+"\treturn 0;\n}\n", want)
		return
	}
	t.Fatalf("no mirror of %s", name)
}

// gccOffsets runs prog built by gcc and compares the numbers it prints.
func gccOffsets(t *testing.T, root, prog string, want []int64) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Log("gcc not installed: offsets compared with the model only")
		return
	}
	dir := t.TempDir()
	c, exe := filepath.Join(dir, "off.c"), filepath.Join(dir, "off")
	if err := os.WriteFile(c, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-I", root, "-o", exe, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(want) {
		t.Fatalf("gcc printed %q, want %d numbers", out, len(want))
	}
	for i, g := range got {
		if n, err := strconv.ParseInt(g, 10, 64); err != nil || n != want[i] {
			t.Errorf("gcc: number %d is %s, the mirror %d (size, then offsets)", i, g, want[i])
		}
	}
}

// TestTypeErrorWritesNothing forces a type error into the generated
// package: Generate refuses it with the offending file:line:col, and the
// previous output, written by an earlier run, stays byte-identical.
func TestTypeErrorWritesNothing(t *testing.T) {
	root, err := rdmacore.IncludeRoot(".", committed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := gen.Config{IncludeRoot: root, Spec: specfiles.FS, Version: committed}
	res, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "mlx5dv")
	if _, err := gen.WriteOutput(gen.OS, gen.Output{Dir: dir, Files: res.Files}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	gen.SetTypeCheckHook(func(r *gen.Result) {
		for i, f := range r.Files {
			if f.Name == "mirrors.go" {
				c := append(bytes.Clone(f.Content), "\nvar _ int = \"not an int\"\n"...)
				r.Files[i] = emit.File{Name: f.Name, Content: c}
			}
		}
	})
	defer gen.SetTypeCheckHook(nil)
	line := bytes.Count(mirrorsOf(res), []byte("\n")) + 2
	bad, err := gen.Generate(cfg)
	want := fmt.Sprintf("mlx5dv/mirrors.go:%d:13: cannot use \"not an int\"", line)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("error %v, want one naming %s", err, want)
	}
	if bad != nil {
		t.Error("a result with the error")
	}
	if after := snapshot(t, dir); !maps.Equal(after, before) {
		t.Error("the previous output changed")
	}
}

func mirrorsOf(res *gen.Result) []byte {
	for _, f := range res.Files {
		if f.Name == "mirrors.go" {
			return f.Content
		}
	}
	return nil
}
