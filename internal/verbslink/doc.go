// Package verbslink holds the tests of the generated cgo bindings
// (generated/mlx5verbs) that are not generated: the test binary links
// against the installed libibverbs and libmlx5 and runs (link_test.go), and,
// built with the tag mlx5gen_double, cgo's pointer rules hold for the structs
// the bindings pass (pointers_test.go), also under GOEXPERIMENT=cgocheck2
// (cgocheck2_test.go re-runs the double's tests so built).
package verbslink
