// Command mlx5gen turns rdma-core's mlx5dv.h into Go.
//
//	mlx5gen generate [-I include-root | -rdma-core version] [-spec dir] [-out dir] [-pkg name]
//	mlx5gen replay [-v] FILE.json...
package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: mlx5gen <command> [flags]

commands:
  generate   read mlx5dv.h and the spec, write the Go package
  replay     replay reference WQE vectors through the send-queue writer
`

// run is main without the process: it returns the exit status (2 for usage
// errors, 1 for failures).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "generate":
		return generate(args[1:], stdout, stderr)
	case "replay":
		return replayCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "mlx5gen: unknown command %q\n%s", args[0], usage)
	return 2
}

func generate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("I", cheader.DefaultIncludeRoot, "include root holding infiniband/")
	header := fs.String("header", cheader.DefaultHeader, "header to read, relative to the include root")
	version := fs.String("rdma-core", "", "read the headers of this rdma-core release from the project's header cache (44.0, 56.1, 65.0) instead of -I")
	specDir := fs.String("spec", "", "spec directory (default: the descriptors built into mlx5gen)")
	out := fs.String("out", ".", "output directory")
	pkg := fs.String("pkg", "mlx5dv", "Go package name")
	rules := fs.String("rules", "", "also write the table of rules (spec/RULES.md) to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := gen.Config{IncludeRoot: *root, Header: *header, Package: *pkg}
	if *version != "" {
		r, err := rdmacore.IncludeRoot(".", *version)
		if err != nil {
			fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
			return 1
		}
		cfg.IncludeRoot = r
	}
	cfg.Spec, cfg.SpecName = specFS(*specDir)
	res, err := gen.Generate(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
		return 1
	}
	written, removed, err := gen.Write(*out, res.Files)
	if err != nil {
		fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
		return 1
	}
	p := res.Package
	fmt.Fprintf(stdout, "read %s (rdma-core %s, %s) and %d spec files\n", filepath.Join(cfg.IncludeRoot, res.C.Header), res.C.Version, res.C.VersionSource, len(res.Spec.Files))
	fmt.Fprintf(stdout, "  %d constants, %d enum types, %d segments, %d WQE formats\n", len(p.Consts), len(p.Enums), len(p.Segments), len(p.Formats))
	fmt.Fprintf(stdout, "  %d functions, %d structs, %d rules described\n", len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules))
	if n := len(p.API.Uncovered); n > 0 {
		fmt.Fprintf(stdout, "  %d mlx5dv functions and structs of the header have no descriptor: %s\n", n, strings.Join(p.API.Uncovered, ", "))
	}
	if *rules != "" {
		if err := os.WriteFile(*rules, res.Rules, 0o644); err != nil {
			fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
			return 1
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

// specFS returns the spec to read: a directory, or the embedded one.
func specFS(dir string) (fs.FS, string) {
	if dir == "" {
		return specfiles.FS, "spec"
	}
	return os.DirFS(dir), filepath.ToSlash(filepath.Clean(dir))
}
