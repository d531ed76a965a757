package sq

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoInternalTypesExported: no package of the module a user can import
// names a type of an internal package in its exported API, where go doc
// would show the name and not the fields (an alias such as
// `type QP = wrcheck.QP`, a constant of an internal type, an exported
// field, parameter or result of one).
func TestNoInternalTypesExported(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "internal" || name == "testdata" || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		checked++
		for _, bad := range internalRefs(f) {
			t.Errorf("%s: %s", fset.Position(bad.Pos()), describe(bad))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: the walk missed the module", checked)
	}
}

// internalRefs returns the selectors of internal packages in f's exported
// declarations.
func internalRefs(f *ast.File) []*ast.SelectorExpr {
	internal := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
			n := filepath.Base(p)
			if im.Name != nil {
				n = im.Name.Name
			}
			internal[n] = true
		}
	}
	if len(internal) == 0 {
		return nil
	}
	var out []*ast.SelectorExpr
	find := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := s.X.(*ast.Ident); ok && internal[x.Name] && s.Sel.IsExported() {
					out = append(out, s)
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
				find(d.Type)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						exportedParts(s.Type, s.Assign.IsValid(), find)
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						if s.Type != nil {
							find(s.Type)
						} else if i < len(s.Values) {
							// An untyped spec takes its value's type: a bare
							// internal constant is of an internal type.
							if sel, ok := s.Values[i].(*ast.SelectorExpr); ok {
								find(sel)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// exportedParts looks at what go doc shows of a type declaration: all of
// an alias, the exported fields of a struct, the methods of an interface,
// any other type whole.
func exportedParts(t ast.Expr, alias bool, find func(ast.Node)) {
	st, ok := t.(*ast.StructType)
	if alias || !ok {
		find(t)
		return
	}
	for _, fl := range st.Fields.List {
		exported := len(fl.Names) == 0 // embedded: its name is its type's
		for _, n := range fl.Names {
			exported = exported || n.IsExported()
		}
		if exported {
			find(fl.Type)
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(r *ast.FieldList) bool {
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func describe(s *ast.SelectorExpr) string {
	return "the exported API names " + s.X.(*ast.Ident).Name + "." + s.Sel.Name + ", of an internal package"
}

// TestOneKeySpelling: the exported API spells the keys and the scatter/
// gather element one way, LKey, RKey and SGE (MR.LKey beside SGE.LKey),
// in the hand-written packages and the generated ones alike.
func TestOneKeySpelling(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	bad := map[string]string{"Lkey": "LKey", "Rkey": "RKey", "Sge": "SGE"}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (n == "testdata" || strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || !id.IsExported() {
				return true
			}
			for w, want := range bad {
				if i := strings.Index(id.Name, w); i >= 0 && !isLower(id.Name, i+len(w)) {
					t.Errorf("%s: %s spells %s (want %s)", fset.Position(id.Pos()), id.Name, w, want)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: the walk missed the module", checked)
	}
}

// isLower reports whether name has a lower-case letter at i (Sges is
// still Sge; Sgeneric would not be).
func isLower(name string, i int) bool {
	return i < len(name) && name[i] >= 'a' && name[i] <= 'z' && name[i] != 's'
}
