package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// validateFile writes ValidateInto and Validate methods per mirror, and
// ValidateArgs...Into and ValidateArgs... per function whose parameters
// have rules. The Into forms fill a caller's RuleError and do not
// allocate; the others return a new one.
func validateFile(p *model.Package, f *jen.File) {
	enums := map[*model.Enum]bool{}
	for _, m := range p.API.Mirrors {
		doc := fmt.Sprintf("ValidateInto checks the rules on struct %s", m.CName)
		if len(m.Rules) > 0 {
			var ids []string
			for _, r := range m.Rules {
				ids = append(ids, r.ID)
			}
			doc += " (" + strings.Join(ids, ", ") + ")"
		}
		doc += ", then the structs it points to that are in use. It reports whether\nthey hold, and fills e with the first violation when they do not."
		comment(f, doc)
		body, holds := ruleBody(m.Rules, enums)
		var nested []jen.Code
		for _, mf := range m.Fields {
			nested = append(nested, nestedValidation(mf)...)
		}
		if len(nested) > 0 {
			holds = nil // what a pointer leads to is not one cheap test
		}
		body = append(append(body, nested...), jen.Return(jen.True()))
		recv := jen.Id("s").Op("*").Id(m.GoName)
		eParam := jen.Id("e").Op("*").Id("RuleError")
		if holds != nil {
			f.Func().Params(recv.Clone()).Id("ValidateInto").Params(eParam.Clone()).Bool().Block(commonCase(holds, jen.Id("s").Dot("validateRules").Call(jen.Id("e")))...)
			f.Line()
			comment(f, "validateRules is ValidateInto's rules one by one, which name the first violation.")
			f.Func().Params(recv).Id("validateRules").Params(eParam).Bool().Block(body...)
		} else {
			f.Func().Params(recv).Id("ValidateInto").Params(eParam).Bool().Block(body...)
		}
		f.Line()
		comment(f, fmt.Sprintf("Validate checks the rules on struct %s and the structs it points to that\nare in use, and returns the first violation as a *RuleError.", m.CName))
		f.Func().Params(jen.Id("s").Op("*").Id(m.GoName)).Id("Validate").Params().Error().Block(
			jen.Var().Id("e").Id("RuleError"),
			jen.If(jen.Id("s").Dot("ValidateInto").Call(jen.Op("&").Id("e"))).Block(jen.Return(jen.Nil())),
			jen.Return(jen.Id("cloneRuleError").Call(jen.Op("&").Id("e"))),
		)
		f.Line()
	}
	for _, fn := range p.API.Funcs {
		if len(fn.Rules) == 0 {
			continue
		}
		// The parameters the rules look at, in prototype order.
		var params []*model.Param
		for _, prm := range fn.Params {
			for _, r := range fn.Rules {
				if r.Arg.Param == prm {
					params = append(params, prm)
					break
				}
			}
		}
		var sig, args []jen.Code
		var names []string
		for _, prm := range params {
			sig = append(sig, jen.Id(prm.GoName).Add(paramType(prm)))
			args = append(args, jen.Id(prm.GoName))
			names = append(names, prm.Name)
		}
		body, holds := ruleBody(fn.Rules, enums)
		body = append(body, jen.Return(jen.True()))
		name := fn.Validator()
		comment(f, fmt.Sprintf("%sInto checks the rules on the arguments %s of %s. It\nreports whether they hold, and fills e with the first violation when they do not.",
			name, strings.Join(names, ", "), fn.Name))
		eps := append([]jen.Code{jen.Id("e").Op("*").Id("RuleError")}, sig...)
		if holds != nil {
			rules := "validateRules" + strings.TrimPrefix(name, "Validate")
			f.Func().Id(name + "Into").Params(eps...).Bool().Block(commonCase(holds, jen.Id(rules).Call(append([]jen.Code{jen.Id("e")}, args...)...))...)
			f.Line()
			comment(f, fmt.Sprintf("%s is %sInto's rules one by one, which name the first violation.", rules, name))
			f.Func().Id(rules).Params(eps...).Bool().Block(body...)
		} else {
			f.Func().Id(name + "Into").Params(eps...).Bool().Block(body...)
		}
		f.Line()
		comment(f, fmt.Sprintf("%s checks the rules on the arguments %s of %s, and\nreturns the first violation as a *RuleError.", name, strings.Join(names, ", "), fn.Name))
		f.Func().Id(name).Params(sig...).Error().Block(
			jen.Var().Id("e").Id("RuleError"),
			jen.If(jen.Id(name+"Into").Call(append([]jen.Code{jen.Op("&").Id("e")}, args...)...)).Block(jen.Return(jen.Nil())),
			jen.Return(jen.Id("cloneRuleError").Call(jen.Op("&").Id("e"))),
		)
		f.Line()
	}
	// The names of the values the rules report, by enum.
	var used []*model.Enum
	for _, e := range p.Enums {
		if enums[e] {
			used = append(used, e)
		}
	}
	for _, e := range used {
		f.Func().Id(e.NamesFunc()).Params(jen.Id("v").Uint64()).String().Block(
			jen.Return(jen.Id(e.GoName).Call(jen.Id("v")).Dot("String").Call()))
		f.Line()
	}
}

