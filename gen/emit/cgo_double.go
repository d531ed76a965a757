package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// The test double (build tag mlx5gen_double) defines every shim as a
// recorder: the bytes of each argument (a pointer as its address, then the
// mirrored struct it points to; a struct by value as its bytes) are kept,
// errno is set and the configured result returned. double_test.go then
// proves, per function, that the Go arguments arrive byte for byte and that
// the return convention maps the results and errno.

func doubleHeader(p *model.Package) []byte {
	var b strings.Builder
	b.WriteString(cHeader(p, ""))
	b.WriteString(`
#ifndef MLX5GEN_DOUBLE_H
#define MLX5GEN_DOUBLE_H

#include <stddef.h>
#include <stdint.h>

void mlx5gen_double_reset(int64_t ret, int err);
int mlx5gen_double_ncalls(void);
int mlx5gen_double_func(int i);
const unsigned char *mlx5gen_double_call(int i, size_t *len);
int mlx5gen_double_overflow(void);

#endif
`)
	return []byte(b.String())
}

func doubleSource(p *model.Package) []byte {
	var b strings.Builder
	b.WriteString(cHeader(p, DoubleTag))
	b.WriteString(doubleRuntime)
	for _, fn := range p.API.Funcs {
		fmt.Fprintf(&b, "\n%s {\n\tint c = begin(%d);\n", shimProto(fn), fn.ID)
		for _, prm := range fn.Params {
			switch {
			case prm.Kind == model.ParamOther && prm.Ref.Mirror != nil:
				fmt.Fprintf(&b, "\trec(c, %s, %d);\n", prm.Name, prm.Ref.Mirror.Size)
			default:
				fmt.Fprintf(&b, "\trec(c, &%s, sizeof %s);\n", prm.Name, prm.Name)
				if prm.Kind == model.ParamPointer && prm.Ref.Depth == 1 && prm.Ref.Mirror != nil {
					fmt.Fprintf(&b, "\tif (%s)\n\t\trec(c, %s, %d);\n", prm.Name, prm.Name, prm.Ref.Mirror.Size)
				}
			}
		}
		b.WriteString("\terrno = err_next;\n")
		switch r := shimResult(fn); r {
		case "void":
		case "void *":
			b.WriteString("\treturn (void *)(intptr_t)ret_next;\n")
		default:
			fmt.Fprintf(&b, "\treturn (%s)ret_next;\n", r)
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// hasPointers reports whether a mirror holds pointers (the test double's
// test puts it in C memory and fills only what is not a pointer).
func hasPointers(m *model.Mirror) bool {
	for _, f := range m.Fields {
		switch f.Kind {
		case model.MPointer, model.MRawPtr, model.MPtrUnion:
			return true
		case model.MNested:
			if hasPointers(f.Target) {
				return true
			}
		}
	}
	return false
}

// patternValue is a value whose bytes differ per parameter and per byte,
// and stays positive for signed types.
func patternValue(i, bits int) uint64 {
	var v uint64
	for k := range bits / 8 {
		v |= uint64(0x10*(i%7+1)+k+1) << (8 * k)
	}
	return v
}

func doubleTestFile(p *model.Package, b Bindings, f *jen.File) {
	for _, fn := range p.API.Funcs {
		doubleTest(fn, b, f)
	}
}

// doubleArg declares the test value of prm and appends its expected bytes
// to want.
func doubleArg(i int, prm *model.Param, b Bindings) []jen.Code {
	v := jen.Id(prm.GoName)
	appendInt := func(bits int, x jen.Code) jen.Code {
		if bits == 8 {
			return jen.Id("want").Op("=").Append(jen.Id("want"), jen.Byte().Call(x))
		}
		return jen.Id("want").Op("=").Qual(binaryPkg, "NativeEndian").Dot(fmt.Sprintf("AppendUint%d", bits)).Call(jen.Id("want"), jen.Id(fmt.Sprintf("uint%d", bits)).Call(x))
	}
	ptr := func(decl jen.Code, addr jen.Code) []jen.Code {
		return []jen.Code{jen.Id(prm.GoName).Op(":=").Add(decl), jen.Id("want").Op("=").Id("appendPtr").Call(jen.Id("want"), addr)}
	}
	switch {
	case prm.Bool:
		return []jen.Code{v.Clone().Op(":=").True(), jen.Id("want").Op("=").Append(jen.Id("want"), jen.Lit(1))}
	case prm.Kind == model.ParamInt:
		return []jen.Code{v.Clone().Op(":=").Add(goParam(prm, b.Pure)).Call(hex(patternValue(i, prm.Int.Bits))), appendInt(prm.Int.Bits, v.Clone())}
	case prm.Kind == model.ParamOther && prm.Ref.Mirror != nil:
		m := prm.Ref.Mirror
		out := []jen.Code{jen.Var().Id(prm.GoName).Qual(b.Pure, m.GoName)}
		if !hasPointers(m) {
			out = append(out, jen.Id("fill").Call(unsafePointer.Clone().Call(jen.Op("&").Add(v.Clone())), jen.Lit(int(m.Size)), jen.Lit(i)))
		}
		return append(out, jen.Id("want").Op("=").Append(jen.Id("want"), jen.Id("bytesOf").Call(unsafePointer.Clone().Call(jen.Op("&").Add(v.Clone())), jen.Lit(int(m.Size))).Op("...")))
	case prm.Ref.Mirror != nil && prm.Ref.Depth == 1:
		m := prm.Ref.Mirror
		var out []jen.Code
		if hasPointers(m) {
			out = ptr(jen.Parens(jen.Op("*").Qual(b.Pure, m.GoName)).Call(jen.Id("d").Dot("alloc").Call(jen.Lit(int(m.Size)))), unsafePointer.Clone().Call(v.Clone()))
		} else {
			out = ptr(jen.New(jen.Qual(b.Pure, m.GoName)), unsafePointer.Clone().Call(v.Clone()))
			out = append(out, jen.Id("fill").Call(unsafePointer.Clone().Call(v.Clone()), jen.Lit(int(m.Size)), jen.Lit(i)))
		}
		return append(out, jen.Id("want").Op("=").Append(jen.Id("want"), jen.Id("bytesOf").Call(unsafePointer.Clone().Call(v.Clone()), jen.Lit(int(m.Size))).Op("...")))
	case prm.Ref.Depth >= 2 && (prm.Ref.Mirror != nil || prm.Ref.Handle != "" && prm.Ref.Depth == 2):
		t := goRefType(prm.Ref, prm.Ref.Depth-1, b.Pure)
		return ptr(jen.New(t), unsafePointer.Clone().Call(v.Clone()))
	case prm.Ref.Handle != "" && prm.Ref.Depth == 1:
		return ptr(jen.Id(prm.Ref.GoName+"From").Call(jen.Id("d").Dot("alloc").Call(jen.Lit(8))), v.Clone().Dot("p"))
	case prm.Ref.Int != nil && prm.Ref.Depth == 1:
		return ptr(jen.New(intType(*prm.Ref.Int)), unsafePointer.Clone().Call(v.Clone()))
	}
	return ptr(jen.Id("d").Dot("alloc").Call(jen.Lit(8)), v.Clone())
}

// doubleTest writes the test of fn against the double: its arguments
// arrive byte for byte, and each outcome of its return convention comes
// back as the binding promises.
func doubleTest(fn *model.Func, b Bindings, f *jen.File) {
	body := []jen.Code{jen.Id("d").Op(":=").Id("newDouble").Call(jen.Id("t")), jen.Var().Id("want").Index().Byte()}
	var args []jen.Code
	for i, prm := range fn.Params {
		body = append(body, doubleArg(i, prm, b)...)
		args = append(args, jen.Id(prm.GoName))
	}
	call := jen.Id(rawName(fn)).Call(args...)
	check := jen.Id("d").Dot("check").Call(jen.Lit(fn.ID), jen.Id("want"))
	reset := doubleReset
	wantErr := func(errno string) jen.Code {
		return jen.Id("d").Dot("wantErr").Call(jen.Err(), jen.Lit(fn.Name), jen.Qual("syscall", errno))
	}
	rt := goResult(fn, b.Pure)
	okPtr := func(withErr bool) []jen.Code {
		lhs := jen.Id("r")
		cond := jen.Add(resultPointer(fn)).Op("!=").Id("res")
		if fn.Result.String { // res holds the C string "mlx5gen"
			cond = jen.Id("r").Op("!=").Lit("mlx5gen")
		}
		if withErr {
			lhs = jen.List(jen.Id("r"), jen.Err())
			cond = cond.Op("||").Err().Op("!=").Nil()
		}
		alloc := jen.Id("d").Dot("alloc").Call(jen.Lit(8))
		if fn.Result.String {
			alloc = jen.Id("d").Dot("cString").Call(jen.Lit("mlx5gen"))
		}
		return []jen.Code{jen.Id("res").Op(":=").Add(alloc),
			reset(jen.Int64().Call(jen.Uintptr().Call(jen.Id("res"))), ""),
			lhs.Op(":=").Add(call),
			jen.If(cond).Block(jen.Id("t").Dot("Fatalf").Call(jen.Lit("result %v, want %v"), jen.Id("r"), jen.Id("res"))), check}
	}
	okInt := func(v int64, withErr bool) []jen.Code {
		lhs := jen.Id("r")
		cond := jen.Id("r").Op("!=").Lit(int(v))
		if withErr {
			lhs = jen.List(jen.Id("r"), jen.Err())
			cond = cond.Op("||").Err().Op("!=").Nil()
		}
		return []jen.Code{reset(jen.Lit(int(v)), ""), lhs.Op(":=").Add(call),
			jen.If(cond).Block(jen.Id("t").Dot("Fatalf").Call(jen.Lit("result %v, want %v"), jen.Id("r"), jen.Lit(int(v)))), check}
	}
	failWith := func(ret jen.Code, errno, want string) []jen.Code {
		lhs := jen.Err()
		if rt != nil {
			lhs = jen.List(jen.Id("_"), jen.Err())
		}
		return []jen.Code{reset(ret, errno), lhs.Op("=").Add(call), wantErr(want), check}
	}
	// ok sets the double's answer to a success of the convention.
	ok := reset(jen.Lit(0), "")
	switch fn.Returns {
	case "pointer-errno":
		ok = reset(jen.Int64().Call(jen.Uintptr().Call(jen.Id("res"))), "")
		body = append(body, okPtr(true)...)
		body = append(body, failWith(jen.Lit(0), "ENOMEM", "ENOMEM")...)
	case "errno":
		body = append(body, reset(jen.Lit(0), ""), jen.Err().Op(":=").Add(call),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())), check)
		body = append(body, failWith(jen.Int64().Call(jen.Qual("syscall", "EINVAL")), "", "EINVAL")...)
	case "negative-errno":
		ok = reset(jen.Lit(7), "")
		body = append(body, okInt(7, true)...)
		body = append(body, failWith(jen.Op("-").Int64().Call(jen.Qual("syscall", "EINVAL")), "", "EINVAL")...)
	case "minus-one-errno":
		ok = reset(jen.Lit(7), "")
		body = append(body, okInt(7, true)...)
		body = append(body, failWith(jen.Lit(-1), "EIO", "EIO")...)
	default:
		switch {
		case rt == nil:
			body = append(body, reset(jen.Lit(0), ""), call, check)
		case fn.ResInt != nil:
			body = append(body, okInt(5, false)...)
		default:
			body = append(body, okPtr(false)...)
		}
	}
	if noAllocs(fn) {
		// The call itself holds on to nothing: no Go allocation per call
		// (on the success path; an error is one allocation).
		body = append(body, ok, jen.Id("d").Dot("noAllocs").Call(jen.Func().Params().Block(call.Clone())))
	}
	comment(f, fmt.Sprintf("TestDouble%s: %s (%s).", fn.BindingName(), fn.Name, fn.Returns))
	f.Func().Id("TestDouble" + fn.BindingName()).Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(body...)
	f.Line()
}

// noAllocs reports whether a call of fn's binding should not allocate: a
// struct passed by value is passed to C by address, so it escapes, and a
// C string result is copied into a Go string.
func noAllocs(fn *model.Func) bool {
	if fn.Result.String {
		return false
	}
	for _, prm := range fn.Params {
		if prm.Kind == model.ParamOther && !prm.Bool {
			return false
		}
	}
	return true
}

// doubleReset sets what the double answers next.
func doubleReset(ret jen.Code, errno string) jen.Code {
	e := jen.Lit(0)
	if errno != "" {
		e = jen.Qual("syscall", errno)
	}
	return jen.Id("d").Dot("reset").Call(ret, e)
}

// resultPointer is the test's result r as an unsafe.Pointer.
func resultPointer(fn *model.Func) jen.Code {
	switch {
	case fn.Result.Handle != "" && fn.Result.Depth == 1:
		return jen.Id("r").Dot("p")
	case fn.Result.Mirror != nil, fn.Result.Handle != "" && fn.Result.Depth == 2, fn.Result.Int != nil:
		return unsafePointer.Clone().Call(jen.Id("r"))
	}
	return jen.Id("r")
}
