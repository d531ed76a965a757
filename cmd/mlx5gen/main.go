// Command mlx5gen turns rdma-core's mlx5dv.h into Go, and checks, compares
// and exercises what it generates.
//
//	mlx5gen generate [-I dir | -rdma-core version] [-header file] [-spec dir] [-out dir] [-pkg name] [-rules file] [-v]
//	mlx5gen check [-I dir | -rdma-core version] [-header file] [-spec dir] [-v]
//	mlx5gen diff [-json] OLD NEW
//	mlx5gen names [-I dir | -rdma-core version] [-header file] [-spec dir] [C name...]
//	mlx5gen wqe decode [-I dir | -rdma-core version] [-header file] [-spec dir] [-dci] [HEX...]
//	mlx5gen cqe decode [-I dir | -rdma-core version] [-header file] [-spec dir] [HEX...]
//	mlx5gen replay [-v] FILE.json...
//	mlx5gen devices
//	mlx5gen version
//
// Errors start with "mlx5gen:"; the exit status is 2 for a usage error and
// 1 for a failure.
//
// The generator builds without the generated package and the runtime, so
// that a broken generated package never blocks its own regeneration: wqe
// decode works from the model of the header it reads, and replay, which
// runs the runtime, is the program mlx5gen-replay (internal/cmd), which
// mlx5gen runs (devices, which opens devices through the runtime, is
// mlx5gen-devices, run the same way): the one installed next to mlx5gen, else the one of the
// mlx5gen checkout holding the current directory (built with go build into
// the user's cache), else the one on PATH.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

func main() {
	// A short run that parses a large header: collect garbage less often
	// (the peak stays near 70 MB) rather than spend a third of the run on it.
	debug.SetGCPercent(400)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: mlx5gen <command> [flags] [arguments]

commands:
  generate   read mlx5dv.h and the spec, write the Go package
  check      check the spec against the header; list every problem
  diff       compare two rdma-core headers: functions, structs, fields, layouts, constants
  names      print the Go name of each C type and member (C name → Go name)
  wqe        wqe decode: print a WQE's segments and fields by name, from the header's model
  cqe        cqe decode: print a CQE's fields by name; an error CQE's syndrome with its meaning
  replay     replay reference WQE vectors through the send-queue writer; runs
             mlx5gen-replay: next to mlx5gen, else built from the mlx5gen checkout
             around the current directory, else from PATH
             (go install github.com/mlx5gen/mlx5gen/internal/cmd/mlx5gen-replay@latest)
  devices    list the RDMA devices (-sim: the simulator's) and their mlx5 capabilities
             (signature, crypto, DCI streams, MMO; QUERY_HCA_CAP's signature, AES-XTS
             and DEK bits), or say there are none and why; runs mlx5gen-devices,
             found as mlx5gen-replay is (internal/cmd/mlx5gen-devices)
  version    print mlx5gen's version and the rdma-core releases it supports

Run "mlx5gen <command> -h" for a command's flags.
`

// run is main without the process: it returns the exit status. Every
// write to stdout and stderr is checked: a command whose output could not
// be written exits 1.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runChecked(func(stdout, stderr io.Writer) int {
		return dispatch(args, stdin, stdout, stderr)
	}, stdout, stderr)
}

// dispatch runs the command args name.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmds := map[string]func([]string, io.Reader, io.Writer, io.Writer) int{
		"generate": generateCmd,
		"check":    checkCmd,
		"diff":     diffCmd,
		"names":    namesCmd,
		"wqe":      wqeCmd,
		"cqe":      cqeCmd,
		"replay":   replayCmd,
		"devices":  devicesCmd,
		"version":  versionCmd,
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mlx5gen: unknown command %q\n%s", args[0], usage)
		return 2
	}
	return cmd(args[1:], stdin, stdout, stderr)
}

// failf prints an error and returns the failure status.
func failf(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "mlx5gen: "+format+"\n", args...)
	return 1
}