// maxCommonRules is the most rules a validator's inlinable common case
// tests: more would not fit the compiler's inlining budget, and the test
// would only be repeated on the way to the checks one by one.
const maxCommonRules = 3

// ruleBody renders the checks of rules one by one and, when there are at
// most maxCommonRules and each is cheap, the test that all of them hold
// (nil otherwise).
func ruleBody(rules []*model.Rule, enums map[*model.Enum]bool) (body []jen.Code, holds jen.Code) {
	var all *jen.Statement
	cheap := len(rules) > 0 && len(rules) <= maxCommonRules
	for _, r := range rules {
		check, t, ok := ruleTest(r, enums)
		body = append(body, check)
		cheap = cheap && ok
		if !ok {
			continue
		}
		if all == nil {
			all = jen.Add(t)
		} else {
			all = all.Op("&&").Add(t)
		}
	}
	if !cheap {
		return body, nil
	}
	return body, all
}

// commonCase is a validator's body when its rules are few and cheap: the
// test that all hold, small enough to inline where the validator is
// called (a hot path then pays no call when the arguments are good), and
// the checks one by one (rules) to name the first violation.
func commonCase(holds, rules jen.Code) []jen.Code {
	return []jen.Code{
		jen.Comment("The common case, inlinable: every rule holds."),
		jen.If(holds).Block(jen.Return(jen.True())),
		jen.Return(rules),
	}
}

// paramType is the Go type of a validator's parameter.
func paramType(p *model.Param) jen.Code {
	switch {
	case p.Typed:
		return jen.Id(p.Enum.GoName)
	case p.Kind == model.ParamInt:
		return intType(p.Int)
	}
	return unsafePointer
}

// nestedValidation validates what a field points to or contains.
func nestedValidation(mf *model.MirrorField) []jen.Code {
	var out []jen.Code
	switch mf.Kind {
	case model.MPointer:
		v := jen.Id("s").Dot(mf.GoName)
		out = append(out, guarded(mf.When, jen.If(jen.Add(v).Op("!=").Nil().Op("&&").Op("!").Add(v).Dot("ValidateInto").Call(jen.Id("e"))).Block(
			jen.Return(jen.False()))))
	case model.MNested:
		out = append(out, guarded(mf.When,
			jen.If(jen.Op("!").Id("s").Dot(mf.GoName).Dot("ValidateInto").Call(jen.Id("e"))).Block(jen.Return(jen.False()))))
	}
	for _, u := range mf.Members {
		switch u.Kind {
		case model.MPointer:
			v := jen.Id("s").Dot(u.GoName).Call()
			out = append(out, guarded(u.When, jen.If(jen.Id("p").Op(":=").Add(v), jen.Id("p").Op("!=").Nil().Op("&&").Op("!").Id("p").Dot("ValidateInto").Call(jen.Id("e"))).Block(
				jen.Return(jen.False()))))
		case model.MNested:
			out = append(out, guarded(u.When,
				jen.If(jen.Op("!").Id("s").Dot(u.GoName).Call().Dot("ValidateInto").Call(jen.Id("e"))).Block(jen.Return(jen.False()))))
		}
	}
	return out
}

