package model

// Mirror is a Go struct with the exact layout of a C struct of the API.
type Mirror struct {
	CName   string
	GoName  string
	File    string // the header that declares it
	Size    int64  // C's sizeof
	Align   int64  // C's _Alignof
	GoAlign int64  // the alignment Go gives the mirror's fields; below Align, a zero-size field supplies C's
	Man     string
	Doc     string
	Fields  []*MirrorField
	Rules   []*Rule // argument rules on its fields, in spec order
}

// MirrorKind is how a C member is mirrored in Go.
type MirrorKind uint8

const (
	MInt      MirrorKind = iota // integer or enum
	MBool                       // _Bool
	MArray                      // array of integers
	MPointer                    // pointer to a mirrored struct
	MRawPtr                     // any other pointer: unsafe.Pointer
	MNested                     // a mirrored struct by value
	MBytes                      // anything else by value, as bytes
	MPtrUnion                   // a union of pointers: unsafe.Pointer with typed accessors
	MUnion                      // another union: bytes with accessors
)

// MirrorField is one member of a mirror (a direct member of the C record).
type MirrorField struct {
	CName   string // "" for an anonymous union
	GoName  string
	Offset  int64
	Size    int64
	Kind    MirrorKind
	Int     IntType // MInt, MArray element
	Len     int64   // MArray, MBytes
	Enum    *Enum   // MInt: the named type, when the spec gives the enum
	Names   *Enum   // MInt: the enum or flag set whose names its values take (even when Enum is nil)
	Target  *Mirror // MPointer, MNested
	Members []*UnionMember
	When    *Cond // validate (descend) only when this holds
	Doc     string
}

// UnionMember is one member of a mirrored union.
type UnionMember struct {
	CName  string // as spec and C name it: dci_streams, or sig.crc
	GoName string
	Offset int64 // within the union
	Kind   MirrorKind
	Int    IntType
	Target *Mirror
	When   *Cond
}

// Cond is a field condition of a check or of a union member.
type Cond struct {
	Field   *MirrorField
	OneOf   []uint64
	Bits    uint64 // the field has all these bits
	Clear   uint64 // the field has none of these bits
	NotNull bool
}
