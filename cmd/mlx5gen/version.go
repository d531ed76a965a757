package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

func versionCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: mlx5gen version\n\nPrints mlx5gen's version and the rdma-core releases it supports.\n")
	}
	if st, ok := parseFlags(fs, args, stderr); !ok {
		return st
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
		fmt.Fprintf(stdout, "mlx5gen %s%s (%s)\n", v, rev, bi.GoVersion)
	} else {
		fmt.Fprintf(stdout, "mlx5gen %s\n", v)
	}
	fmt.Fprintf(stdout, "rdma-core releases: %s\n", strings.Join(rdmacore.Versions, ", "))
	return 0
}
