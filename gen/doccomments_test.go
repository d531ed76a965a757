package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDocComments fails on an exported symbol of the generated packages
// (type, function, method, constant, variable, field of an exported
// struct) that has no doc comment: go doc is the generated API's manual.
// A constant or variable may share its group's comment.
func TestDocComments(t *testing.T) {
	for _, pkg := range []string{"mlx5dv", "mlx5rules"} {
		for _, m := range undocumented(t, filepath.Join("..", "generated", pkg)) {
			t.Errorf("%s: %s has no doc comment", pkg, m)
		}
	}
}

// TestDocCommentsCheck makes sure the check finds what it should.
func TestDocCommentsCheck(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// Documented is.
type Documented struct {
	// A is.
	A int
	B int
}

type Bare int

func (Bare) M() {}

// F is.
func F() {}

const (
	X = 1
)

// Group.
const (
	Y = 2
)

var unexported int
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(undocumented(t, dir), "; ")
	want := "p.go:7:2: field Documented.B; p.go:10:6: type Bare; p.go:12:13: method Bare.M; p.go:18:2: X"
	if got != want {
		t.Errorf("undocumented:\n got %s\nwant %s", got, want)
	}
}

// undocumented lists the exported symbols of the package in dir that have
// no doc comment, with their positions.
func undocumented(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	report := func(pos token.Pos, what string) {
		p := fset.Position(pos)
		out = append(out, filepath.Base(p.Filename)+":"+itoa(p.Line)+":"+itoa(p.Column)+": "+what)
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() || d.Doc != nil {
						continue
					}
					if d.Recv == nil {
						report(d.Name.Pos(), "func "+d.Name.Name)
					} else if r := recvName(d.Recv.List[0].Type); ast.IsExported(r) {
						report(d.Name.Pos(), "method "+r+"."+d.Name.Name)
					}
				case *ast.GenDecl:
					genDecl(d, report)
				}
			}
		}
	}
	return out
}

func genDecl(d *ast.GenDecl, report func(token.Pos, string)) {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			if s.Doc == nil && (d.Doc == nil || d.Lparen.IsValid()) {
				report(s.Name.Pos(), "type "+s.Name.Name)
			}
			if st, ok := s.Type.(*ast.StructType); ok {
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						if n.IsExported() && fl.Doc == nil && fl.Comment == nil {
							report(n.Pos(), "field "+s.Name.Name+"."+n.Name)
						}
					}
				}
			}
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
					report(n.Pos(), n.Name)
				}
			}
		}
	}
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvName(e.X)
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }
