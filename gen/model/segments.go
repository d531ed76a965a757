package model

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
	GoName  string // WQECtrlSeg
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
	GoName string // KeyDCKey
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

// Accessor returns the Go name of the getter of the field or part with C
// name cname, "" if the segment has none.
func (s *Segment) Accessor(cname string) string {
	for _, f := range s.Fields {
		if f.CName == cname {
			return f.GoName
		}
		for _, p := range f.Parts {
			if p.Name == cname {
				return p.GoName
			}
		}
	}
	return ""
}
