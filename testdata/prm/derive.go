//go:build ignore

// derive prints the table of PRM field positions that
// generated/mlx5prm's cross-check reads: for each named mlx5_ifc layout
// of an mlx5_ifc.h, its size and every field that is not reserved, with
// the field's bit offset from the start of the layout and its width in
// bits, and the values of the named enumerators. It reads the header as data (the u8 name[width] members, nested
// struct and union members) and keeps none of its text but the names.
//
//	git -C <rdma-core> show v64.0:providers/mlx5/mlx5_ifc.h > /tmp/mlx5_ifc.h
//	go run testdata/prm/derive.go -src '...' -values MLX5_CMD_OP_CREATE_MKEY,... /tmp/mlx5_ifc.h mkc create_mkey_in ... > testdata/prm/mlx5_ifc-rdma-core-v64.0.tsv
//
// testdata/prm/derive.sh runs it with the layouts and enumerators the spec describes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

type member struct {
	name  string
	width uint64 // bits; 0 when nested is set
	ref   string // a nested struct or union (its name without mlx5_ifc_ and _bits)
}

// enumVal matches an enumerator with an explicit value: NAME = 0x10, or
// NAME = 0x1a << 1.
var enumVal = regexp.MustCompile(`^\s*([A-Z][A-Z0-9_]*)\s*=\s*(\w+)(?:\s*<<\s*(\w+))?\s*,?\s*$`)

type record struct {
	union   bool
	members []member
}

var (
	open   = regexp.MustCompile(`^(struct|union) mlx5_ifc_(\w+)_bits \{`)
	bits   = regexp.MustCompile(`^\s*u8\s+(\w+)((?:\[\w+\])+);`)
	dims   = regexp.MustCompile(`\[(\w+)\]`)
	nested = regexp.MustCompile(`^\s*(?:struct|union) mlx5_ifc_(\w+)_bits\s+(\w+);`)
)

func main() {
	src := flag.String("src", "", "the header's origin, printed in the table's header")
	values := flag.String("values", "", "comma-separated enumerators whose values to print as (enum) rows")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: derive -src ORIGIN mlx5_ifc.h layout...")
		os.Exit(2)
	}
	recs, enums, err := parse(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "# PRM field positions derived from %s by testdata/prm/derive.go.\n", *src)
	fmt.Fprintln(w, "# layout\tfield\tbit offset\twidth (bits); the row (size) gives the layout's size;")
	fmt.Fprintln(w, "# (enum)\tenumerator\tvalue\t- for the enumerators' values.")
	for _, name := range flag.Args()[1:] {
		r := recs[name]
		if r == nil {
			fmt.Fprintf(os.Stderr, "no layout %s\n", name)
			os.Exit(1)
		}
		fmt.Fprintf(w, "%s\t(size)\t0x0\t%#x\n", name, size(recs, name))
		var off uint64
		for _, m := range r.members {
			width := m.width
			if m.ref != "" {
				width = size(recs, m.ref)
			}
			if !regexp.MustCompile(`^reserved`).MatchString(m.name) {
				fmt.Fprintf(w, "%s\t%s\t%#x\t%#x\n", name, m.name, off, width)
			}
			if !r.union {
				off += width
			}
		}
	}
	for _, name := range strings.Split(*values, ",") {
		if name == "" {
			continue
		}
		v, ok := enums[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no enumerator %s\n", name)
			os.Exit(1)
		}
		fmt.Fprintf(w, "(enum)\t%s\t%#x\t-\n", name, v)
	}
}

func parse(path string) (map[string]*record, map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	recs := map[string]*record{}
	enums := map[string]uint64{}
	var cur *record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := open.FindStringSubmatch(line); m != nil {
			cur = &record{union: m[1] == "union"}
			recs[m[2]] = cur
			continue
		}
		if cur == nil {
			if m := enumVal.FindStringSubmatch(line); m != nil {
				v, err := strconv.ParseUint(m[2], 0, 64)
				if err != nil {
					continue // a value written with another enumerator's name
				}
				if m[3] != "" {
					sh, err := strconv.ParseUint(m[3], 0, 6)
					if err != nil {
						continue
					}
					v <<= sh
				}
				enums[m[1]] = v
			}
			continue
		}
		if line == "};" {
			cur = nil
		} else if m := bits.FindStringSubmatch(line); m != nil {
			width := uint64(1)
			for _, d := range dims.FindAllStringSubmatch(m[2], -1) {
				n, err := strconv.ParseUint(d[1], 0, 64)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %v", line, err)
				}
				width *= n
			}
			cur.members = append(cur.members, member{name: m[1], width: width})
		} else if m := nested.FindStringSubmatch(line); m != nil {
			cur.members = append(cur.members, member{name: m[2], ref: m[1]})
		}
	}
	return recs, enums, sc.Err()
}

func size(recs map[string]*record, name string) uint64 {
	r := recs[name]
	var n uint64
	for _, m := range r.members {
		w := m.width
		if m.ref != "" {
			w = size(recs, m.ref)
		}
		if r.union {
			n = max(n, w)
		} else {
			n += w
		}
	}
	return n
}