func guarded(c *model.Cond, stmt jen.Code) jen.Code {
	if c == nil {
		return stmt
	}
	return jen.If(condExpr(c)).Block(stmt)
}

func condExpr(c *model.Cond) jen.Code {
	v := jen.Id("s").Dot(c.Field.GoName)
	switch {
	case c.NotNull:
		return jen.Add(v).Op("!=").Nil()
	case c.Bits != 0 && c.Clear != 0:
		return jen.Uint64().Call(v).Op("&").Add(hex(c.Bits | c.Clear)).Op("==").Add(hex(c.Bits))
	case c.Bits != 0:
		return jen.Uint64().Call(v).Op("&").Add(hex(c.Bits)).Op("==").Add(hex(c.Bits))
	case c.Clear != 0:
		return jen.Uint64().Call(v).Op("&").Add(hex(c.Clear)).Op("==").Lit(0)
	}
	var e *jen.Statement
	for i, x := range c.OneOf {
		t := jen.Uint64().Call(v).Op("==").Add(hex(x))
		if i == 0 {
			e = t
		} else {
			e = e.Op("||").Add(t)
		}
	}
	return e
}

// ruleCheck renders "if <violation> { e.set(...); return false }" for an
// argument rule, recording in enums the enums whose names the error uses.
func ruleCheck(r *model.Rule, enums map[*model.Enum]bool) jen.Code {
	check, _, _ := ruleTest(r, enums)
	return check
}

