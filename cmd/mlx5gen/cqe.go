package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/wqedecode"
)

const cqeUsage = "usage: mlx5gen cqe decode [-I dir | -rdma-core version] [-header file] [-spec dir] [HEX...]\n"

// cqeCmd prints a CQE field by field from the model of the header it
// reads, as wqe decode does a WQE; an error CQE also gets its syndrome
// explained, which is what a failed work completion leaves a user with.
func cqeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "decode" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stdout, cqeUsage)
			return 0
		}
		fmt.Fprint(stderr, cqeUsage)
		return 2
	}
	fs := flag.NewFlagSet("cqe decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := inputFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, cqeUsage+"\n"+
			"Decodes a 64- or 128-byte CQE given in hex (as arguments, or on standard input; spaces,\n"+
			"newlines and colons are ignored) and prints every field by name; for an error CQE, the\n"+
			"syndrome's name and meaning, the vendor syndrome and the failed WQE's opcode. Of a\n"+
			"128-byte CQE the second half is the CQE.\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args[1:], stderr); !ok {
		return st
	}
	text, err := hexInput(fs.Args(), stdin, "a CQE is 64 or 128 bytes")
	if err != nil {
		return failf(stderr, "%v", err)
	}
	raw, err := parseHex(text)
	if err != nil {
		return failf(stderr, "the CQE is not hex: %v", err)
	}
	if len(raw) != 64 && len(raw) != 128 {
		return failf(stderr, "%d bytes: a CQE is 64 or 128 bytes", len(raw))
	}
	cfg, err := in.config("mlx5dv")
	if err != nil {
		return configFail(fs, stderr, err)
	}
	res, err := gen.Load(cfg)
	if err != nil {
		return failLines(stderr, err)
	}
	dec, err := wqedecode.New(res.Package)
	if err != nil {
		return failf(stderr, "%v", err)
	}
	c, err := dec.CQE(raw[len(raw)-64:])
	if err != nil {
		return failf(stderr, "%v", err)
	}
	printCQE(stdout, c, len(raw))
	return 0
}

func printCQE(w io.Writer, c *wqedecode.CQE, size int) {
	if size == 128 {
		fmt.Fprintln(w, "128-byte CQE: bytes 0-63 hold inline-scattered data, not decoded; offsets below are in bytes 64-127")
	}
	fmt.Fprintf(w, "opcode %s, laid out as %s\n", c.Opcode, c.Layout)
	for _, f := range c.Fields {
		fmt.Fprintf(w, "%4d  %s: %s\n", f.Offset, f.Name, f.Text)
	}
	if c.WQEOpcode != "" {
		fmt.Fprintf(w, "WQE opcode: %s\n", c.WQEOpcode)
	}
	if !c.Err {
		return
	}
	fmt.Fprintf(w, "syndrome: %s", c.Syndrome)
	if c.Meaning != "" {
		fmt.Fprintf(w, ": %s", c.Meaning)
	}
	fmt.Fprintf(w, "\nvendor syndrome: %#x\n", c.VendorSyndrome)
}
