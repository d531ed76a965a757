package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mlx5gen/mlx5gen/gen/cdiff"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

func diffCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the changes as JSON")
	header := fs.String("header", cheader.DefaultHeader, "header to read, relative to each include root")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: mlx5gen diff [-json] OLD NEW\n\n"+
			"Compares two rdma-core headers: functions, structs, fields, layouts, enums and constants\n"+
			"added, removed or changed. OLD and NEW are include roots (directories holding infiniband/)\n"+
			"or releases in the project's header cache (44.0, 56.1, 65.0).\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args, stderr); !ok {
		return st
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	var models [2]*cheader.Model
	for i, a := range fs.Args() {
		root := a
		if st, err := os.Stat(a); err != nil || !st.IsDir() {
			if !rdmacore.Supported(a) {
				return failf(stderr, "%s is neither a directory nor a release of the header cache (%v)", a, rdmacore.Versions)
			}
			r, err := rdmacore.IncludeRoot(".", a)
			if err != nil {
				return failf(stderr, "%v", err)
			}
			root = r
		}
		m, err := cheader.Load(cheader.Config{IncludeRoot: root, Header: *header})
		if err != nil {
			return failf(stderr, "%v", err)
		}
		models[i] = m
	}
	r := cdiff.Compare(models[0], models[1])
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return failf(stderr, "%v", err)
		}
		return 0
	}
	if err := r.WriteTable(stdout); err != nil {
		return failf(stderr, "%v", err)
	}
	return 0
}
