package cheader

import (
	"fmt"

	"modernc.org/cc/v4"
)

// enumNext follows gcc's rules for the values of an enumeration's
// constants (c-decl.c, build_enumerator): an explicit value has the type
// of its expression, promoted to int, or int when int holds it; an
// implicit one is the previous
// value plus one in the previous value's type, and gcc refuses it
// ("overflow in enumeration values") when that addition overflows.
type enumNext struct {
	prev     Value
	name     string // the previous enumerator
	bits     int    // the precision of its type: 32 or 64
	unsigned bool
	started  bool
	// The enumeration's values must share one 64-bit type: a negative
	// value and one above MaxInt64 do not.
	negative, huge string
}

// check checks one enumerator whose value, as cc computed it, is v.
func (n *enumNext) check(p *parser, en *cc.Enumerator, v Value) error {
	pos := p.tokPos(en.Position())
	name := en.Token.SrcStr()
	if en.Case == cc.EnumeratorExpr && en.ConstantExpression != nil {
		t := en.ConstantExpression.Type()
		k := scalarKinds[t.Kind()]
		if t.Size() > 8 {
			return fmt.Errorf("%s: enumerator %s: its value has type %s, wider than 64 bits (gcc: enumeration values exceed range of largest integer)", pos, name, t)
		}
		n.bits, n.unsigned = 32, false
		if t.Size() > 4 {
			n.bits = 64
		}
		if k.IsInteger() && !k.IsSigned() && t.Size() >= 4 {
			n.unsigned = true
		}
		if fitsInt(v) {
			// gcc converts a value int holds to int (2147483647U too).
			n.bits, n.unsigned = 32, false
		}
	} else if n.started {
		// cc computes an implicit value in int64: its sign is the type's.
		v.Signed = !n.unsigned
		tname := fmt.Sprintf("int%d", n.bits)
		limit := uint64(1)<<(n.bits-1) - 1
		if n.unsigned {
			tname = "u" + tname
			limit = 1<<(n.bits-1) | limit
		}
		if !n.prev.Negative() && n.prev.Bits == limit {
			return fmt.Errorf("%s: enumerator %s: overflow in enumeration values: %s + 1 does not fit %s, the type of %s", pos, name, n.name, ctype(tname), n.name)
		}
	} else {
		n.bits, n.unsigned = 32, false
	}
	n.prev, n.name, n.started = v, name, true
	switch {
	case v.Negative() && n.negative == "":
		n.negative = name
	case !v.Signed && v.Bits > 1<<63-1 && n.huge == "":
		n.huge = name
	}
	if n.negative != "" && n.huge != "" {
		return fmt.Errorf("%s: enumerator %s: the values of the enumeration (%s is negative, %s above INT64_MAX) fit neither int64 nor uint64 (gcc: enumeration values exceed range of largest integer)", pos, name, n.negative, n.huge)
	}
	return nil
}

// ctype names an integer type as C does, from int32 and the like.
func ctype(s string) string {
	switch s {
	case "int32":
		return "int"
	case "uint32":
		return "unsigned int"
	case "int64":
		return "a 64-bit signed type"
	}
	return "a 64-bit unsigned type"
}
