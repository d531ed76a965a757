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
	enumerators := map[string]*Enumerator{}
	for _, e := range p.enumList {
		for _, en := range e.Enumerators {
			enumerators[en.Name] = en
		}
	}
	for _, m := range p.rdmaMacros() {
		if err := p.macro(m, enumerators); err != nil {
			return err
		}
	}
	return nil
}

// rdmaMacros lists the macros defined in the rdma-core headers in file and
// definition order, so that the model lists them the same on every run.
func (p *parser) rdmaMacros() []*cc.Macro {
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
	return list
}

// macroSite is one macro being classified, with what each outcome
// records of it.
type macroSite struct {
	m    *cc.Macro
	name string
	pos  Pos
	repl string // the replacement list, white space folded
}

// skipMacro records s as Skipped for reason r; detail may be "".
func (p *parser) skipMacro(s macroSite, r SkipReason, detail string) {
	p.m.Skipped = append(p.m.Skipped, &Skipped{Pos: s.pos, Name: s.name, Reason: r, Replacement: s.repl, Detail: detail})
}

// macro classifies one macro by its shape (function-like, empty), then by
// the kind of value cc/v4 gives it.
func (p *parser) macro(m *cc.Macro, enumerators map[string]*Enumerator) error {
	s := macroSite{m: m, name: m.Name.SrcStr(), pos: p.tokPos(m.Position())}
	p.noteFile(m.Position())
	s.repl = replacement(m)
	switch {
	case m.IsFnLike:
		p.skipMacro(s, SkipFunctionLike, "")
		return nil
	case len(p.replTokens(m)) == 0:
		if guardRE.MatchString(s.name) {
			p.skipMacro(s, SkipGuard, "")
		} else {
			p.skipMacro(s, SkipEmpty, "")
		}
		return nil
	}
	t := m.Type()
	switch v := m.Value().(type) {
	case cc.Int64Value, cc.UInt64Value:
		return p.intMacro(s, v, t, enumerators)
	case cc.Float64Value, *cc.LongDoubleValue:
		p.skipMacro(s, SkipFloat, "")
	case cc.StringValue, cc.UTF16StringValue, cc.UTF32StringValue:
		p.skipMacro(s, SkipString, "")
	default:
		return p.valuelessMacro(s, t)
	}
	return nil
}

// intMacro models a macro cc/v4 gives an integer value, after refusing
// the values cc may have computed unlike gcc and skipping those that are
// no integer constant in C.
func (p *parser) intMacro(s macroSite, v cc.Value, t cc.Type, enumerators map[string]*Enumerator) error {
	if differs, err := newExpander(p, p.ast.Macros, expandBudget).selfExpansionDiffers(s.m); err != nil {
		return err
	} else if differs {
		return &ExpansionError{Pos: s.pos, Macro: s.name, Reason: "it names itself in a way cc/v4 evaluates unlike gcc (it expands the inner " + s.name + " once more); the model refuses the value rather than report it wrong"}
	}
	if rec := p.layoutDependency(s.m); rec != nil {
		p.skipMacro(s, SkipLayout, fmt.Sprintf("depends on the layout of %s, which cc/v4 computes unlike gcc", rec.CName()))
		return nil
	}
	if t == nil || t.Kind() == cc.Ptr {
		p.skipMacro(s, SkipPointer, "")
		return nil
	}
	mt, err := p.typ(t, s.pos, "macro "+s.name)
	if err != nil {
		return err
	}
	if !mt.Kind.IsInteger() && mt.Kind != Enumeration {
		p.skipMacro(s, SkipNotConstant, "")
		return nil
	}
	val, _ := constValue(v)
	mt = macroType(mt, s.repl, val, enumerators)
	val.Signed = mt.Kind.IsSigned()
	if err := p.checkValue(s.m, s.pos, val, mt); err != nil {
		return err
	}
	p.m.Macros = append(p.m.Macros, &Macro{Pos: s.pos, Name: s.name, Value: val, Type: mt, Replacement: s.repl})
	return nil
}

// macroType corrects the type cc/v4 gives an integer macro where C gives
// another: cc counts enums as unsigned and types an enumerator's name
// with its enum.
func macroType(mt *Type, repl string, val Value, enumerators map[string]*Enumerator) *Type {
	if en := enumerators[repl]; en != nil {
		// An alias of an enumerator has the enumerator's type;
		// cc, counting enums as unsigned, would say unsigned int.
		return en.Type
	}
	if mt.Kind == Enumeration {
		// cc types a macro that names an enumerator with the
		// enum; C gives the enumerator's own type.
		mt = mt.Enum.Underlying
		if isIdent(repl) && fitsInt(val) {
			mt = &Type{Kind: Int, Size: 4, Align: 4}
		}
	}
	return mt
}

// valuelessMacro skips a macro cc/v4 gives no value, naming why: a
// pointer, an alias of a name or attribute, or no constant at all.
func (p *parser) valuelessMacro(s macroSite, t cc.Type) error {
	switch {
	case t != nil && t.Kind() == cc.Ptr:
		p.skipMacro(s, SkipPointer, "")
	case len(p.replTokens(s.m)) == 1 && isIdent(s.repl):
		p.skipMacro(s, SkipAlias, "")
	case strings.Contains(s.repl, "__attribute__") || strings.HasPrefix(s.repl, "inline"):
		p.skipMacro(s, SkipAlias, "")
	default:
		// cc gives 1/0 no value; C gives it none either, and
		// the model says so rather than skip it quietly.
		if err := p.checkValue(s.m, s.pos, Value{}, nil); err != nil {
			return err
		}
		p.skipMacro(s, SkipNotConstant, "")
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
