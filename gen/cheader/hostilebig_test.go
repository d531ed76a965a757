//go:build mlx5gen_slow

package cheader_test

import (
	"fmt"
	"strings"
)

// bigHostileHeaders are header sets of megabytes that cc/v4 alone would
// take gigabytes and minutes to parse (issue 22 point 4): those over the
// size cap (cheader.SourceCap, 16 MB) are refused before they are read,
// and those under it by the model's text limits (limits.go) while it
// scans them, before cc/v4 reads them. They are made only when their case
// runs, so that the parent test process never holds them all.
func bigHostileHeaders() []hostileCase {
	const mb = 1 << 20
	one := func(f func() string) func() map[string]string {
		return func() map[string]string { return map[string]string{"mlx5dv.h": f()} }
	}
	lines := func(head, format, tail string, n int) func() map[string]string {
		return one(func() string {
			var b strings.Builder
			b.WriteString(head)
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, format, i)
			}
			return b.String() + tail
		})
	}
	text := func(head, rep string, n int, tail string) func() map[string]string {
		return one(func() string { return head + strings.Repeat(rep, n) + tail })
	}
	over := "infiniband/mlx5dv.h: the headers exceed 16777216 bytes in all"
	return []hostileCase{
		{name: "a million macros (19 MB)", make: lines("", "#define K%d (%[1]d << 2 | 1)\n", "", 1_000_000), want: over},
		{name: "400k macros", make: lines("", "#define K%d (%[1]d << 2 | 1)\n", "", 400_000), want: "infiniband/mlx5dv.h:40001: the headers have more than 40000 #define directives"},
		// Over the size cap a line of any kind is refused unread.
		{name: "60 MB macro line", make: text("#define LONG (0", " + 1", 60*mb/4, ")\n"), want: over},
		{name: "60 MB text line", make: text("static const int a[] = {", "1,", 60*mb/2, "};\n"), want: over},
		{name: "60 MB enum expression", make: text("enum { X = 0", "+1", 60*mb/2, " };\n"), want: over},
		{name: "60 MB comment line", make: text("/* ", "x", 60*mb, " */\nstruct s { int a; };\n"), want: over},
		{name: "60 MB string line", make: text("static const char s[] = \"", "x", 60*mb, "\";\n"), want: over},
		{name: "15 MB macro line", make: text("#define LONG (0", " + 1", 15*mb/4, ")\n"), want: "infiniband/mlx5dv.h:1: macro LONG has more than 10000 tokens"},
		{name: "15 MB text line", make: text("static const int a[] = {", "1,", 15*mb/2, "};\n"), want: "infiniband/mlx5dv.h:1: the line has more than 300000 tokens (in the initializer of a, from line 1)"},
		{name: "15 MB enum expression", make: text("enum { X = 0", "+1", 15*mb/2, " };\n"), want: "infiniband/mlx5dv.h:1: the line has more than 300000 tokens (in an anonymous enum, from line 1)"},
		{name: "15 MB comment line", make: text("/* ", "x", 15*mb, " */\nstruct s { int a; };\n"), want: ""},
		{name: "15 MB string line", make: text("static const char s[] = \"", "x", 15*mb, "\";\n"), want: ""},
		{name: "500k enumerators", make: lines("enum many {\n", "\tE%d,\n", "};\n", 500_000), want: "infiniband/mlx5dv.h:300000: the headers have more than 600000 tokens in all (in enum many, from line 1)"},
		{name: "300k fields", make: lines("struct wide {\n", "\tint f%d;\n", "};\n", 300_000), want: "infiniband/mlx5dv.h:200001: the headers have more than 600000 tokens in all (in struct wide, from line 1)"},
	}
}
