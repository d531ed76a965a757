package cheader

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// The C integer types of the model's evaluation (LP64) and how constants,
// casts and typedef names get them.

func width(k Kind) uint {
	switch k {
	case Int, UInt:
		return 32
	case Long, ULong, LongLong, ULongLong:
		return 64
	}
	return 0
}

func rank(k Kind) int {
	switch k {
	case Int, UInt:
		return 1
	case Long, ULong:
		return 2
	case LongLong, ULongLong:
		return 3
	}
	return 0
}

func unsignedOf(k Kind) Kind {
	switch k {
	case Int:
		return UInt
	case Long:
		return ULong
	case LongLong:
		return ULongLong
	}
	return k
}

// norm wraps bits to k's width and sign- or zero-extends them.
func norm(b uint64, k Kind) uint64 {
	if width(k) == 32 {
		if k.IsSigned() {
			return uint64(int64(int32(b)))
		}
		return uint64(uint32(b))
	}
	return b
}

// promote applies the integer promotions.
func promote(v cval) cval {
	switch v.kind {
	case Bool, Char, SChar, UChar, Short, UShort:
		v.kind = Int
	case Int, UInt, Long, ULong, LongLong, ULongLong:
	default:
		v.kind, v.known = Invalid, false
	}
	return v
}

// common is the type of the usual arithmetic conversions (both promoted).
func common(a, b Kind) Kind {
	if a == Invalid || b == Invalid {
		return Invalid
	}
	if a == b {
		return a
	}
	if a.IsSigned() == b.IsSigned() {
		if rank(a) >= rank(b) {
			return a
		}
		return b
	}
	s, u := a, b
	if !s.IsSigned() {
		s, u = b, a
	}
	switch {
	case rank(u) >= rank(s):
		return u
	case width(s) > width(u):
		return s
	}
	return unsignedOf(s)
}

// truncTo converts bits to a (possibly narrow) integer type as gcc does:
// modulo its width.
func truncTo(b uint64, k Kind) uint64 {
	switch k {
	case Char, SChar:
		return uint64(int64(int8(b)))
	case UChar:
		return uint64(uint8(b))
	case Short:
		return uint64(int64(int16(b)))
	case UShort:
		return uint64(uint16(b))
	}
	return norm(b, k)
}

var typeWords = map[string]bool{
	"char": true, "short": true, "int": true, "long": true, "signed": true, "unsigned": true,
	"_Bool": true, "const": true, "volatile": true, "__signed__": true, "__int128": true,
	"float": true, "double": true, "void": true, "struct": true, "union": true, "enum": true,
	"__const": true, "__volatile__": true, "*": true,
}

// castType reads "(type-name)" at the current token when it is one and
// returns the integer kind it names (Invalid for another type).
func (e *cEval) castType() (Kind, bool) {
	j := e.i + 1
	var words []string
	for ; j < len(e.toks) && e.toks[j] != ")"; j++ {
		words = append(words, e.toks[j])
	}
	if j >= len(e.toks) || len(words) == 0 {
		return 0, false
	}
	if len(words) == 1 && !typeWords[words[0]] {
		t := e.p.typedefType(words[0])
		if t == nil {
			return 0, false
		}
		e.i = j + 1
		if t.Kind.IsInteger() && t.Kind != Int128 && t.Kind != UInt128 {
			return t.Kind, true
		}
		return Invalid, true
	}
	for _, w := range words {
		if !typeWords[w] {
			return 0, false
		}
	}
	e.i = j + 1
	return keywordKind(words), true
}

// keywordKind is the integer kind a list of type keywords names, Invalid
// for any other type.
func keywordKind(words []string) Kind {
	n := map[string]int{}
	for _, w := range words {
		switch w {
		case "const", "volatile", "__const", "__volatile__":
		case "__signed__":
			n["signed"]++
		default:
			n[w]++
		}
	}
	uns, sig := n["unsigned"] > 0, n["signed"] > 0
	delete(n, "unsigned")
	delete(n, "signed")
	if n["char"] == 1 && len(n) == 1 {
		switch {
		case uns:
			return UChar
		case sig:
			return SChar
		}
		return Char
	}
	if n["_Bool"] == 1 && len(n) == 1 && !uns && !sig {
		return Bool
	}
	delete(n, "int")
	k := Int
	switch {
	case len(n) == 0:
	case len(n) == 1 && n["short"] == 1:
		k = Short
	case len(n) == 1 && n["long"] == 1:
		k = Long
	case len(n) == 1 && n["long"] == 2:
		k = LongLong
	default:
		return Invalid
	}
	if uns {
		if k == Short {
			return UShort
		}
		return unsignedOf(k)
	}
	return k
}

// typedefType is the model's type of a typedef name, nil if it is none.
func (p *parser) typedefType(name string) *Type {
	for _, n := range p.ast.Scope.Nodes[name] {
		if d, ok := n.(*cc.Declarator); ok && d.IsTypename() {
			if !cc.IsIntegerType(d.Type()) || d.Type().Kind() == cc.Enum {
				// Not laid out here: the model must not grow records
				// only because a macro casts to them.
				return &Type{Kind: Invalid}
			}
			t, err := p.typ(d.Type(), Pos{}, name)
			if err != nil {
				return nil
			}
			if t.Kind == Enumeration {
				return t.Enum.Underlying
			}
			return t
		}
	}
	return nil
}

// intLiteral types an integer constant as C does: the first of its
// candidate types that holds the value.
func intLiteral(s string) (cval, error) {
	body := strings.TrimRight(s, "uUlL")
	suffix := strings.ToLower(s[len(body):])
	base := 10
	digits := body
	switch {
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		base, digits = 16, body[2:]
	case strings.HasPrefix(body, "0b") || strings.HasPrefix(body, "0B"):
		base, digits = 2, body[2:]
	case len(body) > 1 && body[0] == '0':
		base, digits = 8, body[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if errors.Is(err, strconv.ErrRange) {
		return cval{}, fmt.Errorf("integer constant %s is too large for any integer type", s)
	}
	if err != nil || strings.Contains(digits, "_") {
		return cval{}, nil // a floating constant or another number: opaque
	}
	var cands []Kind
	decimal := base == 10
	switch suffix {
	case "":
		cands = []Kind{Int, Long}
		if !decimal {
			cands = []Kind{Int, UInt, Long, ULong}
		}
	case "u":
		cands = []Kind{UInt, ULong}
	case "l":
		cands = []Kind{Long}
		if !decimal {
			cands = []Kind{Long, ULong}
		}
	case "ul", "lu":
		cands = []Kind{ULong}
	case "ll":
		cands = []Kind{LongLong}
		if !decimal {
			cands = []Kind{LongLong, ULongLong}
		}
	case "ull", "llu":
		cands = []Kind{ULongLong}
	default:
		return cval{}, nil // not an integer suffix C knows: opaque
	}
	for _, k := range cands {
		max := uint64(math.MaxUint64) >> (64 - width(k))
		if k.IsSigned() {
			max >>= 1
		}
		if n <= max {
			return cval{bits: n, kind: k, known: true}, nil
		}
	}
	return cval{}, fmt.Errorf("integer constant %s is too large for its type", s)
}
