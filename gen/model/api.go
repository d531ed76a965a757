package model

// API is the part of the package generated from the functions, structs and
// rules of the spec.
type API struct {
	Funcs     []*Func
	NumFuncs  int // the number of Func values: every function of the spec, available or not
	Mirrors   []*Mirror
	Opaque    []*Opaque // structs described without a mirror
	Rules     []*Rule
	Uncovered []string // mlx5dv functions and structs of the header no descriptor covers

	// ChainRule[c][f] is the rule a failure of chain check c in function
	// f reports: the rule of that check that names f, or the first rule of
	// the check.
	ChainRule [][]*Rule
}

// Opaque is a struct the spec describes as opaque: it gets no mirror, and
// the bindings hold it only through a handle type, emitted even when no
// described function takes it, so the type a user needs is there.
type Opaque struct {
	CName  string // struct tag
	GoName string // the handle type's Go name (QPEx)
	Reason string // one line: why it has no mirror
	Man    string
	Doc    string
}
