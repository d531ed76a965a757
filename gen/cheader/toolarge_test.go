package cheader_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
)

// TestTooLargeNamesConstruct: a header refused for its tokens inside an
// enum, a record or an initializer names that construct and its line, not
// only the line the limit was passed on (issue 22: a 300k-field struct
// was blamed on "<predefined>:1:1: macro expansion limit exceeded"); a
// line outside braces, and a macro, name none.
func TestTooLargeNamesConstruct(t *testing.T) {
	var fields strings.Builder
	fields.WriteString("struct ok { int a; };\n\nstruct wide {\n")
	for i := 0; i < 200_001; i++ {
		fmt.Fprintf(&fields, "\tint f%d;\n", i)
	}
	fields.WriteString("};\n")
	long := strings.Repeat("+1", 150_001)
	for _, c := range []struct{ name, src, want string }{
		{"many fields", fields.String(), "infiniband/mlx5dv.h:200000: the headers have more than 600000 tokens in all (in struct wide, from line 3)"},
		{"long enum", "struct ok { int a; };\ntypedef enum { X = 0" + long + " } e;\n", "infiniband/mlx5dv.h:2: the line has more than 300000 tokens (in an anonymous enum, from line 2)"},
		{"long initializer", "static const int lines[] = {" + strings.Repeat("1,", 150_001) + "};\n", "infiniband/mlx5dv.h:1: the line has more than 300000 tokens (in the initializer of lines, from line 1)"},
		{"long line after a record", "struct ok { int a; };\nint x = 0" + long + ";\n", "infiniband/mlx5dv.h:2: the line has more than 300000 tokens; include chain"},
		{"long macro in a record", "struct s {\n#define LONG (0" + strings.Repeat(" + 1", 10_000) + ")\nint a; };\n", "infiniband/mlx5dv.h:2: macro LONG has more than 10000 tokens; include chain"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cheader.Load(cheader.Config{IncludeRoot: writeHeader(t, "mlx5dv.h", c.src)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
}
