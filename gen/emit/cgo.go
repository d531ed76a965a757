package emit

import (
	"bytes"
	_ "embed"
	"errors"
	"go/format"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// The cgo bindings of the API (GenerateBindings) are a package of their
// own, so that the pure package stays free of cgo and of rdma-core. Each
// described function gets a Go function (cgo_funcs.go) that validates its
// arguments with the pure package's validators and calls a C shim
// (cgo_shims.go): one non-inline C function per described function, which
// is how static inline functions and macros become callable, as bindgen's
// wrap-static-fns does. Under the build tag mlx5gen_double the shims are
// replaced by a test double (cgo_double.go) that records the bytes it
// receives and returns what the test sets.

var (
	//go:embed cgo_errors.go.txt
	cgoErrorsSource string
	//go:embed cgo_double.go.txt
	cgoDoubleSource string
	//go:embed cgo_doubletest.go.txt
	cgoDoubleTestSource string
	// doubleRuntime is the recorder the double's functions call (double.c).
	//go:embed cgo_double.c.txt
	doubleRuntime string
)

// DoubleTag is the build tag that replaces the shims with the test double.
const DoubleTag = "mlx5gen_double"

// Bindings names the bindings package and the pure package it uses.
type Bindings struct {
	Name string // Go package name (mlx5verbs)
	Pure string // import path of the pure package (…/generated/mlx5dv)
}

// GenerateBindings renders every file of the cgo bindings of p.
func GenerateBindings(p *model.Package, b Bindings) ([]File, error) {
	var out []File
	var errs []error
	add := func(name string, content []byte, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		out = append(out, File{Name: name, Content: content})
	}
	for _, g := range []struct {
		name, build string
		fn          func(*model.Package, Bindings, *jen.File)
	}{
		{"doc.go", "", bindingsDocFile},
		{"handles.go", "", handlesFile},
		{"funcs.go", "", cgoFuncsFile},
		{"bound.go", "", boundFile},
		{"double_test.go", DoubleTag, doubleTestFile},
	} {
		c, err := renderJen(p, b.Name, g.name, g.build, func(f *jen.File) { g.fn(p, b, f) })
		add(g.name, c, err)
	}
	for _, st := range []struct{ name, build, src string }{
		{"errors.go", "", cgoErrorsSource},
		{"double.go", DoubleTag, cgoDoubleSource},
		{"double_helpers_test.go", DoubleTag, cgoDoubleTestSource},
		{"link.go", "!" + DoubleTag, "// #cgo LDFLAGS: -libverbs -lmlx5\nimport \"C\"\n"},
	} {
		c, err := goText(p, b.Name, st.name, st.build, st.src)
		add(st.name, c, err)
	}
	add("shims.h", shimsHeader(p), nil)
	add("shims.c", shimsSource(p), nil)
	add("double.h", doubleHeader(p), nil)
	add("double.c", doubleSource(p), nil)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// renderJen prints a jennifer file with the header and a build constraint.
func renderJen(p *model.Package, pkg, name, build string, fn func(*jen.File)) ([]byte, error) {
	f := jen.NewFile(pkg)
	for _, l := range strings.Split(header(p), "\n") {
		f.HeaderComment(l)
	}
	if build != "" {
		f.HeaderComment("//go:build " + build)
	}
	fn(f)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, numbered(name, err)
	}
	// The constraint comes after the header, apart from it.
	return bytes.Replace(buf.Bytes(), []byte("\n//go:build"), []byte("\n\n//go:build"), 1), nil
}

// goText prints a Go text with the header, a build constraint and the
// package clause.
func goText(p *model.Package, pkg, name, build, src string) ([]byte, error) {
	var b strings.Builder
	for _, l := range strings.Split(header(p), "\n") {
		b.WriteString(strings.TrimRight("// "+l, " ") + "\n")
	}
	if build != "" {
		b.WriteString("//go:build " + build + "\n")
	}
	b.WriteString("\npackage " + pkg + "\n\n" + src)
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, numbered(name, err)
	}
	return out, nil
}

// cHeader is the comment a generated C file starts with.
func cHeader(p *model.Package, build string) string {
	var b strings.Builder
	for _, l := range strings.Split(header(p), "\n") {
		b.WriteString(strings.TrimRight("// "+l, " ") + "\n")
	}
	if build != "" {
		b.WriteString("\n//go:build " + build + "\n")
	}
	return b.String()
}

func bindingsDocFile(p *model.Package, b Bindings, f *jen.File) {
	f.PackageComment("Package " + b.Name + " holds cgo bindings of the functions described in spec/api, one Go\n" +
		"function per C function. Each validates its arguments with the validators of\n" +
		b.Pure + " before calling C, and maps the function's return convention\n" +
		"to an *Error that names the function and wraps its syscall.Errno.\n\n" +
		"Static inline functions and macros are called through C shims (shims.c), one\n" +
		"non-inline function each. Pointers to mirrored structs are passed as Go pointers:\n" +
		"the memory they point to must hold no unpinned Go pointers (C memory, or a\n" +
		"runtime.Pinner), as cgo's rules say. Built with the tag " + DoubleTag + ", the\n" +
		"shims are replaced by a test double that records what it receives.")
}

// boundFile lists the bound C functions, for the tests that check the
// symbols a program links (and for tools).
func boundFile(p *model.Package, b Bindings, f *jen.File) {
	comment(f, "Binding is a C function this package binds.")
	f.Type().Id("Binding").Struct(
		jen.Id("Name").String().Comment("the C function"),
		jen.Id("Inline").Bool().Comment("static inline (or a macro) in the header: called through a shim, no symbol of its own"),
	)
	f.Line()
	comment(f, "Bound lists every function the package binds, in spec order.")
	var rows []jen.Code
	for _, fn := range p.API.Funcs {
		rows = append(rows, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(fn.Name), jen.Id("Inline"): jen.Lit(fn.Inline || fn.Macro != "")}))
	}
	f.Var().Id("Bound").Op("=").Index().Id("Binding").Values(rows...)
}
