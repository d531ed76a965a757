package cheader

import "fmt"

// cc/v4's parser copies a macro's whole replacement list for every primary
// expression that macro's expansion yields, so a macro of L tokens used in
// a declaration costs about L*L, and a long one used often costs minutes.
// The model estimates that cost from the headers' text before cc sees them
// and refuses a header set beyond textCostBudget; rdma-core's headers (libc's
// included) stay under 1% of it.

// textCostBudget bounds the estimated token copies (20 to 100 ns each).
const textCostBudget = 10_000_000

// costTable holds what the estimate needs of every #define seen so far.
type costTable struct {
	macros map[string]*costMacro
	total  int64
	names  map[string]string // interned token spellings

	ntokens int // tokens of the headers so far (maxHeaderTokens)
	defines int // #define directives so far (maxDefines)
	longest int // the most tokens of a line so far
}

type costMacro struct {
	cost      int64 // token copies of one expansion, nested macros included
	len       int64 // replacement list length
	paramUses int64 // occurrences of parameters in the replacement list
	fnLike    bool
}

// maxMacroTokens bounds a macro's replacement list (rdma-core's and
// libc's longest has about 100 tokens): cc/v4 copies the whole list at
// every use and evaluation.
const maxMacroTokens = 10000

// line accounts for one logical line (comments removed) and says why the
// header is refused, or "".
func (t *costTable) line(toks []string, clean []byte, directive bool) string {
	if directive {
		if len(toks) >= 3 && toks[0] == "#" && toks[1] == "define" {
			t.define(toks[2], clean, toks[3:])
		}
		return ""
	}
	if t.macros == nil {
		return ""
	}
	for i, tok := range toks {
		m := t.macros[tok]
		if m == nil {
			continue
		}
		c := m.cost
		if m.fnLike {
			// The arguments, bounded by the rest of the line, are
			// copied once for each use of a parameter.
			c = sat(c + sat(m.paramUses*int64(len(toks)-i)*m.len))
		}
		t.total = sat(t.total + c)
	}
	if t.total > textCostBudget {
		return fmt.Sprintf("the macros used here would cost cc/v4 more than %d token copies (a long macro used many times)", textCostBudget)
	}
	return ""
}

// define notes "#define name ..." whose tokens after the name are rest.
func (t *costTable) define(name string, clean []byte, rest []string) {
	if t.macros == nil {
		t.macros = map[string]*costMacro{}
	}
	m := &costMacro{}
	params := map[string]bool{}
	// Function-like when "(" follows the name without white space.
	if i := indexName(clean, name); i >= 0 && i+len(name) < len(clean) && clean[i+len(name)] == '(' && len(rest) > 0 {
		m.fnLike = true
		j := 1
		for ; j < len(rest) && rest[j] != ")"; j++ {
			if rest[j] != "," {
				params[rest[j]] = true
			}
		}
		if j < len(rest) {
			rest = rest[j+1:]
		} else {
			rest = nil
		}
	}
	m.len = int64(len(rest))
	for _, tok := range rest {
		switch sub := t.macros[tok]; {
		case params[tok] || tok == "__VA_ARGS__":
			m.paramUses++
			m.cost = sat(m.cost + m.len)
		case sub != nil && tok != name:
			m.cost = sat(m.cost + sub.cost)
		default:
			m.cost = sat(m.cost + m.len)
		}
	}
	t.macros[name] = m
}

// sat keeps estimates from overflowing.
func sat(n int64) int64 {
	if n > 1<<50 || n < 0 {
		return 1 << 50
	}
	return n
}

// indexName finds the macro name after "define" in a #define line.
func indexName(b []byte, name string) int {
	start := 0
	for i := 0; i+6 <= len(b); i++ {
		if string(b[i:i+6]) == "define" {
			start = i + 6
			break
		}
	}
	for i := start; i+len(name) <= len(b); i++ {
		if string(b[i:i+len(name)]) == name && (i == 0 || !identByte(b[i-1])) {
			return i
		}
	}
	return -1
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// tokens splits a line into identifiers, numbers and one-character
// punctuators (close enough to C's tokens for counting), appended to out;
// it stops after limit+1 tokens, so that a line over its limit is refused
// without all its tokens being kept.
// The spellings are interned: libc's headers repeat a few thousand names
// hundreds of thousands of times.
func (t *costTable) tokens(b []byte, out []string, limit int) []string {
	for i, n := 0, len(out)+limit+1; i < len(b) && len(out) < n; {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case identByte(c) || c == '.' && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9':
			j := i + 1
			for j < len(b) && (identByte(b[j]) || c >= '0' && c <= '9' && b[j] == '.') {
				j++
			}
			out = append(out, t.intern(b[i:j]))
			i = j
		default:
			out = append(out, string(c)) // one byte: no allocation
			i++
		}
	}
	return out
}

func (t *costTable) intern(b []byte) string {
	if s, ok := t.names[string(b)]; ok {
		return s
	}
	if t.names == nil {
		t.names = map[string]string{}
	}
	s := string(b)
	t.names[s] = s
	return s
}
