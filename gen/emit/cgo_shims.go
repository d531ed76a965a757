package emit

import (
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// The shims take and return only fixed-width integers and void pointers,
// which cgo maps the same way everywhere; each casts back to the header's
// types when it calls the function, so the C compiler checks the call
// against the prototype (or expands the macro, or inlines the function).

func shimName(fn *model.Func) string { return "mlx5gen_" + fn.Name }

// shimResult is the C result type of fn's shim.
func shimResult(fn *model.Func) string {
	switch {
	case fn.CResult == "":
		return "void"
	case fn.ResInt != nil:
		return cFixed(*fn.ResInt)
	}
	return "void *"
}

// shimParam is the C type a shim takes for prm.
func shimParam(prm *model.Param) string {
	switch {
	case prm.Bool:
		return "uint8_t"
	case prm.Kind == model.ParamInt:
		return cFixed(prm.Int)
	case prm.Kind == model.ParamPointer:
		return "void *"
	}
	return "const void *" // a struct by value, passed by address
}

// shimProto is the prototype of fn's shim.
func shimProto(fn *model.Func) string {
	var ps []string
	for _, prm := range fn.Params {
		ps = append(ps, cDecl(shimParam(prm), prm.Name))
	}
	if len(ps) == 0 {
		ps = []string{"void"}
	}
	return cDecl(shimResult(fn), fmt.Sprintf("%s(%s)", shimName(fn), strings.Join(ps, ", ")))
}

// cDecl declares name with type t: "void *p", "int n".
func cDecl(t, name string) string {
	if strings.HasSuffix(t, "*") {
		return t + name
	}
	return t + " " + name
}

// shimCallArg is prm as the real function takes it.
func shimCallArg(prm *model.Param) string {
	if prm.Kind == model.ParamOther && !prm.Bool {
		return fmt.Sprintf("*(const %s *)%s", prm.CType, prm.Name)
	}
	return fmt.Sprintf("(%s)%s", prm.CType, prm.Name)
}

// shimsHeader declares every shim.
func shimsHeader(p *model.Package) []byte {
	var b strings.Builder
	b.WriteString(cHeader(p, ""))
	b.WriteString("\n#ifndef MLX5GEN_SHIMS_H\n#define MLX5GEN_SHIMS_H\n\n#include <stdint.h>\n#include <infiniband/verbs.h>\n#include <infiniband/mlx5dv.h>\n\n")
	for _, fn := range p.API.Funcs {
		what := "declared in the header"
		switch {
		case fn.Macro != "":
			what = "a function-like macro of the header, calling " + fn.Macro
		case fn.Inline:
			what = "static inline in the header"
		}
		fmt.Fprintf(&b, "// %s: %s.\n%s;\n", fn.Name, what, shimProto(fn))
	}
	b.WriteString("\n#endif\n")
	return []byte(b.String())
}

// shimsSource defines every shim as a call of its function.
func shimsSource(p *model.Package) []byte {
	var b strings.Builder
	b.WriteString(cHeader(p, "!"+DoubleTag))
	b.WriteString("\n#include \"shims.h\"\n")
	for _, fn := range p.API.Funcs {
		var args []string
		for _, prm := range fn.Params {
			args = append(args, shimCallArg(prm))
		}
		call := fmt.Sprintf("%s(%s)", fn.Name, strings.Join(args, ", "))
		fmt.Fprintf(&b, "\n%s {\n", shimProto(fn))
		switch r := shimResult(fn); {
		case r == "void":
			fmt.Fprintf(&b, "\t%s;\n", call)
		case r == "void *":
			fmt.Fprintf(&b, "\treturn (void *)%s;\n", call)
		default:
			fmt.Fprintf(&b, "\treturn %s;\n", call)
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}
