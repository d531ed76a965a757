// Package model is the Go side of mlx5gen: it combines the C model of the
// header (gen/cheader) with the spec descriptors (gen/spec) into a package
// description whose names, types and cross references are resolved, so the
// emitters only print. Every user error (a spec entry naming nothing in the
// header, a name collision, a field past the end of its segment) is found
// here, with its position, before anything is written.
package model

import (
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/spec"
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

	C *cheader.Model

	// Warnings are gates the header disagrees with (see gated); they do
	// not stop generation.
	Warnings []*Warning
}

// Source is where a generated item comes from, for comments and errors.
type Source struct {
	Header cheader.Pos // position in the header, if any
	Spec   spec.Pos    // position in the spec, if any
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

// Const is a Go constant with its C name and value.
type Const struct {
	Name  string
	Value cheader.Value
	Enum  *Enum         // the named type it belongs to; nil for an untyped constant
	CEnum *cheader.Enum // the C enum it is a member of; nil for a macro
	Src   Source
}

// Enum is a named integer type for a C enum.
type Enum struct {
	GoName     string
	CName      string // "enum ibv_access_flags", or a description of an anonymous enum
	Flags      bool
	Underlying IntType
	Members    []*Const
	Man        string
	Doc        string
	Src        Source
}

// FieldKind is what a segment field holds.
type FieldKind uint8

const (
	IntField    FieldKind = iota // an integer of Int.Bits, in Endian order
	IntArray                     // Len integers
	BytesField                   // Len bytes
	NestedField                  // another segment
)

// Endian is a field's byte order.
type Endian uint8

const (
	Big Endian = iota
	Little
	Native // host order: what the header declares without __be/__le
)

// Segment is a hardware structure (WQE or CQE segment) generated as a byte
// array type with accessors.
type Segment struct {
	CName   string // mlx5_wqe_ctrl_seg
	GoName  string // Mlx5WqeCtrlSeg
	Size    int
	Private string // source file of a segment not in the public header
	Union   bool
	Doc     string
	Fields  []*Field
	Omitted []string // zero-length trailing arrays the type does not cover
	Src     Source
}

// Field is one accessor pair of a segment.
type Field struct {
	CName  string // C member path: "key.dc_key"
	GoName string // KeyDcKey
	Offset int
	Kind   FieldKind
	Int    IntType // IntField, IntArray: element type (unsigned)
	Endian Endian
	Len    int      // IntArray: elements; BytesField: bytes
	Nested *Segment // NestedField
	Enum   *Enum    // IntField: the type getters return and setters take
	Parts  []*Part
	Doc    string
	Src    Source
}

// Size is the field's size in bytes.
func (f *Field) Size() int {
	switch f.Kind {
	case IntField:
		return f.Int.Bits / 8
	case IntArray:
		return f.Int.Bits / 8 * f.Len
	case BytesField:
		return f.Len
	}
	return f.Nested.Size
}

// Part is a named bit range of an integer field.
type Part struct {
	Name   string
	GoName string
	Shift  int
	Width  int
	Type   IntType // smallest unsigned type that holds Width bits
	Enum   *Enum
	Doc    string
	Src    Source
}

// StepKind is one element of a WQE format.
type StepKind uint8

const (
	StepSegment StepKind = iota // one fixed segment
	StepData                    // data segments or one inline segment, up to ds
	StepUMR                     // mkey context, translation and BSFs of a UMR
)

// Step is one element of a WQE format.
type Step struct {
	Kind    StepKind
	Segment *Segment
}

// Format is the layout of the WQEs of some opcodes after the control
// segment.
type Format struct {
	Name    string
	Opcodes []*Const
	Steps   []Step
	Doc     string
	Src     Source
}
