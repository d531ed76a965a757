package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/mlx5gen/mlx5gen/gen/emit"
)

// memPackage is a generated package type-checked from memory.
type memPackage struct {
	name  string // the package name, for messages
	dir   string // how positions name its files
	files []emit.File
}

// typeChecker type-checks the packages of a run from memory before any is
// written: the standard library is read from source (GOROOT), the
// packages of the run by their import paths from memory.
type typeChecker struct {
	fset *token.FileSet
	mem  map[string]*memPackage // by import path
	done map[string]*types.Package
	std  types.ImporterFrom
}

// stdImporter is shared by every run: the standard library's packages,
// once read, are read again by no later run of the process.
var stdImporter = sync.OnceValue(func() types.ImporterFrom {
	return importer.ForCompiler(token.NewFileSet(), "source", nil).(types.ImporterFrom)
})

var stdMu sync.Mutex // the source importer is not safe for concurrent use

// Import implements types.Importer.
func (tc *typeChecker) Import(p string) (*types.Package, error) {
	return tc.ImportFrom(p, "", 0)
}

// ImportFrom implements types.ImporterFrom.
func (tc *typeChecker) ImportFrom(p, dir string, mode types.ImportMode) (*types.Package, error) {
	if pkg := tc.done[p]; pkg != nil {
		return pkg, nil
	}
	if m := tc.mem[p]; m != nil {
		pkg, err := tc.check(p, m)
		if err != nil {
			return nil, err
		}
		return pkg, nil
	}
	stdMu.Lock()
	defer stdMu.Unlock()
	return stdImporter().ImportFrom(p, dir, mode)
}

// check parses and type-checks one package from memory, with the files
// the host's build constraints select (the generated package's own tests
// are not part of it). The error names the first problem's file:line:col.
func (tc *typeChecker) check(importPath string, m *memPackage) (*types.Package, error) {
	ctx := build.Default
	content := map[string][]byte{}
	for _, f := range m.files {
		content[f.Name] = f.Content
	}
	ctx.JoinPath = func(elem ...string) string { return path.Join(elem...) }
	ctx.OpenFile = func(name string) (io.ReadCloser, error) {
		c, ok := content[path.Base(name)]
		if !ok {
			return nil, fmt.Errorf("%s: no such generated file", name)
		}
		return io.NopCloser(bytes.NewReader(c)), nil
	}
	var files []*ast.File
	for _, f := range m.files {
		if !strings.HasSuffix(f.Name, ".go") || strings.HasSuffix(f.Name, "_test.go") {
			continue
		}
		if ok, err := ctx.MatchFile(".", f.Name); err != nil || !ok {
			if err != nil {
				return nil, fmt.Errorf("%s: %v", path.Join(m.dir, f.Name), err)
			}
			continue
		}
		af, err := parser.ParseFile(tc.fset, path.Join(m.dir, f.Name), f.Content, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("the generated package %s does not parse: %v", m.name, err)
		}
		files = append(files, af)
	}
	var errs []error
	conf := types.Config{
		Importer:    tc,
		FakeImportC: true, // the cgo bindings: C's names are not checked
		Error: func(err error) {
			if len(errs) < 10 {
				errs = append(errs, err)
			}
		},
	}
	pkg, _ := conf.Check(importPath, tc.fset, files, nil)
	if len(errs) > 0 {
		return nil, fmt.Errorf("the generated package %s would not compile (nothing was written):\n%w", m.name, errors.Join(errs...))
	}
	tc.done[importPath] = pkg
	return pkg, nil
}

// typeCheckHook, when set (tests), changes the files of a run before they
// are type-checked, so that a type error can be forced.
var typeCheckHook func(res *Result)

// typeCheck type-checks every package of a run (Result.Files, Tables,
// BindingFiles and PRMFiles) and returns the first one's errors.
func typeCheck(res *Result, c Config) error {
	if typeCheckHook != nil {
		typeCheckHook(res)
	}
	self := c.Import
	if self == "" {
		self = "generated.invalid/" + res.Package.Name
	}
	tc := &typeChecker{fset: token.NewFileSet(), mem: map[string]*memPackage{}, done: map[string]*types.Package{}}
	order := []string{self}
	tc.mem[self] = &memPackage{name: res.Package.Name, dir: res.Package.Name, files: res.Files}
	if len(res.Tables) > 0 {
		p := self + "/../" + c.Tables
		tc.mem[p] = &memPackage{name: c.Tables, dir: c.Tables, files: res.Tables}
		order = append(order, p)
	}
	if len(res.BindingFiles) > 0 {
		p := self + "/../" + c.Bindings
		tc.mem[p] = &memPackage{name: c.Bindings, dir: c.Bindings, files: res.BindingFiles}
		order = append(order, p)
	}
	if len(res.PRMFiles) > 0 {
		p := self + "/../" + c.PRM
		tc.mem[p] = &memPackage{name: c.PRM, dir: c.PRM, files: res.PRMFiles}
		order = append(order, p)
	}
	for _, p := range order {
		if _, err := tc.Import(p); err != nil {
			return err
		}
	}
	return nil
}
