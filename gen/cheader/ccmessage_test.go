package cheader

import (
	"errors"
	"strings"
	"testing"
)

// TestParseErrorFirstOnly: cc/v4's expansion limit ends the messages (what
// follows it cascades), its report at <predefined> (a header too long, no
// macro involved) says so and which limit, and cc's misspelling is fixed.
func TestParseErrorFirstOnly(t *testing.T) {
	p := &parser{searchDirs: []string{"/inc"}}
	err := p.parseError(errors.New("/inc/infiniband/mlx5dv.h:7:3: macro expansion limit exceeded (Config.ExpansionLimit 1048576)\n" +
		"/inc/infiniband/mlx5dv.h:7:3: internal error\n/inc/infiniband/mlx5dv.h:9:1: unabalanced parenthesis"))
	if got := err.Error(); got != "infiniband/mlx5dv.h:7:3: macro expansion limit exceeded (Config.ExpansionLimit 1048576)" {
		t.Errorf("macro bomb: %q", got)
	}
	err = p.parseError(errors.New("<predefined>:1:1: macro expansion limit exceeded (Config.ExpansionLimit 1048576)\n/inc/infiniband/mlx5dv.h:2:1: internal error"))
	got := err.Error()
	for _, want := range []string{"the header is too large", "at most 1048576 tokens", "ExpansionLimit", "no macro is involved"} {
		if !strings.Contains(got, want) {
			t.Errorf("long header: %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "<predefined>") || strings.Contains(got, "internal error") {
		t.Errorf("long header: %q", got)
	}
	err = p.parseError(errors.New("/inc/infiniband/mlx5dv.h:9:1: unabalanced parenthesis\n/inc/infiniband/mlx5dv.h:12:1: expected ;"))
	if got := err.Error(); got != "infiniband/mlx5dv.h:9:1: unbalanced parenthesis\ninfiniband/mlx5dv.h:12:1: expected ;" {
		t.Errorf("unbalanced: %q", got)
	}
}
