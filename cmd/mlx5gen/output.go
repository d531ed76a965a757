package main

import (
	"fmt"
	"io"
)

// checkedWriter passes writes on and records the first error, so that a
// command whose output could not be written (a full disk, a closed pipe,
// /dev/full) fails instead of exiting 0. Once a write failed, the rest are
// dropped and reported written: a program mlx5gen runs (replay, devices)
// then still gets its output drained instead of blocking on a full pipe,
// and the command fails at its end with the first error.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return len(b), nil
	}
	n, err := c.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return len(b), nil
}

// runChecked runs a command with its output through checkedWriters and
// turns a failed write into status 1 with a message on standard error
// (when that still works).
func runChecked(cmd func(stdout, stderr io.Writer) int, stdout, stderr io.Writer) int {
	out, errw := &checkedWriter{w: stdout}, &checkedWriter{w: stderr}
	status := cmd(out, errw)
	if out.err != nil {
		fmt.Fprintf(errw, "mlx5gen: writing standard output: %v\n", out.err)
	}
	if (out.err != nil || errw.err != nil) && status == 0 {
		status = 1
	}
	return status
}
