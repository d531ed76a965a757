package resolve

import (
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// argCheck resolves the predicate of an argument rule.
func (b *builder) argCheck(r *spec.Rule, c *spec.Check) *model.ArgCheck {
	what := "rule " + r.ID
	a := &model.ArgCheck{FieldName: c.Field}
	var bits int
	var ok bool
	if c.Struct != "" {
		bits, ok = b.structTarget(a, c, what)
	} else {
		bits, ok = b.paramTarget(a, c, what)
	}
	if !ok {
		return nil
	}
	b.predicate(a, c, bits, what)
	return a
}

// structTarget resolves the struct field a check is on, and returns its
// width in bits.
func (b *builder) structTarget(a *model.ArgCheck, c *spec.Check, what string) (int, bool) {
	m := b.mirrors[c.Struct]
	if m == nil {
		b.errorf(c.Pos, "%s: struct %s is not available", what, c.Struct)
		return 0, false
	}
	a.Mirror = m
	for _, n := range c.NotAllNull {
		f := fieldNamed(m, n)
		if f == nil || (f.Kind != model.MPointer && f.Kind != model.MRawPtr) {
			b.errorf(c.Pos, "%s: not_all_null: %s is not a pointer field of struct %s", what, n, m.CName)
			return 0, false
		}
		a.NotAllNull = append(a.NotAllNull, f)
	}
	bits := 64
	if c.Field != "" {
		findField(a, m, c.Field)
		if a.Field == nil {
			b.errorf(c.Pos, "%s: struct %s has no field %s", what, m.CName, c.Field)
			return 0, false
		}
		switch {
		case a.Member != nil && a.Member.Kind == model.MInt:
			bits = a.Member.Int.Bits
		case a.Member != nil:
			if !c.NotNull {
				b.errorf(c.Pos, "%s: only not_null applies to union member %s", what, c.Field)
				return 0, false
			}
		case a.Field.Kind == model.MInt:
			bits = a.Field.Int.Bits
		case a.Field.Kind == model.MBool:
			bits = 1
		case a.Field.Kind == model.MPointer || a.Field.Kind == model.MRawPtr || a.Field.Kind == model.MPtrUnion:
			if !c.NotNull {
				b.errorf(c.Pos, "%s: only not_null applies to pointer field %s", what, c.Field)
				return 0, false
			}
		default:
			b.errorf(c.Pos, "%s: field %s is not an integer or a pointer", what, c.Field)
			return 0, false
		}
	}
	if c.When != nil {
		a.When = b.cond(c.When, m, what)
	}
	return bits, true
}

// findField finds the field a check names: a direct member, a member of
// an anonymous union, or a member of a nested struct (dc_init_attr.dc_type).
func findField(a *model.ArgCheck, m *model.Mirror, name string) {
	if a.Field = fieldNamed(m, name); a.Field != nil {
		return
	}
	for _, f := range m.Fields {
		for _, u := range f.Members {
			if u.CName == name {
				a.Field, a.Member = f, u
			}
		}
	}
	if a.Field != nil {
		return
	}
	if pre, rest, ok := strings.Cut(name, "."); ok {
		if via := fieldNamed(m, pre); via != nil && via.Kind == model.MNested && via.Target != nil {
			if f := fieldNamed(via.Target, rest); f != nil && f.Kind == model.MInt {
				a.Via, a.Field = via, f
			}
		}
	}
}

// paramTarget resolves the function parameter a check is on, and returns
// its width in bits.
func (b *builder) paramTarget(a *model.ArgCheck, c *spec.Check, what string) (int, bool) {
	f := b.funcs[c.Func]
	if f == nil {
		b.errorf(c.Pos, "%s: function %s is not available", what, c.Func)
		return 0, false
	}
	a.Func = f
	for _, p := range f.Params {
		if p.Name == c.Param {
			a.Param = p
		}
	}
	if a.Param == nil {
		b.errorf(c.Pos, "%s: function %s has no parameter %s", what, f.Name, c.Param)
		return 0, false
	}
	bits := 64
	if a.Param.Kind == model.ParamInt {
		bits = a.Param.Int.Bits
	} else if a.Param.Kind != model.ParamPointer || !c.NotNull {
		b.errorf(c.Pos, "%s: parameter %s is not an integer", what, c.Param)
		return 0, false
	}
	if c.When != nil {
		b.errorf(c.When.Pos, "%s: when applies to struct fields", what)
	}
	return bits, true
}

// predicate resolves what the check requires of a value of bits bits.
func (b *builder) predicate(a *model.ArgCheck, c *spec.Check, bits int, what string) {
	for _, s := range c.OneOf {
		v, ok := b.value(c.Pos, s, what)
		if ok {
			b.inType(c, a, "one_of", s, v, bits, what)
		}
		a.OneOf = append(a.OneOf, v)
	}
	if c.Enum != "" {
		a.Enum = b.enumByTag(c.Pos, c.Enum, what)
	}
	if c.Flags != "" {
		if e := b.enumByTag(c.Pos, c.Flags, what); e != nil {
			a.MaskIsSet, a.FlagsEnum = true, e
			for _, k := range e.Members {
				a.Mask |= k.Value.Bits
			}
		}
	}
	for _, s := range c.Bits {
		if v, ok := b.value(c.Pos, s, what); ok {
			a.MaskIsSet = true
			a.Mask |= v
		}
	}
	for _, s := range c.Has {
		if v, ok := b.value(c.Pos, s, what); ok {
			a.Has |= v
		}
	}
	a.Zero, a.NotNull, a.NotNeg = c.Zero, c.NotNull, c.NotNeg
	if a.NotNeg {
		signed := a.Param != nil && a.Param.Kind == model.ParamInt && a.Param.Int.Signed || a.Member == nil && a.Field != nil && a.Field.Kind == model.MInt && a.Field.Int.Signed
		if !signed {
			b.errorf(c.Pos, "%s: not_negative needs a signed integer", what)
		}
	}
	if c.Max != "" {
		if v, ok := b.value(c.Pos, c.Max, what); ok {
			a.Max = &v
			b.inType(c, a, "max", c.Max, v, bits, what)
		}
	}
	if c.MultipleOf != "" {
		if v, ok := b.value(c.Pos, c.MultipleOf, what); ok && v > 0 {
			a.MultipleOf = v
		} else {
			b.errorf(c.Pos, "%s: multiple_of must be positive", what)
		}
	}
}
