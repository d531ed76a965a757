package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/wqedecode"
)

const wqeUsage = "usage: mlx5gen wqe decode [-I dir | -rdma-core version] [-header file] [-spec dir] [-dci] [HEX...]\n"

// maxWQEBytes bounds a WQE: 16 WQEBBs of 64 bytes (the control segment's ds
// has 6 bits: at most 63 16-byte units).
const maxWQEBytes = 1024

// wqeCmd splits a WQE by the model of the header it reads (the flags of
// generate), so it decodes the segments of any rdma-core release.
func wqeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "decode" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stdout, wqeUsage)
			return 0
		}
		fmt.Fprint(stderr, wqeUsage)
		return 2
	}
	fs := flag.NewFlagSet("wqe decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := inputFlags(fs)
	dci := fs.Bool("dci", false, "the WQE was posted on a DC initiator (an address vector follows the control segment)")
	fs.Usage = func() {
		fmt.Fprint(stderr, wqeUsage+"\n"+
			"Decodes a WQE given in hex (as arguments, or on standard input; spaces, newlines and colons\n"+
			"are ignored) and prints every segment and field by name, as the header (and the spec's\n"+
			"segments and WQE formats) describe them.\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args[1:], stderr); !ok {
		return st
	}
	text, err := hexInput(fs.Args(), stdin, fmt.Sprintf("a WQE is at most %d bytes (%d hex digits)", maxWQEBytes, 2*maxWQEBytes))
	if err != nil {
		return failf(stderr, "%v", err)
	}
	wqe, err := parseHex(text)
	if err != nil {
		return failf(stderr, "the WQE is not hex: %v", err)
	}
	if len(wqe) > maxWQEBytes {
		return failf(stderr, "%d bytes: a WQE is at most %d (ds has 6 bits: 63 16-byte units, within 16 WQEBBs)", len(wqe), maxWQEBytes)
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
	segs, err := dec.Split(wqe, *dci)
	for _, s := range segs {
		fmt.Fprintf(stdout, "%4d  %s\n", s.Offset, s.Text)
	}
	if err != nil {
		return failf(stderr, "%v", err)
	}
	if end := 16 * int(wqe[7]&0x3f); len(wqe) > end {
		fmt.Fprintf(stdout, "%4d  %d bytes after ds (%d bytes): not part of the WQE\n", end, len(wqe)-end, end)
	}
	return 0
}

// maxHexInput bounds what wqe decode reads from standard input: a WQE of
// at most maxWQEBytes, in hex, with room for spacing.
const maxHexInput = 64 << 10

// parseHex decodes hex digits, ignoring white space and colons (and a
// leading 0x); an error gives the offending byte's offset and line:column.
func parseHex(text string) ([]byte, error) {
	start := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	if strings.HasPrefix(text[start:], "0x") || strings.HasPrefix(text[start:], "0X") {
		start += 2
	}
	out := make([]byte, 0, len(text)/2)
	var hi byte
	half := false
	for i := start; i < len(text); i++ {
		c := text[i]
		var v byte
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':':
			continue
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			line := strings.Count(text[:i], "\n") + 1
			col := i - strings.LastIndexByte(text[:i], '\n')
			return nil, fmt.Errorf("%q at offset %d (line %d, column %d)", text[i:i+1], i, line, col)
		}
		if half {
			out = append(out, hi<<4|v)
		}
		hi, half = v, !half
	}
	if half {
		return nil, fmt.Errorf("an odd number of hex digits (%d)", 2*len(out)+1)
	}
	return out, nil
}

// hexInput is the hex text of a decode command: its arguments joined, or
// standard input when there are none, read up to maxHexInput bytes (what
// says how large the decoded thing is, for the error past that).
func hexInput(args []string, stdin io.Reader, what string) (string, error) {
	if len(args) > 0 {
		return strings.Join(args, ""), nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxHexInput+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxHexInput {
		return "", fmt.Errorf("standard input holds more than %d bytes; %s", maxHexInput, what)
	}
	return string(b), nil
}
