// Package model is the Go model of a generated package: what the emitters
// (gen/emit) print, with every name, Go type, size, alignment, man page and
// rule text resolved and every cross reference a pointer, so that emission
// never looks anything up and cannot fail on a name. gen/resolve builds it
// from the header's C model (gen/cheader) and the spec (gen/spec), and
// finds every user error while doing so; this package imports neither, so
// that the emitters depend on the model alone.
//
// One file per concept: enums.go, segments.go, formats.go, funcs.go,
// mirrors.go, rules.go, prm.go (the PRM layouts). names.go derives every
// Go name of the generated package (a renaming is made there); the words of the spec it numbers are
// in gen/vocab.
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
	Split    Splitter
	API      *API
	PRM      *PRM // the PRM layouts (generated/mlx5prm), nil when the spec has none

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
