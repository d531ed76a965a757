package cheader

import (
	"regexp"
	"strings"
)

// expansionLimitMsg is how cc/v4 says it reached Config.ExpansionLimit.
const expansionLimitMsg = "macro expansion limit exceeded"

var limitRE = regexp.MustCompile(`ExpansionLimit (\d+)`)

// ccMessage rewrites a cc/v4 message: its misspelling fixed, and its
// expansion limit reported at <predefined> (cc counts every token it
// preprocesses, so a header long enough reaches it with no macro in sight)
// said for what it is.
func ccMessage(file, msg string) string {
	msg = strings.ReplaceAll(msg, "unabalanced", "unbalanced")
	if strings.Contains(msg, expansionLimitMsg) && strings.HasPrefix(file, "<") {
		limit := "its limit"
		if l := limitRE.FindStringSubmatch(msg); l != nil {
			limit = l[1] + " tokens"
		}
		return "the header is too large: the C front end (cc/v4) preprocesses at most " + limit + " (its Config.ExpansionLimit) and the header holds more " +
			"(a declaration of hundreds of thousands of members, megabytes of enumerators); no macro is involved"
	}
	return msg
}
