package cheader

import (
	"fmt"
	"math"
	"strconv"
)

// cc/v4 computes macro values with Go's wrapping arithmetic: 1<<64 comes out
// as 0. The model re-evaluates each integer macro with C's rules for the
// x86-64 (LP64) types: integer promotions, the usual arithmetic
// conversions, unsigned wrap-around. What C leaves undefined and gcc does
// not accept as an integer constant expression (a shift count below zero
// or not below the width, signed overflow, division by zero) is refused
// with the macro's position. Parts it cannot evaluate itself (sizeof, casts
// to non-integer types, identifiers that are not enumerators) make the
// result opaque: the shift and division checks still apply where their
// operands are known, and cc's value stands.

// cval is a C integer value: bits holds it sign- or zero-extended to 64
// bits. known is false for an opaque value; kind is Invalid when even the
// type is unknown.
type cval struct {
	bits  uint64
	kind  Kind
	known bool
}

// evalError is an expression gcc does not accept as an integer constant.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

// MacroError is an integer macro the model refuses: its value is not an
// integer constant in C (1<<64, a signed overflow, a division by zero) or
// cc/v4 computes it unlike C.
type MacroError struct {
	Pos    Pos
	Macro  string
	Reason string
}

func (e *MacroError) Error() string {
	return fmt.Sprintf("%s: macro %s: %s", e.Pos, e.Macro, e.Reason)
}

// enumerator returns the enumerator called name, if the model has one.
func (p *parser) enumerator(name string) *Enumerator {
	if p.enumByName == nil {
		p.enumByName = map[string]*Enumerator{}
		for _, e := range p.enumList {
			for _, en := range e.Enumerators {
				p.enumByName[en.Name] = en
			}
		}
	}
	return p.enumByName[name]
}

// cEval evaluates the expanded tokens of a macro.
type cEval struct {
	p    *parser
	toks []string
	i    int
	dead int // inside an operand that is not evaluated (0 && x)
	err  error
}

func (e *cEval) fail(format string, args ...any) {
	if e.dead == 0 && e.err == nil {
		e.err = &evalError{fmt.Sprintf(format, args...)}
	}
}

func (e *cEval) peek() string {
	if e.i < len(e.toks) {
		return e.toks[e.i]
	}
	return ""
}

func (e *cEval) next() string {
	s := e.peek()
	e.i++
	return s
}

var binPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

// evaluate returns the value of toks, an opaque value when it cannot be
// evaluated, or an evalError.
func (p *parser) evaluate(toks []string) (cval, error) {
	e := &cEval{p: p, toks: toks}
	v := e.cond()
	if e.err != nil {
		return cval{}, e.err
	}
	if e.i != len(toks) {
		return cval{}, nil // not an expression the model reads: opaque
	}
	return v, nil
}

func (e *cEval) cond() cval {
	c := e.binary(1)
	if e.peek() != "?" {
		return c
	}
	e.next()
	cv := promote(c)
	deadA, deadB := cv.known && cv.bits == 0, cv.known && cv.bits != 0
	a := e.branch(deadA, e.cond)
	if e.next() != ":" {
		e.i = len(e.toks) + 1 // malformed: opaque
		return cval{}
	}
	b := e.branch(deadB, e.cond)
	k := common(promote(a).kind, promote(b).kind)
	if !cv.known {
		return cval{kind: k}
	}
	r := b
	if cv.bits != 0 {
		r = a
	}
	r = promote(r)
	return cval{bits: norm(r.bits, k), kind: k, known: r.known && k != Invalid}
}

func (e *cEval) branch(dead bool, f func() cval) cval {
	if dead {
		e.dead++
		defer func() { e.dead-- }()
	}
	return f()
}

func (e *cEval) binary(min int) cval {
	a := e.unary()
	for {
		op := e.peek()
		prec, ok := binPrec[op]
		if !ok || prec < min {
			return a
		}
		e.next()
		var b cval
		switch op {
		case "&&", "||":
			pa := promote(a)
			dead := pa.known && (op == "&&" && pa.bits == 0 || op == "||" && pa.bits != 0)
			b = e.branch(dead, func() cval { return e.binary(prec + 1) })
		default:
			b = e.binary(prec + 1)
		}
		a = e.apply(op, a, b)
	}
}

