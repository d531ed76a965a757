package model

// PRM is the device's command interface as the generated/mlx5prm package
// prints it: the enums and layouts of spec/hw's PRM descriptors. It does
// not depend on the header.
type PRM struct {
	Spec    []string // spec files that describe it, relative to the spec directory
	Enums   []*PRMEnum
	Layouts []*Layout
}

// PRMEnum is a named value type of PRM fields.
type PRMEnum struct {
	Name   string // cmd_status
	GoName string // CmdStatus
	Type   IntType
	Width  int
	Doc    string
	Values []*PRMValue
	Src    Source
}

// PRMValue is one value of a PRM enum, under mlx5_ifc.h's name.
type PRMValue struct {
	Name    string
	Value   uint64
	Meaning string
}

// LayoutKind is what a layout field holds.
type LayoutKind uint8

const (
	LayoutInt    LayoutKind = iota // an unsigned value of Width bits (at most 64)
	LayoutBytes                    // Width/8 bytes (key material)
	LayoutNested                   // another layout
	LayoutUnion                    // a region read as one of several layouts
)

// Layout is one PRM layout, generated as a byte-array type.
type Layout struct {
	Name   string // create_mkey_in
	GoName string // CreateMkeyIn
	Bits   int
	Doc    string
	Fields []*LayoutField
	Src    Source
}

// Bytes is the layout's size in bytes.
func (l *Layout) Bytes() int { return l.Bits / 8 }

// LayoutField is one field of a layout.
type LayoutField struct {
	Name   string
	GoName string // the getter; the setter is "Set" + GoName
	Bit    int    // from the layout's first bit (the most significant bit of byte 0)
	Width  int
	Kind   LayoutKind
	Type   IntType   // LayoutInt: the smallest unsigned type that holds Width bits
	Enum   *PRMEnum  // LayoutInt: the type the getter returns and the setter takes
	Nested []*Layout // LayoutNested: one; LayoutUnion: each member
	Doc    string
	Src    Source
}
