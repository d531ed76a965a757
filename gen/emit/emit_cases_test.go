package emit_test

// The emitters' golden cases: each directory under testdata/ is a tiny
// rdma-core include tree and spec, run through the public pipeline
// (gen.Generate), with the expected output beside it. An external test
// package, so it may import gen (which imports emit) and test the emitters
// through the same door the command uses; the cases then survive a
// reshuffle of the packages behind it.
//
//	testdata/<case>/include/infiniband/mlx5dv.h   the header
//	testdata/<case>/spec/*.yaml                   the descriptors
//	testdata/<case>/flags                         optional: -pkg, -alias, -inputs, -tables with -import
//	testdata/<case>/tables.<file>.golden          with -tables: each file of the tables package
//	testdata/<case>/<file>.golden                 each generated file, and RULES.md
//	testdata/<case>/stderr.golden                 instead, for a case that must fail
//
// A case must fail exactly when its name starts with "bad-", so that
// -update cannot turn a case into the other kind unnoticed.
// "-inputs <case>" reads another case's include tree and spec, for a case
// that only changes the flags. Every generated package is type-checked
// (go/types, the standard library and the committed package from source)
// for the architectures of checkArchs: a golden file of code that does not
// compile would be a defect.
//
// go test ./gen/emit -update rewrites the golden files.

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
)

var update = flag.Bool("update", false, "rewrite the golden files of the cases in testdata")

const updateHint = "if the change is intended: go test ./gen/emit -run TestCases -update"

func TestCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	var chk checker
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			got, pkg := runCase(t, dir)
			switch _, failed := got["stderr.golden"]; {
			case failed && !strings.HasPrefix(name, "bad-"):
				t.Fatalf("generation failed:\n%s(a case that must fail is named bad-*)", got["stderr.golden"])
			case !failed && strings.HasPrefix(name, "bad-"):
				t.Fatalf("generation succeeded, but a case named bad-* must fail")
			}
			compare(t, dir, got)
			if pkg != nil {
				chk.check(t, pkg)
			}
		})
	}
}

// runCase generates a case and returns its outputs by golden file name,
// and the generated files (nil when generation failed).
func runCase(t *testing.T, dir string) (map[string][]byte, map[string][]byte) {
	t.Helper()
	c, err := caseConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gen.Generate(c)
	if err != nil {
		return map[string][]byte{"stderr.golden": []byte(err.Error() + "\n")}, nil
	}
	got := map[string][]byte{"RULES.md.golden": res.Rules}
	pkg := map[string][]byte{}
	for _, f := range res.Files {
		got[f.Name+".golden"] = f.Content
		pkg[f.Name] = f.Content
	}
	for _, f := range res.Tables {
		got["tables."+f.Name+".golden"] = f.Content
	}
	for _, f := range res.BindingFiles {
		got[bindingsPrefix+f.Name+".golden"] = f.Content
	}
	if len(res.BindingFiles) > 0 {
		checkBindings(t, c, res)
	}
	return got, pkg
}

// caseConfig reads a case's flags file into a Config.
func caseConfig(dir string) (gen.Config, error) {
	var c gen.Config
	var inputs string
	fs := flag.NewFlagSet("flags", flag.ContinueOnError)
	fs.StringVar(&c.Package, "pkg", "", "Go package name")
	fs.StringVar(&c.Alias, "alias", "", "import path of the committed package")
	fs.StringVar(&c.Bindings, "bindings", "", "also generate the cgo bindings package of this name")
	fs.StringVar(&c.Version, "rdma-core-version", "", "the header's rdma-core release")
	fs.StringVar(&inputs, "inputs", "", "read the include tree and spec of this case")
	fs.StringVar(&c.Tables, "tables", "", "also render the checker's tables package of this name")
	fs.StringVar(&c.Import, "import", "", "with -tables: the import path of the generated package")
	if b, err := os.ReadFile(filepath.Join(dir, "flags")); err == nil {
		if err := fs.Parse(strings.Fields(string(b))); err != nil {
			return c, fmt.Errorf("%s/flags: %v", dir, err)
		}
	} else if !os.IsNotExist(err) {
		return c, err
	}
	in := dir
	if inputs != "" {
		in = filepath.Join(filepath.Dir(dir), inputs)
	}
	if c.Bindings != "" && c.Import == "" {
		c.Import = caseModule + "/" + c.Package
	}
	c.IncludeRoot = filepath.Join(in, "include")
	c.Spec = os.DirFS(filepath.Join(in, "spec"))
	c.SpecName = "spec"
	return c, nil
}

