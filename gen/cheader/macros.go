package cheader

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"modernc.org/cc/v4"
)

var guardRE = regexp.MustCompile(`^_*[A-Z0-9_]+_H_*$`)

// macros classifies every macro the rdma-core headers define: integer
// constants become Macros, everything else is Skipped with its reason.
func (p *parser) macros() error {
	var list []*cc.Macro
	for _, m := range p.ast.Macros {
		if p.isRDMA(m.Position()) {
			list = append(list, m)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].Position(), list[j].Position()
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	enumerators := map[string]*Enumerator{}
	for _, e := range p.enumList {
		for _, en := range e.Enumerators {
			enumerators[en.Name] = en
		}
	}
	for _, m := range list {
		name := m.Name.SrcStr()
		pos := p.tokPos(m.Position())
		p.noteFile(m.Position())
		repl := replacement(m)
		skip := func(r SkipReason) {
			p.m.Skipped = append(p.m.Skipped, &Skipped{Pos: pos, Name: name, Reason: r, Replacement: repl})
		}
		switch {
		case m.IsFnLike:
			skip(SkipFunctionLike)
			continue
		case len(p.replTokens(m)) == 0:
			if guardRE.MatchString(name) {
				skip(SkipGuard)
			} else {
				skip(SkipEmpty)
			}
			continue
		}
		t := m.Type()
		switch v := m.Value().(type) {
		case cc.Int64Value, cc.UInt64Value:
			if differs, err := newExpander(p, p.ast.Macros, expandBudget).selfExpansionDiffers(m); err != nil {
				return err
			} else if differs {
				return &ExpansionError{Pos: pos, Macro: name, Reason: "it names itself in a way cc/v4 evaluates unlike gcc (it expands the inner " + name + " once more); the model refuses the value rather than report it wrong"}
			}
			if rec := p.layoutDependency(m); rec != nil {
				p.m.Skipped = append(p.m.Skipped, &Skipped{Pos: pos, Name: name, Reason: SkipLayout, Replacement: repl,
					Detail: fmt.Sprintf("depends on the layout of %s, which cc/v4 computes unlike gcc", rec.CName())})
				continue
			}
			if t == nil || t.Kind() == cc.Ptr {
				skip(SkipPointer)
				continue
			}
			mt, err := p.typ(t, pos, "macro "+name)
			if err != nil {
				return err
			}
			if !mt.Kind.IsInteger() && mt.Kind != Enumeration {
				skip(SkipNotConstant)
				continue
			}
			val, _ := constValue(v)
			if en := enumerators[repl]; en != nil {
				// An alias of an enumerator has the enumerator's type;
				// cc, counting enums as unsigned, would say unsigned int.
				mt = en.Type
			} else if mt.Kind == Enumeration {
				// cc types a macro that names an enumerator with the
				// enum; C gives the enumerator's own type.
				mt = mt.Enum.Underlying
				if isIdent(repl) && fitsInt(val) {
					mt = &Type{Kind: Int, Size: 4, Align: 4}
				}
			}
			val.Signed = mt.Kind.IsSigned()
			if err := p.checkValue(m, pos, val, mt); err != nil {
				return err
			}
			p.m.Macros = append(p.m.Macros, &Macro{Pos: pos, Name: name, Value: val, Type: mt, Replacement: repl})
		case cc.Float64Value, *cc.LongDoubleValue:
			skip(SkipFloat)
		case cc.StringValue, cc.UTF16StringValue, cc.UTF32StringValue:
			skip(SkipString)
		default:
			switch {
			case t != nil && t.Kind() == cc.Ptr:
				skip(SkipPointer)
			case len(p.replTokens(m)) == 1 && isIdent(repl):
				skip(SkipAlias)
			case strings.Contains(repl, "__attribute__") || strings.HasPrefix(repl, "inline"):
				skip(SkipAlias)
			default:
				// cc gives 1/0 no value; C gives it none either, and
				// the model says so rather than skip it quietly.
				if err := p.checkValue(m, pos, Value{}, nil); err != nil {
					return err
				}
				skip(SkipNotConstant)
			}
		}
	}
	return nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isIdent(s string) bool { return identRE.MatchString(s) }

// replacement is a macro's replacement list with runs of white space
// folded to one space.
func replacement(m *cc.Macro) string {
	var b strings.Builder
	for i, t := range m.ReplacementList() {
		if i > 0 && len(t.Sep()) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.SrcStr())
	}
	return b.String()
}

// layoutDependency returns a record whose size, alignment or member offsets
// a macro's value depends on (through sizeof, _Alignof or offsetof) and that
// cc/v4 lays out differently from gcc; cc evaluated the macro with its own
// layout, so the value cannot be trusted.
func (p *parser) layoutDependency(m *cc.Macro) *Record {
	toks, err := newExpander(p, p.ast.Macros, expandBudget).expand(m)
	if err != nil {
		return nil // checkExpansions has expanded every macro within the budget
	}
	uses := false
	for _, t := range toks {
		switch t {
		case "sizeof", "_Alignof", "__alignof__", "__alignof", "offsetof", "__builtin_offsetof":
			uses = true
		}
	}
	if !uses {
		return nil
	}
	for i, t := range toks {
		var ct cc.Type
		switch {
		case (t == "struct" || t == "union") && i+1 < len(toks):
			for ty := range p.recSpecs {
				if ccTag(ty) == toks[i+1] && strings.HasPrefix(ty.Kind().String(), t) {
					ct = ty
					break
				}
			}
		case isIdent(t):
			for _, n := range p.ast.Scope.Nodes[t] {
				if d, ok := n.(*cc.Declarator); ok && d.IsTypename() {
					ct = d.Type()
				}
			}
		}
		if ct == nil || (ct.Kind() != cc.Struct && ct.Kind() != cc.Union) {
			continue
		}
		if r, err := p.record(ct, nil); err == nil && r.ccDiffers {
			return r
		}
	}
	return nil
}

// checkValue evaluates a macro with C's rules (see eval.go) and refuses it
// when C does not give it a value or gives it another value or type than
// cc/v4 computed (t is nil when cc computed none).
func (p *parser) checkValue(m *cc.Macro, pos Pos, val Value, t *Type) error {
	name := m.Name.SrcStr()
	toks, err := newExpander(p, p.ast.Macros, expandBudget).expand(m)
	if err != nil {
		return err
	}
	v, err := p.evaluate(toks)
	if err != nil {
		return &MacroError{Pos: pos, Macro: name, Reason: err.Error() + ": not an integer constant expression (gcc rejects or warns); the model refuses it rather than emit a wrapped value"}
	}
	if !v.known || t == nil {
		return nil
	}
	kind := t.Kind
	if kind == Enumeration {
		kind = t.Enum.Underlying.Kind
	}
	if v.kind != kind || v.bits != norm(val.Bits, kind) {
		return &MacroError{Pos: pos, Macro: name, Reason: fmt.Sprintf("cc/v4 computes %s (%s) where C gives %s (%s); the model refuses it rather than guess",
			val, kind, Value{Bits: v.bits, Signed: v.kind.IsSigned()}, v.kind)}
	}
	return nil
}