// ruleTest is ruleCheck, and also the test that the rule holds, and
// whether that is cheap enough to repeat in an inlinable common case: one
// comparison or bit test, with no condition (a OneOf or an enum's member
// list is not).
func ruleTest(r *model.Rule, enums map[*model.Enum]bool) (check, holds jen.Code, cheap bool) {
	a := r.Arg
	var v *jen.Statement
	st, field := "", a.FieldName
	switch {
	case a.Param != nil:
		v, field = jen.Id(a.Param.GoName), a.Param.Name
	case a.Member != nil:
		v = jen.Id("s").Dot(a.Member.GoName).Call()
	case a.Via != nil:
		v = jen.Id("s").Dot(a.Via.GoName).Dot(a.Field.GoName)
	case a.Field != nil:
		v = jen.Id("s").Dot(a.Field.GoName)
	}
	if a.Mirror != nil {
		st = a.Mirror.CName
	}
	u := func() *jen.Statement { return jen.Uint64().Call(v.Clone()) }
	var bad, good jen.Code // the violation; the rule holding, for the cheap tests
	test, value, limit := "TestNone", jen.Code(jen.Lit(0)), jen.Code(jen.Lit(0))
	names := namedBy(a)
	switch {
	case len(a.NotAllNull) > 0:
		var e, g *jen.Statement
		var fs []string
		for i, nf := range a.NotAllNull {
			t := jen.Id("s").Dot(nf.GoName).Op("==").Nil()
			h := jen.Id("s").Dot(nf.GoName).Op("!=").Nil()
			fs = append(fs, nf.CName)
			if i == 0 {
				e, g = t, h
			} else {
				e, g = e.Op("&&").Add(t), g.Op("||").Add(h)
			}
		}
		bad, good, test, field = e, jen.Parens(g), "TestNotNull", strings.Join(fs, " and ")
	case a.NotNull:
		bad, good, test = jen.Add(v).Op("==").Nil(), jen.Add(v).Op("!=").Nil(), "TestNotNull"
	case len(a.OneOf) > 0:
		var e *jen.Statement
		for i, x := range a.OneOf {
			t := u().Op("!=").Add(hex(x))
			if i == 0 {
				e = t
			} else {
				e = e.Op("&&").Add(t)
			}
		}
		bad, test, value = e, "TestOneOf", u()
	case a.Enum != nil:
		var e *jen.Statement
		seen := map[uint64]bool{}
		typed := a.Field != nil && a.Member == nil && a.Field.Enum == a.Enum || a.Param != nil && a.Param.Enum == a.Enum
		for _, k := range a.Enum.Members {
			if seen[k.Value.Bits] {
				continue
			}
			seen[k.Value.Bits] = true
			t := u().Op("!=").Add(hex(k.Value.Bits))
			if typed {
				t = v.Clone().Op("!=").Id(k.Name)
			}
			if e == nil {
				e = t
			} else {
				e = e.Op("&&").Line().Add(t)
			}
		}
		bad, test, value, names = e, "TestOneOf", u(), a.Enum
	case a.MaskIsSet:
		bad, test, value, limit = u().Op("&^").Add(hex(a.Mask)).Op("!=").Lit(0), "TestBits", u(), hex(a.Mask)
		good = u().Op("&^").Add(hex(a.Mask)).Op("==").Lit(0)
	case a.Has != 0:
		bad, test, value, limit = u().Op("&").Add(hex(a.Has)).Op("!=").Add(hex(a.Has)), "TestNeedBits", u(), hex(a.Has)
		good = u().Op("&").Add(hex(a.Has)).Op("==").Add(hex(a.Has))
	case a.Zero:
		bad, good, test, value = jen.Add(v).Op("!=").Lit(0), jen.Add(v).Op("==").Lit(0), "TestZero", u()
	case a.NotNeg:
		bad, good, test, value = jen.Add(v).Op("<").Lit(0), jen.Add(v).Op(">=").Lit(0), "TestNotNegative", u()
	case a.Max != nil:
		bad, good, test, value, limit = u().Op(">").Add(hex(*a.Max)), u().Op("<=").Add(hex(*a.Max)), "TestMax", u(), hex(*a.Max)
	case a.MultipleOf != 0:
		bad, test, value, limit = u().Op("%").Add(hex(a.MultipleOf)).Op("!=").Lit(0), "TestMultipleOf", u(), hex(a.MultipleOf)
		good = u().Op("%").Add(hex(a.MultipleOf)).Op("==").Lit(0)
	}
	namesCode := jen.Code(jen.Nil())
	if names != nil {
		enums[names] = true
		namesCode = jen.Id(names.NamesFunc())
	}
	stmt := jen.If(bad).Block(
		jen.Id("setRuleError").Call(jen.Id("e"), jen.Id(r.GoName), jen.Lit(st), jen.Lit(field), jen.Id(test), value, limit, namesCode),
		jen.Return(jen.False()),
	)
	if a.When != nil {
		stmt = jen.If(condExpr(a.When)).Block(stmt)
	}
	return jen.Comment("rule " + r.ID + ": " + oneLine(r.Applied())).Line().Add(stmt), good, good != nil && a.When == nil
}

// namedBy returns the enum that names the checked value's members or bits.
func namedBy(a *model.ArgCheck) *model.Enum {
	switch {
	case a.FlagsEnum != nil:
		return a.FlagsEnum
	case a.Param != nil:
		return a.Param.Enum
	case a.Field != nil && a.Member == nil && a.Field.Kind == model.MInt && a.Field.Names != nil:
		return a.Field.Names
	case a.Field != nil && a.Member == nil && a.Field.Kind == model.MInt:
		return a.Field.Enum
	}
	return nil
}