// compare checks got against the case's golden files, or rewrites them
// with -update.
func compare(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	old, err := filepath.Glob(filepath.Join(dir, "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for _, p := range old {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, p := range old {
		if _, ok := got[filepath.Base(p)]; !ok {
			if filepath.Base(p) == "stderr.golden" {
				t.Errorf("%s: generation succeeded, but the case expects it to fail (%s)", dir, updateHint)
			} else {
				t.Errorf("%s: not generated any more (%s)", p, updateHint)
			}
		}
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		want, err := os.ReadFile(p)
		if err != nil {
			if name == "stderr.golden" {
				t.Errorf("%s: generation failed, but the case expects it to succeed:\n%s(%s)", dir, got[name], updateHint)
				return
			}
			t.Errorf("%s: generated, but there is no golden file (%s)", p, updateHint)
			continue
		}
		if !bytes.Equal(want, got[name]) {
			t.Errorf("%s differs (-want +got):\n%s(%s)", p, diff(string(want), string(got[name])), updateHint)
		}
	}
}

// diff shows the lines around the first difference of want and got,
// removed lines with -, added ones with +.
func diff(want, got string) string {
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	// Trim the common tail so that an insertion shows as one.
	j, k := len(w), len(g)
	for j > i && k > i && w[j-1] == g[k-1] {
		j, k = j-1, k-1
	}
	const max = 20
	var b strings.Builder
	fmt.Fprintf(&b, "@@ line %d @@\n", i+1)
	for n, l := range w[i:j] {
		if n == max {
			fmt.Fprintf(&b, "-... (%d more)\n", j-i-max)
			break
		}
		b.WriteString("-" + strings.TrimSuffix(l, "\n") + "\n")
	}
	for n, l := range g[i:k] {
		if n == max {
			fmt.Fprintf(&b, "+... (%d more)\n", k-i-max)
			break
		}
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	return b.String()
}

// checker type-checks generated packages, sharing one importer so that
// the standard library is checked once.
type checker struct {
	fset *token.FileSet
	imp  types.Importer
}

// The architectures a package is checked for: one of each byte order, so
// that both byteorder files are compiled, and a 32-bit one, where the
// mirrors (64-bit layouts only) are left out and the rest must still build.
var checkArchs = []string{"amd64", "s390x", "386"}

func (c *checker) check(t *testing.T, files map[string][]byte) {
	t.Helper()
	if c.imp == nil {
		c.fset = token.NewFileSet()
		c.imp = importer.ForCompiler(c.fset, "source", nil)
	}
	for _, arch := range checkArchs {
		ctx := build.Default
		ctx.GOARCH = arch
		ctx.CgoEnabled = false
		// MatchFile reads the //go:build line through OpenFile.
		ctx.OpenFile = func(path string) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(files[filepath.Base(path)])), nil
		}
		var parsed []*ast.File
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			ok, err := ctx.MatchFile(".", name)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			f, err := parser.ParseFile(c.fset, name, files[name], 0)
			if err != nil {
				t.Errorf("GOARCH=%s: %v", arch, err)
				return
			}
			parsed = append(parsed, f)
		}
		conf := types.Config{Importer: c.imp, Sizes: types.SizesFor("gc", arch)}
		var errs []string
		conf.Error = func(err error) {
			if len(errs) < 10 {
				errs = append(errs, err.Error())
			}
		}
		conf.Check("generated", c.fset, parsed, nil)
		if len(errs) > 0 {
			t.Errorf("the generated package does not compile (GOARCH=%s):\n%s", arch, strings.Join(errs, "\n"))
		}
	}
}
