package resolve

import (
	"regexp"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// The header may hide a function behind a function-like macro
// (ibv_query_port, ibv_reg_mr) or define it static inline
// (ibv_create_cq_ex): the bindings then cannot call a library symbol and
// need a C shim. A descriptor says so (macro, inline), and these checks
// hold it to the header both ways, so that a release that turns a function
// into a macro fails the check instead of generating a call that does not
// link.

// firstCallRE finds the function a macro's replacement list calls first.
var firstCallRE = regexp.MustCompile(`^\s*\(?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// fnMacro finds the header's function-like macro named name.
func (b *builder) fnMacro(name string) *cheader.Skipped {
	for _, s := range b.c.Skipped {
		if s.Name == name && s.Reason == cheader.SkipFunctionLike {
			return s
		}
	}
	return nil
}

// callable checks a function's macro and inline keys against the header
// and returns the function whose prototype a C call has (nil when the
// header has none).
func (b *builder) callable(sf *spec.Function) *cheader.Func {
	m := b.fnMacro(sf.Name)
	ver := orUnknown(b.c.Version)
	proto := sf.Name
	switch {
	case sf.Macro != "" && m == nil:
		b.errorf(sf.Pos, "function %s: macro: %s, but %s (rdma-core %s) defines no function-like macro %s", sf.Name, sf.Macro, b.c.Header, ver, sf.Name)
	case sf.Macro == "" && m != nil:
		b.errorf(sf.Pos, "function %s: %s (rdma-core %s) defines %s as a function-like macro (%s at %s); say macro: with the function its calls reach",
			sf.Name, b.c.Header, ver, sf.Name, macroCallee(m), m.Pos)
	case m != nil:
		proto = sf.Macro
		if sf.Macro != sf.Name && macroCallee(m) != sf.Macro {
			b.errorf(sf.Pos, "function %s: macro: %s, but the macro at %s calls %s", sf.Name, sf.Macro, m.Pos, macroCallee(m))
		}
	}
	cf := b.c.Func(proto)
	if cf == nil {
		b.errorf(sf.Pos, "function %s: not in %s (rdma-core %s)", proto, b.c.Header, ver)
		return nil
	}
	inline := cf.Static && cf.Inline && cf.Body
	switch {
	case sf.Inline && !inline:
		b.errorf(sf.Pos, "function %s: inline: true, but %s at %s is not a static inline definition (rdma-core %s)", sf.Name, proto, cf.Pos, ver)
	case !sf.Inline && inline:
		b.errorf(sf.Pos, "function %s: %s at %s is static inline (rdma-core %s); say inline: true", sf.Name, proto, cf.Pos, ver)
	}
	return cf
}

// macroCallee is the function a function-like macro's replacement calls
// first, or its replacement list when it calls none.
func macroCallee(m *cheader.Skipped) string {
	if x := firstCallRE.FindStringSubmatch(m.Replacement); x != nil {
		return x[1]
	}
	return m.Replacement
}
