// Package lint holds the module's structure rules as tests: the flow of the
// generator's packages (TestGenFlow) and the size rules: no hand-written
// Go file over MaxFileLines lines and no function over MaxFuncLines. Test
// files and generated files (// Code generated ... DO NOT EDIT.) are not
// counted. go test ./internal/lint walks the whole module and names every
// offender as file:function: lines.
package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
)

// The limits of hand-written code.
const (
	MaxFileLines = 600
	MaxFuncLines = 100
)

// Check reports the size problems of one Go source file, named name in
// the reports: the file's length, then each function's, as
// "name: N lines" or "name:func: N lines". A generated file has none.
func Check(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	var out []string
	if n := fset.File(f.Pos()).LineCount(); n > MaxFileLines {
		out = append(out, fmt.Sprintf("%s: %d lines (limit %d)", name, n, MaxFileLines))
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > MaxFuncLines {
			out = append(out, fmt.Sprintf("%s:%s: %d lines (limit %d)", name, funcName(fd), n, MaxFuncLines))
		}
	}
	return out, nil
}

// funcName is a function's name, with its receiver type for a method
// (T.m), as a reader searches for it.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
