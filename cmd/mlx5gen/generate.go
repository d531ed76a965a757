package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// inputs are the flags that say what to read: the header and the spec.
type inputs struct {
	root, header, version, specDir *string
	release                        *string // -rdma-core-version
	fs                             *flag.FlagSet
}

func inputFlags(fs *flag.FlagSet) inputs {
	return inputs{
		fs:      fs,
		root:    fs.String("I", cheader.DefaultIncludeRoot, "include root holding infiniband/"),
		header:  fs.String("header", cheader.DefaultHeader, "header to read, relative to the include root"),
		version: fs.String("rdma-core", "", "read this rdma-core release (44.0, 56.1, 65.0) from the project's header cache instead of -I, fetching it if needed"),
		specDir: fs.String("spec", "", "spec directory (default: the descriptors built into mlx5gen)"),
		release: fs.String("rdma-core-version", "", "the rdma-core release of the header (45.0), overriding libibverbs.pc; without either, availability follows the header alone"),
	}
}

// errConflict is a usage error: flags that exclude each other.
type errConflict struct{ msg string }

func (e errConflict) Error() string { return e.msg }

// configFail reports an error of config: a usage error (status 2, with the
// usage) or a failure (status 1).
func configFail(fs *flag.FlagSet, stderr io.Writer, err error) int {
	var c errConflict
	if errors.As(err, &c) {
		fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
		fs.Usage()
		return 2
	}
	return failf(stderr, "%v", err)
}

// config turns the flags into a generator configuration.
func (in inputs) config(pkg string) (gen.Config, error) {
	if *in.version != "" {
		set := false
		in.fs.Visit(func(f *flag.Flag) { set = set || f.Name == "I" })
		if set {
			return gen.Config{}, errConflict{"-I and -rdma-core exclude each other: -rdma-core " + *in.version + " reads the header cache's include root, not " + *in.root}
		}
	}
	cfg := gen.Config{IncludeRoot: *in.root, Header: *in.header, Package: pkg,
		Version: *in.release, VersionSource: "-rdma-core-version"}
	if *in.version != "" {
		r, err := rdmacore.IncludeRoot(".", *in.version)
		if err != nil {
			return cfg, err
		}
		cfg.IncludeRoot = r
	}
	if *in.release != "" {
		if _, err := spec.NormalizeVersion(*in.release); err != nil {
			return cfg, fmt.Errorf("-rdma-core-version: %v", err)
		}
	}
	cfg.Spec, cfg.SpecName = specFS(*in.specDir)
	cfg.ModelCache = modelCache(nil)
	return cfg, nil
}

// modelCache is the cache of C models the environment asks for
// ($MLX5GENCACHE, cheader.CacheFromEnv); with log set (-v) it says there
// how each lookup and store went.
func modelCache(log io.Writer) *cheader.Cache {
	c, why := cheader.CacheFromEnv()
	if c == nil {
		if log != nil {
			fmt.Fprintf(log, "mlx5gen: model cache: off (%s)\n", why)
		}
		return nil
	}
	if log != nil {
		c.Log = func(format string, args ...any) { fmt.Fprintf(log, "mlx5gen: "+format+"\n", args...) }
	}
	return c
}

// specFS returns the spec to read: a directory, or the embedded one.
func specFS(dir string) (fs.FS, string) {
	if dir == "" {
		return specfiles.FS, "spec"
	}
	return os.DirFS(dir), filepath.ToSlash(filepath.Clean(dir))
}

func generateCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := inputFlags(fs)
	out := fs.String("out", ".", "output directory")
	pkg := fs.String("pkg", "mlx5dv", "Go package name")
	rules := fs.String("rules", "", "also write the table of rules (spec/RULES.md) to this file")
	verbose := fs.Bool("v", false, "say on standard error how the model cache went")
	tablesDir := fs.String("tables", "", "also write the checker's tables package (Funcs, Rules, chain checks: what runtime/internal/wrcheck runs on) to this directory, named after it; needs -import")
	importPath := fs.String("import", "", "with -tables: the import path of the package written to -out")
	bindings := fs.String("bindings", "", "also write the cgo bindings package (every described function, through C shims) to this directory, named after it; needs -import")
	prmDir := fs.String("prm", "", "also write the PRM layouts package (the device command layouts of spec/hw: CREATE_MKEY, CREATE_PSV, the DEK object, QUERY_HCA_CAP) to this directory, named after it")
	aliasOf := fs.String("alias", "", "import path of mlx5gen's committed package (github.com/mlx5gen/mlx5gen/generated/mlx5dv): make every type that agrees with it an alias of it, so that runtime/sq takes the package's values")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: mlx5gen generate [flags]\n\nReads mlx5dv.h and the spec descriptors and writes the Go package.\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args, stderr); !ok {
		return st
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if err := gen.CheckPackageName(*pkg); err != nil {
		return failf(stderr, "-pkg %q: %v", *pkg, err)
	}
	cfg, err := in.config(*pkg)
	if err != nil {
		return configFail(fs, stderr, err)
	}
	cfg.Alias = *aliasOf
	if *verbose {
		cfg.ModelCache = modelCache(stderr)
	}
	if *tablesDir != "" || *bindings != "" {
		if *importPath == "" {
			return failf(stderr, "-tables and -bindings need -import, the import path of the package written to -out")
		}
		cfg.Import = *importPath
		if *tablesDir != "" {
			cfg.Tables = filepath.Base(filepath.Clean(*tablesDir))
		}
		if *bindings != "" {
			cfg.Bindings = filepath.Base(filepath.Clean(*bindings))
		}
	} else if *importPath != "" {
		return failf(stderr, "-import is for -tables and -bindings")
	}
	if *prmDir != "" {
		cfg.PRM = filepath.Base(filepath.Clean(*prmDir))
	}
	e, err := produce(cfg, *verbose, verboseLog(*verbose, stderr))
	if err != nil {
		return failLines(stderr, err)
	}
	o := gen.Output{Dir: *out, Files: e.Files}
	if *rules != "" {
		o.Rules, o.RulesContent = *rules, e.Rules
	}
	if *tablesDir != "" {
		o.More = append(o.More, gen.Package{Dir: *tablesDir, Files: e.Tables})
	}
	if *bindings != "" {
		o.More = append(o.More, gen.Package{Dir: *bindings, Files: e.Bindings})
	}
	if *prmDir != "" {
		o.More = append(o.More, gen.Package{Dir: *prmDir, Files: e.PRM})
	}
	o.Wait = func(lock string) {
		fmt.Fprintf(stderr, "mlx5gen: another mlx5gen run is writing %s; waiting for it (at most %v; lock %s)\n", o.Dir, gen.LockTimeout, lock)
	}
	rep, err := gen.WriteOutput(gen.OS, o)
	if err != nil {
		return failLines(stderr, err)
	}
	if rep.Repaired != "" {
		fmt.Fprintf(stderr, "mlx5gen: %s\n", rep.Repaired)
	}
	stderr.Write(e.Stderr)
	stdout.Write(e.Stdout)
	for _, w := range rep.Written {
		fmt.Fprintf(stdout, "wrote %s\n", w)
	}
	for _, u := range rep.Unchanged {
		fmt.Fprintf(stdout, "unchanged %s\n", u)
	}
	for _, r := range rep.Removed {
		fmt.Fprintf(stdout, "removed %s\n", r)
	}
	for _, l := range rep.Leftover {
		fmt.Fprintf(stderr, "mlx5gen: warning: could not remove %s, a backup of the previous output; remove it\n", l)
	}
	return 0
}

// verboseLog is where -v reports go: stderr with -v, else nowhere.
func verboseLog(verbose bool, stderr io.Writer) io.Writer {
	if verbose {
		return stderr
	}
	return nil
}

// failLines prints an error of several lines (every problem found) with
// the prefix on each line, and returns the failure status.
func failLines(stderr io.Writer, err error) int {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "mlx5gen: %s\n", line)
	}
	return 1
}

// parseFlags parses a command's flags. On -h it prints the usage and
// returns status 0; on a bad flag it prints the error (prefixed like every
// error) and the usage and returns 2; ok is true when the command goes on.
// The flag package would print the usage itself as well, so it is silenced
// while parsing: every path prints the usage exactly once.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (status int, ok bool) {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard) // the flag package's own messages lack the prefix
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return 0, false
	}
	fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
	fs.Usage()
	return 2, false
}

func checkCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := inputFlags(fs)
	verbose := fs.Bool("v", false, "say on standard error how the model cache went")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: mlx5gen check [flags]\n\nChecks every descriptor of the spec against the header and lists every problem.\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args, stderr); !ok {
		return st
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := in.config("mlx5dv")
	if err != nil {
		return configFail(fs, stderr, err)
	}
	if *verbose {
		cfg.ModelCache = modelCache(stderr)
	}
	res, err := gen.Generate(cfg)
	if err != nil {
		var list diag.List
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintf(stderr, "mlx5gen: %v\n", e)
			}
			if len(list) == 1 {
				fmt.Fprintf(stderr, "mlx5gen: 1 problem\n")
			} else {
				fmt.Fprintf(stderr, "mlx5gen: %d problems\n", len(list))
			}
			return 1
		}
		return failLines(stderr, err)
	}
	p := res.Package
	warn(stderr, p)
	fmt.Fprintf(stdout, "%s (%s): the spec's %d functions, %d structs, %d rules, %d enum types and %d segments match the header\n",
		filepath.Join(cfg.IncludeRoot, res.C.Header), release(res.C), len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules), len(p.Enums), len(p.Segments))
	printUncovered(stderr, p.API.Uncovered)
	return 0
}

// release says which rdma-core release the header is and how that is known.
func release(c *cheader.Model) string {
	if c.Version == "" {
		return "rdma-core unknown: " + c.VersionSource + "; availability follows the header"
	}
	return "rdma-core " + c.Version + ", from " + c.VersionSource
}

// warn prints the gates the header disagrees with; they do not fail the run.
func warn(stderr io.Writer, p *model.Package) {
	for _, w := range p.Warnings {
		fmt.Fprintf(stderr, "mlx5gen: warning: %v\n", w)
	}
}

// printUncovered warns of the functions and structs of the header that
// no descriptor covers, naming each: the three supported releases have
// none, so these are what a newer header added. They are not generated;
// everything else is, and the run still succeeds.
func printUncovered(stderr io.Writer, names []string) {
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(stderr, "mlx5gen: warning: %d mlx5dv functions and structs of the header have no descriptor in spec/api and are not generated:\n", len(names))
	for _, n := range names {
		fmt.Fprintf(stderr, "mlx5gen: warning:     %s\n", n)
	}
}
