// Command mlx5gen turns rdma-core's mlx5dv.h into Go.
//
//	mlx5gen generate [-I include-root] [-header infiniband/mlx5dv.h]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: mlx5gen <command> [flags]

commands:
  generate   read mlx5dv.h and report its model
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	m, err := cheader.Load(cheader.Config{IncludeRoot: *root, Header: *header})
	if err != nil {
		fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
		return 1
	}
	fields := 0
	for _, r := range m.Records {
		fields += len(r.Fields)
	}
	fmt.Fprintf(stdout, "read %s/%s (rdma-core %s, from %s)\n", m.IncludeRoot, m.Header, m.Version, m.VersionSource)
	fmt.Fprintf(stdout, "  %d structs and unions (%d fields), %d enums, %d integer macros (%d other macros skipped), %d functions\n",
		len(m.Records), fields, len(m.Enums), len(m.Macros), len(m.Skipped), len(m.Funcs))
	return 0
}
