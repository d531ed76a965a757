package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

func wqeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "decode" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stdout, "usage: mlx5gen wqe decode [-dci] [HEX...]\n")
			return 0
		}
		fmt.Fprint(stderr, "usage: mlx5gen wqe decode [-dci] [HEX...]\n")
		return 2
	}
	fs := flag.NewFlagSet("wqe decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dci := fs.Bool("dci", false, "the WQE was posted on a DC initiator (an address vector follows the control segment)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: mlx5gen wqe decode [-dci] [HEX...]\n\n"+
			"Decodes a WQE given in hex (as arguments, or on standard input; spaces, newlines and colons\n"+
			"are ignored) and prints every segment and field by name.\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args[1:], stderr); !ok {
		return st
	}
	text := strings.Join(fs.Args(), "")
	if fs.NArg() == 0 {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return failf(stderr, "%v", err)
		}
		text = string(b)
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == ':' {
			return -1
		}
		return r
	}, strings.TrimPrefix(strings.TrimSpace(text), "0x"))
	wqe, err := hex.DecodeString(text)
	if err != nil {
		return failf(stderr, "the WQE is not hex: %v", err)
	}
	segs, err := mlx.Split(wqe, mlx.SplitOptions{DCI: *dci})
	for _, s := range segs {
		fmt.Fprintf(stdout, "%4d  %s\n", s.Offset, s.View)
	}
	if err != nil {
		return failf(stderr, "%v", err)
	}
	return 0
}
