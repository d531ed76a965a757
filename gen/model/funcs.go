package model

// Func is a function of the API.
type Func struct {
	// ID is the function's Func value: its index among all the spec's
	// functions, gated out or not, so that a value means the same function
	// in the packages of every rdma-core release (a downstream package's
	// aliases and errors.As on a RuleError depend on it).
	ID      int
	Name    string
	GoName  string // FnWRMkeyConfigure
	Man     string // the man page that documents it
	Kind    string // one of vocab.FuncKinds
	Returns string // the return convention (spec/README.md)
	Inline  bool   // the function C calls reach is static inline: no library symbol
	Macro   string // the header's function-like macro of Name calls this prototype; "" for none
	Params  []*Param
	QPTypes []string // of vocab.QPTypes
	SendOp  *Const
	MlxOp   *Const
	WRFlags []*Const
	Takes   []string // setter groups, of vocab.SetterGroups
	Needs   []string
	Group   string
	Of      []*Func
	Rules   []*Rule // argument rules on its parameters, in spec order

	// What the cgo bindings need (gen/emit/cgo_*.go).
	CResult string   // the C result type as the header spells it; "" for void
	Result  CRef     // what the result points to, when it is a pointer
	ResInt  *IntType // an integer result: its Go type
}

// CRef is what a C pointer (or a struct passed by value) refers to.
type CRef struct {
	Mirror *Mirror  // a mirrored struct
	Handle string   // another struct, by its tag: an opaque handle
	GoName string   // Handle: the handle type's Go name (Context, QPEx)
	Depth  int      // levels of pointer (1 for struct x *, 2 for struct x **)
	Int    *IntType // a pointer to an integer (int *): its Go type
	String bool     // a result of type const char *: a C string
}

// ParamKind is what a parameter holds.
type ParamKind uint8

const (
	ParamInt     ParamKind = iota // an integer or an enum: Int
	ParamPointer                  // a pointer
	ParamOther                    // anything else (a struct by value)
)

// Param is a function parameter.
type Param struct {
	Name   string
	GoName string
	Kind   ParamKind
	Int    IntType // ParamInt: its Go type
	Enum   *Enum   // the enum or flag set whose names its values take
	Typed  bool    // the Go parameter has the type of Enum (same size)

	CType string // the C type as the header spells it
	Const bool   // a pointer to const: C does not write through it
	Bool  bool   // _Bool
	Ref   CRef   // ParamPointer, ParamOther: what it refers to
}
