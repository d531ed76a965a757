package replay

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cName finds the C functions (and ibv_qp_ex fields) a method's doc says
// it mirrors.
var cName = regexp.MustCompile(`\b(ibv_wr_[a-z0-9_]+|mlx5dv_wr_[a-z0-9_]+|ibv_qp_ex\.wr_[a-z_]+)\b`)

// TestDrivesEverySQBuilder lists runtime/sq's exported methods and the C
// function each mirrors (its doc names it): the replay must drive every
// one, so a vector can exercise every builder and setter.
func TestDrivesEverySQBuilder(t *testing.T) {
	// Methods whose doc names no C function.
	other := map[string]string{
		"Start":     "ibv_wr_start",
		"Complete":  "ibv_wr_complete",
		"Abort":     "ibv_wr_abort",
		"Completed": "(simulated) all outstanding send completions polled",
		// Not calls: state accessors, and compositions of the calls
		// above, checked byte for byte against them in runtime/sq
		// (TestBurstMatchesCalls, the template tests).
		"Chain": "", "CurPost": "", "Head": "", "Outstanding": "", "Retire": "", "Acquire": "", "Reset": "", "FmCache": "", "BFOffset": "",
		"RDMAWriteBurst": "", "ConfigureMkey": "",
		// Not a call: detaches the writer when its QP is destroyed.
		"Close": "",
	}
	drives := Functions()
	fset := token.NewFileSet()
	files, _ := filepath.Glob("../../runtime/sq/*.go")
	n := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); !ok || star.X.(*ast.Ident).Name != "SQ" {
				continue
			}
			n++
			name := fd.Name.Name
			fns := cName.FindAllString(fd.Doc.Text(), -1)
			if fn, ok := other[name]; ok {
				if fn != "" {
					fns = append(fns, fn)
				}
			} else if len(fns) == 0 {
				t.Errorf("sq.%s names no C function in its doc, and the test does not know it", name)
			}
			for _, fn := range fns {
				if !slices.Contains(drives, fn) {
					t.Errorf("sq.%s mirrors %s, which replay cannot drive", name, fn)
				}
			}
		}
	}
	if n < 30 {
		t.Fatalf("found %d exported methods of *sq.SQ", n)
	}
}

// TestDrivesEveryVectorFunction: every function the vectors' README
// describes is one the replay drives, but those libmlx5 does not
// implement.
func TestDrivesEveryVectorFunction(t *testing.T) {
	b, err := os.ReadFile("../../testdata/vectors/README.md")
	if err != nil {
		t.Fatal(err)
	}
	notProduced := []string{"ibv_wr_atomic_write"} // "not implemented by mlx5"
	drives := Functions()
	for _, fn := range cName.FindAllString(string(b), -1) {
		if !slices.Contains(drives, fn) && !slices.Contains(notProduced, fn) {
			t.Errorf("the vectors' README describes %s, which replay cannot drive", fn)
		}
	}
	for _, fn := range []string{"ibv_wr_bind_mw", "(simulated) all outstanding send completions polled", "(simulated) signature-error CQE polled for the mkey"} {
		if !slices.Contains(drives, fn) {
			t.Errorf("replay cannot drive %s", fn)
		}
	}
}
