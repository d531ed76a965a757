package alias

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestBaseUpToDate: the embedded manifest describes the committed package.
func TestBaseUpToDate(t *testing.T) {
	m, err := BuildDir("../../generated/mlx5dv")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, baseJSON) {
		t.Fatal("gen/alias/base.json is stale: run go generate ./generated/")
	}
	if len(m.Types) < 100 {
		t.Fatalf("the manifest has %d types", len(m.Types))
	}
}

// The committed package's source of a package generated elsewhere.
const basePath = "github.com/mlx5gen/mlx5gen/generated/mlx5dv"

// goldens reads the generator's whole output for an rdma-core release.
// committed is the release generated/mlx5dv is generated from; its output
// is that package, not a golden copy.
const committed = "44.0"

func goldens(t *testing.T, v string) []File {
	t.Helper()
	dir := filepath.Join("../../golden", v)
	if v == committed {
		dir = "../../generated/mlx5dv"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, e := range entries {
		// golden/<v>/mlx5verbs holds the bindings; only Go files (or their
		// goldens) are output: the generate lock (.mlx5gen.lock) a
		// `go generate` leaves beside them is not.
		n := e.Name()
		if strings.HasSuffix(n, "_test.go") || e.IsDir() || !strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, ".go.golden") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{Name: strings.TrimSuffix(e.Name(), ".golden"), Content: b})
	}
	return files
}

// TestGoldens: the 44.0 output aliases every exported type (it is the
// committed package); newer releases alias what the runtime takes and
// keep local what changed (a function table with a new entry, mirrors
// whose validation accepts new flags or enum members (mlx5dv_alloc_dm_attr),
// mirrors of structs that gained fields: ibv_port_attr, mlx5dv_context,
// mlx5dv_context_attr, mlx5dv_obj; and structs 44.0 lacks:
// mlx5dv_ooo_recv_wrs_caps, mlx5dv_export_sizes).
func TestGoldens(t *testing.T) {
	base, err := Base()
	if err != nil {
		t.Fatal(err)
	}
	runtime := []string{"SendFlags", "AccessFlags", "WROpcode", "Opcode", "QPType", "RuleError",
		"WQECtrlSeg", "WQEDataSeg", "MkeyConfAttr", "SigBlockAttr", "SGE", "BE32"}
	for _, tc := range []struct {
		version string
		local   []string
	}{
		{"44.0", nil},
		{"56.1", []string{"AllocDMAttr", "Context", "Devx", "DevxUmemIn", "Obj", "OooRecvWrsCaps", "PortAttr", "QPAttr", "QPInitAttr"}},
		{"65.0", []string{"AllocDMAttr", "Context", "ContextAttr", "ContextAttrCompMask", "Devx", "DevxUmemIn", "ExportSizes", "FlowActionAttr", "FlowMatcherAttr", "Obj", "OooRecvWrsCaps", "PortAttr", "QPAttr", "QPInitAttr"}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			out, d, err := Apply(goldens(t, tc.version), base, basePath)
			if err != nil {
				t.Fatal(err)
			}
			var local []string
			for n := range d.Local {
				local = append(local, n)
			}
			sort.Strings(local)
			if !reflect.DeepEqual(local, tc.local) {
				t.Errorf("declared here: %v (%v), want %v", local, d.Local, tc.local)
			}
			aliased := map[string]bool{}
			for _, n := range d.Aliased {
				aliased[n] = true
			}
			for _, n := range runtime {
				if !aliased[n] {
					t.Errorf("%s is not an alias: %s", n, d.Local[n])
				}
			}
			checkRewritten(t, out, aliased)
			typeCheck(t, "example.com/app/mlx5dv", buildable(t, out), basePkg(t))
		})
	}
}

// buildable keeps the files that build on this machine (build tags).
func buildable(t *testing.T, files []File) []File {
	t.Helper()
	dir := t.TempDir()
	var out []File
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Content, 0o644); err != nil {
			t.Fatal(err)
		}
		if ok, err := build.Default.MatchFile(dir, f.Name); err != nil {
			t.Fatal(err)
		} else if ok {
			out = append(out, f)
		}
	}
	return out
}

// basePkg type-checks the committed package from its source.
func basePkg(t *testing.T) *types.Package {
	t.Helper()
	dir := "../../generated/mlx5dv"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, e := range entries {
		// golden/<v>/mlx5verbs holds the bindings; only Go files (or their
		// goldens) are output: the generate lock (.mlx5gen.lock) a
		// `go generate` leaves beside them is not.
		n := e.Name()
		if strings.HasSuffix(n, "_test.go") || e.IsDir() || !strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, ".go.golden") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{e.Name(), b})
	}
	return typeCheck(t, basePath, buildable(t, files), nil)
}

// checkRewritten: every aliased type is declared as an alias of the base
// and has no method left; the summary file names the local types.
func checkRewritten(t *testing.T, files []File, aliased map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, f := range files {
		af, err := parser.ParseFile(fset, f.Name, f.Content, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && aliased[recvName(d.Recv.List[0].Type)] {
					t.Errorf("%s: method %s of aliased type %s left", f.Name, d.Name.Name, recvName(d.Recv.List[0].Type))
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok && aliased[ts.Name.Name] {
						if !ts.Assign.IsValid() {
							t.Errorf("%s: %s is not an alias", f.Name, ts.Name.Name)
						}
						seen[ts.Name.Name] = true
					}
				}
			}
		}
	}
	if len(seen) != len(aliased) {
		t.Errorf("%d alias declarations for %d aliased types", len(seen), len(aliased))
	}
	last := files[len(files)-1]
	if last.Name != SummaryName || !bytes.Contains(last.Content, []byte(`const AliasBase = "`+basePath+`"`)) {
		t.Errorf("no summary file: %s\n%s", last.Name, last.Content)
	}
}

const synthBase = `// Code generated by mlx5gen; DO NOT EDIT.

package p

import "strings"

// E is an enum.
type E uint8

const (
	A E = 1
	B E = 2
)

// String names e.
func (e E) String() string { return strings.Repeat("e", int(e)) }

type S struct {
	X E
	y int
}

func (s *S) Get() E { return s.X }

// A layout check: it would not compile with S an alias (y is unexported
// there), which is why Apply drops it.
func _() { _ = S{}.y }

type W uint16

const (
	W0 W = iota
	W1
)

type (
	// U is in a group.
	U struct{ V W }
	T int
)

type K struct{ N int }

func (k K) M() int { return k.N }
`

// TestDecide: a new member keeps an enum an alias; a changed value, a
// shifted iota, a changed method or a new type keeps a type local, and so
// does a type that mentions a local one. The rewritten package
// type-checks against the base, with the base's types.
func TestDecide(t *testing.T) {
	base, err := Build([]string{"p.go"}, [][]byte{[]byte(synthBase)})
	if err != nil {
		t.Fatal(err)
	}
	down := strings.NewReplacer(
		"B E = 2\n", "B E = 2\n\tC E = 3\n", // a new member
		`strings.Repeat("e", int(e))`, `strings.Repeat("f", int(e))`, // another String
		"W0 W = iota\n", "W00 W = iota\n\tW0\n", // W0 moves
		"return k.N", "return -k.N", // another method
		"type K struct", "type Z int\n\ntype K struct", // a new type
	).Replace(synthBase)
	out, d, err := Apply([]File{{"p.go", []byte(down)}}, base, "example.com/base")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Aliased, []string{"E", "S", "T"}) {
		t.Errorf("aliased %v, want [E S T]", d.Aliased)
	}
	for n, why := range map[string]string{"W": "W0 has another value", "U": "mentions W", "K": "methods differ", "Z": "no such type"} {
		if !strings.Contains(d.Local[n], why) {
			t.Errorf("%s: %q, want %q", n, d.Local[n], why)
		}
	}
	pkg := typeCheck(t, "example.com/down", out, typeCheck(t, "example.com/base", []File{{"p.go", []byte(synthBase)}}, nil))
	c := pkg.Scope().Lookup("C")
	if c == nil || types.Unalias(c.Type()).(*types.Named).Obj().Pkg().Path() != "example.com/base" {
		t.Errorf("C is not of the base's type E: %v", c)
	}
	if w := pkg.Scope().Lookup("W0"); types.Unalias(w.Type()).(*types.Named).Obj().Pkg().Path() != "example.com/down" {
		t.Errorf("W0 is of %v, want the local W", w.Type())
	}
	if bytes.Contains(out[0].Content, []byte(`"strings"`)) {
		t.Errorf("the import of strings, used only by E's String, is left:\n%s", out[0].Content)
	}
}

// typeCheck type-checks files as package path; base, if set, is the only
// package it may import besides the standard library.
func typeCheck(t *testing.T, path string, files []File, base *types.Package) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	var afs []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f.Name, f.Content, 0)
		if err != nil {
			t.Fatal(err)
		}
		afs = append(afs, af)
	}
	conf := types.Config{Importer: importerFunc(func(p string) (*types.Package, error) {
		if base != nil && p == base.Path() {
			return base, nil
		}
		return std.Import(p)
	})}
	pkg, err := conf.Check(path, fset, afs, nil)
	if err != nil {
		var src strings.Builder
		for _, f := range files {
			src.Write(f.Content)
		}
		t.Fatalf("%s: %v\n%s", path, err, src.String())
	}
	return pkg
}

// std imports the standard library, once for all packages checked, so
// that they share its types.
var std = importer.Default()

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(p string) (*types.Package, error) { return f(p) }

// TestApplyRefuses: an import path that cannot be one, and a file that
// does not parse, are errors.
func TestApplyRefuses(t *testing.T) {
	base := &Manifest{}
	for _, p := range []string{`a "b`, "", "a//b", "/a", "a/", "./a", "a b", `a\b`} {
		if _, _, err := Apply([]File{{"p.go", []byte(synthBase)}}, base, p); err == nil {
			t.Errorf("import path %q accepted", p)
		}
	}
	if _, _, err := Apply([]File{{"p.go", []byte("package p\nfunc (")}}, base, "x/y"); err == nil || !strings.Contains(err.Error(), "p.go") {
		t.Errorf("a file that does not parse: %v", err)
	}
}

// TestApplyEdits: edits apply in source order whatever their order, an
// insertion before a replacement at the same place.
func TestApplyEdits(t *testing.T) {
	got := applyEdits([]byte("type (\n\tU struct{}\n)"), []edit{
		{8, 18, "U = b.U"},
		{8, 8, "// note\n\t"},
		{0, 4, "TYPE"},
	})
	if want := "TYPE (\n\t// note\n\tU = b.U\n)"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
