package cheader

import "fmt"

// Limits of the header text itself, checked by sourceFS while it scans a
// file and before cc/v4 reads any of it. cc/v4 keeps every token of a
// translation and every macro with its replacement list as tokens of
// about 100 bytes, and its parser and the model copy them again, so that
// without these limits a header under maxSourceBytes could take gigabytes
// (1,000,000 #defines in 19 MB: 6.5 GB; one 30 MB macro line: 5.5 GB) and
// minutes. Each limit is counted while the text is tokenised, so that the
// line that passes it is refused without its tokens being kept: at most
// maxLineTokens+1 token spellings of a line exist at once. rdma-core's
// headers and the libc headers they include stay far below each limit
// (measured for 44.0, 56.1 and 65.0 in docs/performance.md, "Header
// limits"; TestRealHeadersUnderLimits).
const (
	// maxHeaderTokens bounds the tokens of all the headers of a
	// translation, each file counted once: it bounds cc/v4's token
	// storage, its parse (a 500,000-enumerator enum, a 300,000-field
	// struct) and the model's conversion.
	maxHeaderTokens = 600_000
	// maxLineTokens bounds one logical line.
	maxLineTokens = 300_000
	// maxDefines bounds the #define directives of a translation: each
	// costs cc/v4 and the model a few kilobytes, evaluated twice.
	maxDefines = 40_000
)

// lineTokenLimit is how many tokens the next line may have before it is
// refused, whichever limit is nearer.
func (t *costTable) lineTokenLimit() int {
	return min(maxLineTokens, max(maxHeaderTokens-t.ntokens, 0))
}

// count accounts for a logical line's tokens (cut at limit+1 when there
// were more) and says why the header is refused, or "".
func (t *costTable) count(toks []string, limit int, directive bool) string {
	define := directive && len(toks) >= 3 && toks[0] == "#" && toks[1] == "define"
	switch {
	case define && len(toks) > maxMacroTokens:
		return fmt.Sprintf("macro %s has more than %d tokens", toks[2], maxMacroTokens)
	case len(toks) > maxLineTokens:
		return fmt.Sprintf("the line has more than %d tokens", maxLineTokens)
	case len(toks) > limit:
		return fmt.Sprintf("the headers have more than %d tokens in all", maxHeaderTokens)
	}
	t.ntokens += len(toks)
	t.longest = max(t.longest, len(toks))
	if define {
		t.defines++
		if t.defines > maxDefines {
			return fmt.Sprintf("the headers have more than %d #define directives", maxDefines)
		}
	}
	return ""
}

// enclosing names the construct whose braces a text line that opens them
// starts (toks are its tokens, first its line), so that a refusal inside
// a huge enum, record or initializer names it, not only a line in its
// middle: " (in struct wide, from line 1)", or "" when the line names
// none.
func enclosing(toks []string, first int) string {
	brace := -1
	for i, t := range toks {
		if t == "{" {
			brace = i
			break
		}
	}
	if brace < 0 {
		return ""
	}
	what := ""
	for i := brace - 1; i >= 0 && what == ""; i-- {
		switch t := toks[i]; {
		case t == "struct" || t == "union" || t == "enum":
			what = "an anonymous " + t
			if i+1 < brace && isIdent(toks[i+1]) {
				what = t + " " + toks[i+1]
			}
		case t == "=":
			// The declarator before it: "lines [ ] =", "a =".
			for j := i - 1; j >= 0; j-- {
				if isIdent(toks[j]) {
					what = "the initializer of " + toks[j]
					break
				}
			}
			if what == "" {
				return ""
			}
		}
	}
	if what == "" {
		return ""
	}
	return fmt.Sprintf(" (in %s, from line %d)", what, first)
}
