package model

// Const is a Go constant with its C name and value.
type Const struct {
	Name  string
	Value Value
	Enum  *Enum  // the named type it belongs to; nil for an untyped constant
	CEnum *CEnum // the C enum it is a member of; nil for a macro
	// Meaning is what the value says, from the spec (enum members).
	Meaning string
	Src     Source
}

// CEnum is the C enum of a constant: where it is declared and its first
// enumerator (what names an anonymous enum).
type CEnum struct {
	File  string
	First string
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
