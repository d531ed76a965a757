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
	"github.com/mlx5gen/mlx5gen/gen/alias"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// inputs are the flags that say what to read: the header and the spec.
type inputs struct {
	root, header, version, specDir *string
}

func inputFlags(fs *flag.FlagSet) inputs {
	return inputs{
		root:    fs.String("I", cheader.DefaultIncludeRoot, "include root holding infiniband/"),
		header:  fs.String("header", cheader.DefaultHeader, "header to read, relative to the include root"),
		version: fs.String("rdma-core", "", "read this rdma-core release (44.0, 56.1, 65.0) from the project's header cache instead of -I, fetching it if needed"),
		specDir: fs.String("spec", "", "spec directory (default: the descriptors built into mlx5gen)"),
	}
}

// config turns the flags into a generator configuration.
func (in inputs) config(pkg string) (gen.Config, error) {
	cfg := gen.Config{IncludeRoot: *in.root, Header: *in.header, Package: pkg}
	if *in.version != "" {
		r, err := rdmacore.IncludeRoot(".", *in.version)
		if err != nil {
			return cfg, err
		}
		cfg.IncludeRoot = r
	}
	cfg.Spec, cfg.SpecName = specFS(*in.specDir)
	return cfg, nil
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
	cfg, err := in.config(*pkg)
	if err != nil {
		return failf(stderr, "%v", err)
	}
	cfg.Alias = *aliasOf
	res, err := gen.Generate(cfg)
	if err != nil {
		return failf(stderr, "%v", err)
	}
	written, removed, err := gen.Write(*out, res.Files)
	if err != nil {
		return failf(stderr, "%v", err)
	}
	p := res.Package
	fmt.Fprintf(stdout, "read %s (rdma-core %s, %s) and %d spec files\n", filepath.Join(cfg.IncludeRoot, res.C.Header), res.C.Version, res.C.VersionSource, len(res.Spec.Files))
	fmt.Fprintf(stdout, "  %d constants, %d enum types, %d segments, %d WQE formats\n", len(p.Consts), len(p.Enums), len(p.Segments), len(p.Formats))
	fmt.Fprintf(stdout, "  %d functions, %d structs, %d rules described\n", len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules))
	if n := len(p.API.Uncovered); n > 0 {
		fmt.Fprintf(stdout, "  %d mlx5dv functions and structs of the header have no descriptor: %s\n", n, strings.Join(p.API.Uncovered, ", "))
	}
	if d := res.Alias; d != nil {
		fmt.Fprintf(stdout, "  %d types are aliases of %s; %d are declared here (listed in %s)\n", len(d.Aliased), cfg.Alias, len(d.Local), alias.SummaryName)
	}
	if *rules != "" {
		if err := os.WriteFile(*rules, res.Rules, 0o644); err != nil {
			return failf(stderr, "%v", err)
		}
		written = append(written, *rules)
	}
	for _, w := range written {
		fmt.Fprintf(stdout, "wrote %s\n", w)
	}
	for _, r := range removed {
		fmt.Fprintf(stdout, "removed %s\n", r)
	}
	return 0
}

// parseFlags parses a command's flags. On -h it prints the usage and
// returns status 0; on a bad flag it prints the error (prefixed like every
// error) and the usage and returns 2; ok is true when the command goes on.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (status int, ok bool) {
	fs.SetOutput(io.Discard) // the flag package's own messages lack the prefix
	err := fs.Parse(args)
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
		return failf(stderr, "%v", err)
	}
	res, err := gen.Generate(cfg)
	if err != nil {
		var list model.Errors
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintf(stderr, "mlx5gen: %v\n", e)
			}
			fmt.Fprintf(stderr, "mlx5gen: %d problems\n", len(list))
			return 1
		}
		return failf(stderr, "%v", err)
	}
	p := res.Package
	fmt.Fprintf(stdout, "%s (rdma-core %s): the spec's %d functions, %d structs, %d rules, %d enum types and %d segments match the header\n",
		filepath.Join(cfg.IncludeRoot, res.C.Header), res.C.Version, len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules), len(p.Enums), len(p.Segments))
	if n := len(p.API.Uncovered); n > 0 {
		fmt.Fprintf(stdout, "%d mlx5dv functions and structs of the header have no descriptor (not a problem): %s\n", n, strings.Join(p.API.Uncovered, ", "))
	}
	return 0
}
