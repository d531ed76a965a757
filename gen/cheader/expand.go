package cheader

import (
	"fmt"
	"strings"

	"modernc.org/cc/v4"
)

// Budgets that keep the model's time and memory bounded on any header.
// Real rdma-core headers stay far below them: preprocessing mlx5dv.h of
// rdma-core 44.0 to 65.0 (libc's headers included) costs cc/v4 under 262,144
// expansion steps, and the model's expansion of all their macros about
// 2,400 units.
const (
	// ccPreprocessLimit caps cc/v4's macro expansion work while it
	// preprocesses (Config.ExpansionLimit): about 0.1 s.
	ccPreprocessLimit = 1 << 20
	// ccEvalLimit is added to it for cc/v4's evaluation of every
	// object-like macro, which the model only lets cc start once its own
	// estimate (expandBudget) says the evaluation fits.
	ccEvalLimit = 1 << 23
	// expandBudget bounds the model's own expansion of all macros, in
	// tokens weighted by their nesting depth (the shape of cc/v4's cost).
	expandBudget = 1 << 20
	// maxExpandDepth is how deeply macros may nest in one expansion.
	maxExpandDepth = 200
)

// ExpansionError is a macro whose expansion exceeds the model's budget: an
// exponentially growing or very deeply chained definition. The model stops
// rather than spend unbounded time or memory on it.
type ExpansionError struct {
	Pos    Pos
	Macro  string
	Reason string
}

func (e *ExpansionError) Error() string {
	return fmt.Sprintf("%s: macro %s: %s", e.Pos, e.Macro, e.Reason)
}

// expander expands macros as the C preprocessor does (a macro is not
// expanded again inside its own expansion), counting its work against a
// budget shared by every expansion it does.
type expander struct {
	p      *parser
	macros map[string]*cc.Macro
	work   int
	budget int
	active map[string]bool
	depth  int
	err    *ExpansionError
}

func newExpander(p *parser, macros map[string]*cc.Macro, budget int) *expander {
	return &expander{p: p, macros: macros, budget: budget, active: map[string]bool{}}
}

// expand returns the token spellings m expands to, or an ExpansionError
// naming m when the budget or the nesting depth is exceeded.
func (x *expander) expand(m *cc.Macro) ([]string, error) {
	x.err = nil
	name := m.Name.SrcStr()
	out := x.macro(name, m, nil, m)
	if x.err != nil {
		return nil, x.err
	}
	return out, nil
}

func (x *expander) fail(root *cc.Macro, reason string) {
	if x.err == nil {
		x.err = &ExpansionError{Pos: x.p.tokPos(root.Position()), Macro: root.Name.SrcStr(), Reason: reason}
	}
}

// macro expands one invocation of m; args are the argument token lists of
// a function-like macro.
func (x *expander) macro(name string, m *cc.Macro, args [][]string, root *cc.Macro) []string {
	if x.depth >= maxExpandDepth {
		x.fail(root, fmt.Sprintf("macros nest more than %d deep", maxExpandDepth))
		return nil
	}
	list := x.p.replTokens(m)
	repl := make([]string, 0, len(list))
	params := map[string]int{}
	if m.IsFnLike {
		for i, prm := range m.Params {
			params[prm.SrcStr()] = i
		}
	}
	for _, s := range list {
		if i, ok := params[s]; ok {
			if i < len(args) {
				repl = append(repl, args[i]...)
			}
			continue
		}
		if s == "__VA_ARGS__" && len(args) > len(params) {
			for j, a := range args[len(params):] {
				if j > 0 {
					repl = append(repl, ",")
				}
				repl = append(repl, a...)
			}
			continue
		}
		repl = append(repl, s)
	}
	x.active[name] = true
	x.depth++
	out := x.scan(repl, root)
	x.depth--
	delete(x.active, name)
	return out
}

// scan expands the macro names in toks.
func (x *expander) scan(toks []string, root *cc.Macro) []string {
	var out []string
	for i := 0; i < len(toks); i++ {
		if x.err != nil {
			return nil
		}
		s := toks[i]
		x.work += x.depth
		if x.work > x.budget {
			x.fail(root, fmt.Sprintf("expanding it, after the macros before it, exceeds the budget of %d tokens (weighted by nesting depth): macros that grow exponentially or chain too deeply", x.budget))
			return nil
		}
		m := x.macros[s]
		if m == nil || x.active[s] || !isIdent(s) {
			out = append(out, s)
			continue
		}
		if !m.IsFnLike {
			out = append(out, x.macro(s, m, nil, root)...)
			continue
		}
		if i+1 >= len(toks) || toks[i+1] != "(" {
			out = append(out, s)
			continue
		}
		args, next := splitArgs(toks, i+1)
		if next < 0 {
			out = append(out, toks[i:]...) // unbalanced: leave it to the compiler
			break
		}
		for j := range args {
			args[j] = x.scan(args[j], root)
		}
		out = append(out, x.macro(s, m, args, root)...)
		i = next
	}
	return out
}

// splitArgs splits the parenthesised argument list starting at toks[open]
// and returns the arguments and the index of the closing parenthesis, or
// -1 when it is not closed.
func splitArgs(toks []string, open int) ([][]string, int) {
	var args [][]string
	var cur []string
	level := 0
	for i := open; i < len(toks); i++ {
		switch s := toks[i]; s {
		case "(":
			if level > 0 {
				cur = append(cur, s)
			}
			level++
		case ")":
			level--
			if level == 0 {
				return append(args, cur), i
			}
			cur = append(cur, s)
		case ",":
			if level == 1 {
				args = append(args, cur)
				cur = nil
				continue
			}
			cur = append(cur, s)
		default:
			cur = append(cur, s)
		}
	}
	return nil, -1
}

// selfExpansionDiffers reports whether cc/v4's value of m cannot be trusted
// because m names itself: cc evaluates the replacement list as if m were
// not being expanded, so "#define B (B+B+B)" over an enumerator B = 1
// becomes 9 where gcc says 3. When the two expansions agree (the common
// "#define FOO FOO" over an enumerator) the value is gcc's.
func (x *expander) selfExpansionDiffers(m *cc.Macro) (bool, error) {
	name := m.Name.SrcStr()
	list := x.p.replTokens(m)
	self := false
	for _, t := range list {
		if t == name {
			self = true
		}
	}
	if !self {
		return false, nil
	}
	gccForm, err := x.expand(m)
	if err != nil {
		return false, err
	}
	x.err = nil
	ccForm := x.scan(list, m)
	if x.err != nil {
		return false, x.err
	}
	return strings.Join(gccForm, " ") != strings.Join(ccForm, " "), nil
}

// replTokens is m's replacement list as token spellings, computed once:
// cc/v4 copies the list on every call.
func (p *parser) replTokens(m *cc.Macro) []string {
	if r, ok := p.repl[m]; ok {
		return r
	}
	if p.repl == nil {
		p.repl = map[*cc.Macro][]string{}
	}
	var r []string
	for _, t := range m.ReplacementList() {
		r = append(r, t.SrcStr())
	}
	p.repl[m] = r
	return r
}