func (e *cEval) unary() cval {
	switch op := e.peek(); op {
	case "+", "-", "~", "!":
		e.next()
		v := promote(e.unary())
		if op == "!" {
			return cval{bits: b2u(v.bits == 0), kind: Int, known: v.known}
		}
		if !v.known {
			return v
		}
		switch op {
		case "-":
			if v.kind.IsSigned() && v.bits == norm(1<<(width(v.kind)-1), v.kind) {
				e.fail("-%s overflows %s", strconv.FormatInt(int64(v.bits), 10), v.kind)
			}
			v.bits = norm(-v.bits, v.kind)
		case "~":
			v.bits = norm(^v.bits, v.kind)
		}
		return v
	case "sizeof", "_Alignof", "__alignof__", "__alignof", "__builtin_offsetof", "offsetof":
		e.next()
		if e.peek() == "(" {
			e.skipParens()
		} else {
			e.unary()
		}
		return cval{kind: ULong}
	case "(":
		if k, ok := e.castType(); ok {
			v := promote(e.unary())
			if k == Invalid || !v.known {
				return cval{kind: k}
			}
			if k == Bool {
				return cval{bits: b2u(v.bits != 0), kind: Bool, known: true}
			}
			return cval{bits: truncTo(v.bits, k), kind: k, known: true}
		}
		e.next()
		v := e.cond()
		if e.next() != ")" {
			e.i = len(e.toks) + 1
		}
		return v
	}
	return e.primary()
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (e *cEval) skipParens() {
	level := 0
	for e.i < len(e.toks) {
		switch e.next() {
		case "(":
			level++
		case ")":
			level--
			if level == 0 {
				return
			}
		}
	}
}

func (e *cEval) primary() cval {
	s := e.next()
	switch {
	case s == "":
		e.i = len(e.toks) + 1
		return cval{}
	case s[0] >= '0' && s[0] <= '9':
		v, err := intLiteral(s)
		if err != nil {
			e.fail("%s", err)
		}
		return v
	case s[0] == '\'':
		if c, err := strconv.Unquote(s); err == nil && len(c) == 1 {
			return cval{bits: uint64(int64(int8(c[0]))), kind: Int, known: true}
		}
		return cval{kind: Int}
	case isIdent(s):
		if en := e.p.enumerator(s); en != nil {
			k := en.Type.Kind
			if k == Enumeration {
				k = en.Type.Enum.Underlying.Kind
			}
			return cval{bits: norm(en.Value.Bits, k), kind: k, known: width(k) > 0}
		}
		if e.peek() == "(" { // a call, such as a builtin: opaque
			e.skipParens()
		}
		return cval{}
	}
	e.i = len(e.toks) + 1
	return cval{}
}

// apply evaluates a binary operator with the usual arithmetic conversions.
func (e *cEval) apply(op string, a, b cval) cval {
	a, b = promote(a), promote(b)
	switch op {
	case "<<", ">>":
		return e.shift(op, a, b)
	case "&&", "||":
		if !a.known {
			return cval{kind: Int}
		}
		if op == "&&" {
			return cval{bits: b2u(a.bits != 0 && b.bits != 0), kind: Int, known: a.bits == 0 || b.known}
		}
		return cval{bits: b2u(a.bits != 0 || b.bits != 0), kind: Int, known: a.bits != 0 || b.known}
	}
	k := common(a.kind, b.kind)
	if (op == "/" || op == "%") && b.known && b.bits == 0 {
		e.fail("division by zero")
		return cval{kind: k}
	}
	if !a.known || !b.known || k == Invalid {
		switch op {
		case "==", "!=", "<", ">", "<=", ">=":
			return cval{kind: Int}
		}
		return cval{kind: k}
	}
	x, y := norm(a.bits, k), norm(b.bits, k)
	signed := k.IsSigned()
	w := width(k)
	cmp := func(lt bool) cval { return cval{bits: b2u(lt), kind: Int, known: true} }
	less := func(x, y uint64) bool {
		if signed {
			return int64(x) < int64(y)
		}
		return x < y
	}
	var r uint64
	switch op {
	case "==":
		return cmp(x == y)
	case "!=":
		return cmp(x != y)
	case "<":
		return cmp(less(x, y))
	case ">":
		return cmp(less(y, x))
	case "<=":
		return cmp(!less(y, x))
	case ">=":
		return cmp(!less(x, y))
	case "&":
		r = x & y
	case "|":
		r = x | y
	case "^":
		r = x ^ y
	case "+", "-", "*":
		r = e.arith(op, x, y, k)
	case "/", "%":
		if signed && y == norm(math.MaxUint64, k) && x == norm(1<<(w-1), k) {
			e.fail("%d %s -1 overflows %s", int64(x), op, k)
			return cval{kind: k}
		}
		switch {
		case signed && op == "/":
			r = uint64(int64(x) / int64(y))
		case signed:
			r = uint64(int64(x) % int64(y))
		case op == "/":
			r = x / y
		default:
			r = x % y
		}
	}
	return cval{bits: norm(r, k), kind: k, known: true}
}

// arith is + - * in type k: unsigned arithmetic wraps, signed overflow is
// refused.
func (e *cEval) arith(op string, x, y uint64, k Kind) uint64 {
	if !k.IsSigned() {
		switch op {
		case "+":
			return x + y
		case "-":
			return x - y
		}
		return x * y
	}
	a, b := int64(x), int64(y)
	var r int64
	ok := true
	switch op {
	case "+":
		r = a + b
		ok = (b >= 0) == (r >= a)
	case "-":
		r = a - b
		ok = (b >= 0) == (r <= a)
	case "*":
		r = a * b
		if width(k) == 64 && a != 0 {
			ok = r/a == b && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
		}
	}
	if ok && width(k) == 32 {
		ok = r >= math.MinInt32 && r <= math.MaxInt32
	}
	if !ok {
		e.fail("%d %s %d overflows %s", a, op, b, k)
	}
	return uint64(r)
}

// shift evaluates << and >>: the type is the promoted left operand's; a
// count below zero or not below its width is refused.
func (e *cEval) shift(op string, a, b cval) cval {
	k := a.kind
	if b.known {
		cnt := int64(b.bits)
		if !b.kind.IsSigned() {
			cnt = int64(b.bits & math.MaxInt64)
			if b.bits > math.MaxInt64 {
				cnt = math.MaxInt64
			}
		}
		if cnt < 0 {
			e.fail("shift count %d is negative", cnt)
			return cval{kind: k}
		}
		if w := width(k); w > 0 && cnt >= int64(w) {
			e.fail("shift count %d is not below the width of %s (%d bits)", cnt, k, w)
			return cval{kind: k}
		}
		if !a.known || k == Invalid {
			return cval{kind: k}
		}
		if op == "<<" {
			// gcc shifts into and past the sign bit of a signed
			// value without complaint: modulo the width.
			return cval{bits: norm(a.bits<<uint(cnt), k), kind: k, known: true}
		}
		if k.IsSigned() {
			return cval{bits: norm(uint64(int64(a.bits)>>uint(cnt)), k), kind: k, known: true}
		}
		return cval{bits: a.bits >> uint(cnt), kind: k, known: true}
	}
	return cval{kind: k}
}
