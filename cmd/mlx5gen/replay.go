package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mlx5gen/mlx5gen/internal/replay"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
)

// replayCmd replays vector files through runtime/sq and prints a verdict
// per case: ok <id>, or FAIL <id>: <first difference>.
func replayCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "after ok, print the documented divergence a case was held to")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mlx5gen replay [-v] FILE.json...\n\n"+
			"Replays reference vectors (testdata/vectors) through mlx5gen's send-queue writer and\n"+
			"compares every WQE byte, the producer index, the doorbell record and the BlueFlame writes.\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args, stderr); !ok {
		return st
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	passed, failed := 0, 0
	for _, path := range fs.Args() {
		f, err := vectors.Load(path)
		if err != nil {
			fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
			return 1
		}
		for _, o := range replay.File(f) {
			if o.Err != nil {
				failed++
				fmt.Fprintf(stdout, "FAIL %s: %v\n", o.ID, o.Err)
				continue
			}
			passed++
			fmt.Fprintf(stdout, "ok %s\n", o.ID)
			if *verbose {
				for _, d := range o.Divergences {
					fmt.Fprintf(stdout, "    divergence: %s\n", d)
				}
			}
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
