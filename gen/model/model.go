// Package model is the Go side of mlx5gen: it combines the C model of the
// header (gen/cheader) with the spec descriptors (gen/spec) into a package
// description whose names, Go types, sizes, man pages and cross references
// are resolved, so the emitters only print. Every user error (a spec entry
// naming nothing in the header, a name collision, a field past the end of
// its segment) is found here, with its position, before anything is
// written.
//
// The types of this package are all the emitters see: they hold no
// cheader or spec value, so gen/emit depends on neither. One file per
// concept: enums.go, segments.go, formats.go, funcs.go, mirrors.go,
// rules.go; names.go derives every Go name and vocab.go holds the
// vocabularies (chain checks, setter groups, QP types, the identifiers the
// generated package declares by itself).
package model

import (
	"strconv"

	"github.com/mlx5gen/mlx5gen/gen/diag"
)

// Package is one generated Go package.
type Package struct {
	Name    string   // Go package name
	Header  string   // infiniband/mlx5dv.h
	Version string   // rdma-core release of the header, "" if unknown
	Spec    []string // spec files read, relative to the spec directory

	Consts   []*Const // every constant, in source order
	Enums    []*Enum  // named enum types
	Segments []*Segment
	Formats  []*Format
	API      *API

	// Warnings are gates the header disagrees with (see gated); they do
	// not stop generation.
	Warnings []*diag.Error
}

// Source is where a generated item comes from, for comments and errors.
type Source struct {
	Header diag.Pos // position in the header, if any
	Spec   diag.Pos // position in the spec, if any
}

// IntType is a fixed-size Go integer type.
type IntType struct {
	Bits   int
	Signed bool
}

func (t IntType) String() string {
	s := "uint"
	if t.Signed {
		s = "int"
	}
	switch t.Bits {
	case 8:
		return s + "8"
	case 16:
		return s + "16"
	case 32:
		return s + "32"
	}
	return s + "64"
}

// Value is a constant's value: its 64 bits, and whether C reads them as
// signed.
type Value struct {
	Bits   uint64
	Signed bool
}

// Int64 returns v as an int64 (wrapping for unsigned values above MaxInt64).
func (v Value) Int64() int64 { return int64(v.Bits) }

// Negative reports whether v is a negative signed value.
func (v Value) Negative() bool { return v.Signed && int64(v.Bits) < 0 }

func (v Value) String() string {
	if v.Signed {
		return strconv.FormatInt(int64(v.Bits), 10)
	}
	return strconv.FormatUint(v.Bits, 10)
}
