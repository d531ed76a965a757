// Command mlx5gen-replay is "mlx5gen replay": it replays reference vectors
// (testdata/vectors) through mlx5gen's send-queue writer, runtime/sq, and
// prints a verdict per case.
//
//	mlx5gen-replay [-v] FILE.json...
//
// It is a program of its own because it runs the runtime, and the runtime
// runs on the generated package: the generator (cmd/mlx5gen) must build
// without either, so that a broken generated package never blocks its own
// regeneration. cmd/mlx5gen runs this program for its replay command (see
// mlx5gen -h). Errors start with "mlx5gen:", as the command's; the exit
// status is 2 for a usage error and 1 for a failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mlx5gen/mlx5gen/internal/cqreplay"
	"github.com/mlx5gen/mlx5gen/internal/replay"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run replays vector files and prints a verdict per case: ok <id>, or
// FAIL <id>: <first difference>; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	verbose := fs.Bool("v", false, "after ok, print the documented divergence a case was held to")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mlx5gen replay [-v] FILE.json...\n\n"+
			"Replays reference vectors (testdata/vectors) through mlx5gen's send-queue writer and\n"+
			"compares every WQE byte, the producer index, the doorbell record and the BlueFlame writes;\n"+
			"CQE vectors (testdata/cqe-vectors) through the CQ poller, comparing every work completion\n"+
			"field, the consumer index, the doorbell record and the queues' bookkeeping.\n")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
	}
	// The flag package's own messages lack the prefix: print them here,
	// and the usage once.
	fs.SetOutput(io.Discard)
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
		fs.Usage()
		return 2
	case fs.NArg() == 0:
		fs.Usage()
		return 2
	}
	passed, failed := 0, 0
	for _, path := range fs.Args() {
		outcomes, err := replayFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "mlx5gen: %v\n", err)
			return 1
		}
		for _, o := range outcomes {
			if o.err != nil {
				failed++
				fmt.Fprintf(stdout, "FAIL %s: %v\n", o.id, o.err)
				continue
			}
			passed++
			fmt.Fprintf(stdout, "ok %s\n", o.id)
			if *verbose {
				for _, d := range o.divergences {
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

// outcome is a case's verdict, from either kind of vector file.
type outcome struct {
	id          string
	err         error
	divergences []string
}

// replayFile replays a WQE vector file (testdata/vectors) through the
// send-queue writer, or a CQE vector file (testdata/cqe-vectors, told
// apart by its schema) through the CQ poller.
func replayFile(path string) ([]outcome, error) {
	head, err := readHead(path)
	if err != nil {
		return nil, err
	}
	var out []outcome
	if cqreplay.IsCQE(head) {
		f, cases, err := cqreplay.Load(path)
		if err != nil {
			return nil, err
		}
		for _, o := range cqreplay.Replay(f, cases) {
			out = append(out, outcome{o.ID, o.Err, o.Divergences})
		}
		return out, nil
	}
	f, err := vectors.Load(path)
	if err != nil {
		return nil, err
	}
	for _, o := range replay.File(f) {
		var divs []string
		for _, d := range o.Divergences {
			divs = append(divs, d.String())
		}
		out = append(out, outcome{o.ID, o.Err, divs})
	}
	return out, nil
}

// readHead reads a vector file, bounded as both loaders bound it.
func readHead(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(io.LimitReader(fh, vectors.MaxFileSize+1))
}
