package cheader

import (
	"strings"
	"testing"

	"modernc.org/cc/v4"
)

// tokens splits a test expression written with spaces between tokens.
func tokens(s string) []string { return strings.Fields(s) }

// TestEvaluate checks the model's C integer arithmetic (LP64) on values
// gcc computes the same way (TestCornerCasesMatchGCC compares such macros
// with gcc itself).
func TestEvaluate(t *testing.T) {
	p := &parser{ast: &cc.AST{Scope: &cc.Scope{}}}
	cases := []struct {
		expr string
		bits uint64
		kind Kind
	}{
		{"1", 1, Int},
		{"2147483648", 2147483648, Long},
		{"0x80000000", 0x80000000, UInt},
		{"0xffffffffffffffff + 1", 0, ULong},
		{"- 1 < 0u", 0, Int},
		{"- 1L < 0u", 1, Int},
		{"1u - 2", 0xffffffff, UInt},
		{"1 << 31", uint64(0xffffffff80000000), Int},
		{"- 1 >> 1", ^uint64(0), Int},
		{"1 ? - 1 : 0u", 0xffffffff, UInt},
		{"( unsigned char ) - 1 + 1", 256, Int},
		{"( short ) 0x12345", 0x2345, Short},
		{"0 && 1 / 0", 0, Int},
		{"1 || 1 / 0", 1, Int},
		{"0 ? 1 / 0 : 3", 3, Int},
		{"5 % - 3", 2, Int},
		{"- 5 / 2", ^uint64(1), Int},
		{"'a' * 2", 194, Int},
		{"~ 0u >> 31", 1, UInt},
		{"( - 9223372036854775807L - 1 ) / 2", uint64(0xc000000000000000), Long},
		{"1ULL << 63", 1 << 63, ULongLong},
		{"1L * - 1", ^uint64(0), Long},
	}
	for _, c := range cases {
		v, err := p.evaluate(tokens(c.expr))
		if err != nil || !v.known || v.bits != c.bits || v.kind != c.kind {
			t.Errorf("%s = %#x %s (known %v, err %v), want %#x %s", c.expr, v.bits, v.kind, v.known, err, c.bits, c.kind)
		}
	}
	refused := map[string]string{
		"1 << 64":                              "not below the width",
		"1 << 32":                              "not below the width",
		"1ULL << 64":                           "not below the width",
		"1 << - 1":                             "negative",
		"1 / 0":                                "division by zero",
		"1 % 0":                                "division by zero",
		"2147483647 + 1":                       "overflows int",
		"- ( - 2147483647 - 1 )":               "overflows int",
		"9223372036854775807L * 2":             "overflows long",
		"( - 9223372036854775807L - 1 ) / - 1": "overflows long",
		"- 9223372036854775807L - 2":           "overflows long",
		"18446744073709551616":                 "too large",
		"sizeof ( int ) << 64":                 "not below the width",
	}
	for expr, want := range refused {
		_, err := p.evaluate(tokens(expr))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error about %q", expr, err, want)
		}
	}
	// What the model cannot evaluate stays opaque, with cc's value.
	for _, expr := range []string{"sizeof ( int )", "x + 1", "( struct s * ) 0", "( int ) ( 1.5 * 2 )", "1e3", "0x1p3", "1.0f", "'\\0'", "08"} {
		if v, err := p.evaluate(tokens(expr)); err != nil || v.known {
			t.Errorf("%s: got %+v, %v; want opaque", expr, v, err)
		}
	}
}

// TestCornerMacrosEvaluated makes sure the model's evaluator, not only
// cc/v4, computes the C_ARITH_ macros that TestCornerCasesMatchGCC compares
// with gcc: each must come out known, with the model's value and type.
func TestCornerMacrosEvaluated(t *testing.T) {
	m, p, err := load(Config{IncludeRoot: "testdata/corner", Header: "infiniband/corner.h"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mc := range m.Macros {
		if !strings.HasPrefix(mc.Name, "C_ARITH_") {
			continue
		}
		n++
		toks, err := newExpander(p, p.ast.Macros, expandBudget).expand(p.ast.Macros[mc.Name])
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.evaluate(toks)
		kind := mc.Type.Kind
		if err != nil || !v.known || v.kind != kind || v.bits != norm(mc.Value.Bits, kind) {
			t.Errorf("%s = %s: evaluator %#x %s (known %v, %v), model %s %s", mc.Name, mc.Replacement, v.bits, v.kind, v.known, err, mc.Value, kind)
		}
	}
	if n < 20 {
		t.Errorf("only %d C_ARITH_ macros", n)
	}
}
