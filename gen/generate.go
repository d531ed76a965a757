// Package gen is the mlx5gen generator as a library: it reads a header and
// the spec, builds the Go model and writes the generated package. The
// command (cmd/mlx5gen) only turns flags into a Config.
//
// The pipeline reads top to bottom and finds every user error before it
// writes anything:
//
//	cheader.Load (C model) -> spec.Load -> resolve.Build (checks; the Go model) -> emit.Generate -> WriteOutput (all or nothing)
package gen

import (
	"errors"
	"fmt"
	"go/token"
	"io/fs"

	"github.com/mlx5gen/mlx5gen/gen/alias"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/emit"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/resolve"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// Config is one run of the generator.
type Config struct {
	IncludeRoot string // directory holding infiniband/ (default /usr/include)
	Header      string // default infiniband/mlx5dv.h
	Spec        fs.FS  // the spec descriptors
	SpecDir     string // directory of the descriptors in Spec (default ".")
	SpecName    string // how positions name the spec directory (default "spec")
	Package     string // Go package name (default mlx5dv)

	// Version is the rdma-core release of the header when the caller knows
	// it better than libibverbs.pc ("" = detect); VersionSource says who
	// gave it (default "given").
	Version, VersionSource string
	// Alias, when set, is the import path of the committed package
	// (github.com/mlx5gen/mlx5gen/generated/mlx5dv): every type that agrees
	// with it becomes an alias of it, so that the runtime takes its values
	// (see gen/alias). Empty for the committed package itself.
	Alias string
	// Tables, when set, names the checker's tables package (mlx5rules) to
	// render too (Result.Tables); Import is then the import path of the
	// generated package, which the tables package imports.
	Tables, Import string
	// Bindings, when set, names the cgo bindings package (mlx5verbs) to
	// generate too (Result.BindingFiles); it imports Import.
	Bindings string
	// PRM, when set, names the PRM layouts package (mlx5prm) to generate
	// too (Result.PRMFiles): the device command layouts of spec/hw. It
	// imports nothing of the run.
	PRM string
	// ModelCache, when set, keeps the C models of headers already parsed
	// (cheader.Cache); the output is the same with or without it.
	ModelCache *cheader.Cache
}

// Result is what a run read and produced.
type Result struct {
	C            *cheader.Model
	Spec         *spec.Spec
	Package      *model.Package
	Files        []emit.File
	Rules        []byte          // spec/RULES.md
	Alias        *alias.Decision // with Config.Alias: the types aliased and those declared here
	Tables       []emit.File     // with Config.Tables: the checker's tables package
	BindingFiles []emit.File     // with Config.Bindings: the cgo bindings package
	PRMFiles     []emit.File     // with Config.PRM: the PRM layouts package
}

// Generate runs the pipeline in memory; nothing is written.
func Generate(c Config) (*Result, error) {
	res, err := Load(c)
	if err != nil {
		return nil, err
	}
	files, err := emit.Generate(res.Package)
	if err != nil {
		return nil, err
	}
	res.Files, res.Rules = files, emit.RulesMarkdown(res.Package)
	if c.Tables != "" {
		if err := CheckPackageName(c.Tables); err != nil {
			return nil, fmt.Errorf("tables package name %q: %v", c.Tables, err)
		}
		if c.Import == "" {
			return nil, errors.New("the tables package needs the import path of the generated package")
		}
		if res.Tables, err = emit.GenerateTables(res.Package, c.Tables, c.Import); err != nil {
			return nil, err
		}
	}
	if c.Bindings != "" {
		if err := CheckPackageName(c.Bindings); err != nil {
			return nil, fmt.Errorf("bindings package name %q: %v", c.Bindings, err)
		}
		if c.Import == "" {
			return nil, errors.New("the bindings package needs the import path of the generated package")
		}
		if res.BindingFiles, err = emit.GenerateBindings(res.Package, emit.Bindings{Name: c.Bindings, Pure: c.Import}); err != nil {
			return nil, err
		}
	}
	if c.PRM != "" {
		if err := CheckPackageName(c.PRM); err != nil {
			return nil, fmt.Errorf("PRM package name %q: %v", c.PRM, err)
		}
		if res.PRMFiles, err = emit.GeneratePRM(res.Package, c.PRM); err != nil {
			return nil, err
		}
	}
	// The packages are type-checked before -alias rewrites them: the
	// rewrite only turns declarations into aliases of the committed
	// package's identical types (gen/alias), which may not be on this
	// machine's module path.
	if err := typeCheck(res, c); err != nil {
		return nil, err
	}
	if c.Alias != "" {
		if err := aliasBase(res, c.Alias); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Load runs the pipeline up to the model: it reads the header and the spec
// and builds the Go model (Result without Files, Rules and Alias).
func Load(c Config) (*Result, error) {
	if c.Spec == nil {
		return nil, errors.New("no spec descriptors")
	}
	if c.Package != "" {
		if err := CheckPackageName(c.Package); err != nil {
			return nil, fmt.Errorf("package name %q: %v", c.Package, err)
		}
	}
	if c.SpecDir == "" {
		c.SpecDir = "."
	}
	if c.SpecName == "" {
		c.SpecName = "spec"
	}
	var version string
	if c.Version != "" {
		v, err := spec.NormalizeVersion(c.Version)
		if err != nil {
			return nil, err
		}
		version = v
	}
	// The spec does not depend on the header: read it while the header
	// is parsed (or its model read from the cache).
	var sp *spec.Spec
	var spErr error
	specDone := make(chan struct{})
	go func() {
		defer close(specDone)
		sp, spErr = spec.Load(c.Spec, c.SpecDir, c.SpecName)
	}()
	cm, err := cheader.Load(cheader.Config{IncludeRoot: c.IncludeRoot, Header: c.Header, Cache: c.ModelCache})
	<-specDone
	if err != nil {
		return nil, err
	}
	if version != "" {
		cm.Version, cm.VersionSource = version, c.VersionSource
		if cm.VersionSource == "" {
			cm.VersionSource = "given"
		}
	}
	if spErr != nil {
		return nil, spErr
	}
	p, err := resolve.Build(cm, sp, resolve.Config{Package: c.Package})
	if err != nil {
		return nil, err
	}
	return &Result{C: cm, Spec: sp, Package: p}, nil
}

// aliasBase rewrites the files of res so that they alias the committed
// package at importPath wherever they agree with it.
func aliasBase(res *Result, importPath string) error {
	base, err := alias.Base()
	if err != nil {
		return err
	}
	in := make([]alias.File, len(res.Files))
	for i, f := range res.Files {
		in[i] = alias.File{Name: f.Name, Content: f.Content}
	}
	out, d, err := alias.Apply(in, base, importPath)
	if err != nil {
		return err
	}
	res.Files = make([]emit.File, len(out))
	for i, f := range out {
		res.Files[i] = emit.File{Name: f.Name, Content: f.Content}
	}
	res.Alias = &d
	return nil
}

// CheckPackageName says why name cannot be the generated package's name:
// it must be a Go identifier that is not blank, and not main (a main
// package without func main does not build).
func CheckPackageName(name string) error {
	switch {
	case name == "_":
		return errors.New("the blank identifier cannot name a package")
	case name == "main":
		return errors.New("a package named main must be a command; the generated package is a library")
	case token.IsKeyword(name):
		return errors.New("a Go keyword cannot name a package")
	case !token.IsIdentifier(name):
		return errors.New("not a Go identifier (a letter or _, then letters, digits or _)")
	}
	return nil
}
