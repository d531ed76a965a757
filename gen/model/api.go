package model

// API is the part of the package generated from the functions, structs and
// rules of the spec.
type API struct {
	Funcs     []*Func
	NumFuncs  int // the number of Func values: every function of the spec, available or not
	Mirrors   []*Mirror
	Rules     []*Rule
	Uncovered []string // mlx5dv functions and structs of the header no descriptor covers

	// ChainRule[c][f] is the rule a failure of chain check c in function
	// f reports: the rule of that check that names f, or the first rule of
	// the check.
	ChainRule [][]*Rule
}
