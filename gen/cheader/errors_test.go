package cheader_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
)

// writeHeader makes an include root holding infiniband/<name> with src.
func writeHeader(t *testing.T, name, src string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "infiniband"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "infiniband", name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestMissingIncludeRoot(t *testing.T) {
	_, err := cheader.Load(cheader.Config{IncludeRoot: "/nonexistent/include"})
	t.Log(err)
	var me *cheader.MissingError
	if !errors.As(err, &me) {
		t.Fatalf("want a MissingError, got %v", err)
	}
	for _, want := range []string{"/nonexistent/include", "libibverbs-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}

func TestMissingHeader(t *testing.T) {
	root := t.TempDir()
	_, err := cheader.Load(cheader.Config{IncludeRoot: root})
	t.Log(err)
	var me *cheader.MissingError
	if !errors.As(err, &me) || me.What != "header" {
		t.Fatalf("want a missing header error, got %v", err)
	}
	for _, want := range []string{filepath.Join(root, "infiniband/mlx5dv.h"), "apt-get install libibverbs-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}

func TestMissingIncludeFile(t *testing.T) {
	root := writeHeader(t, "mlx5dv.h", "#include <infiniband/no_such_header.h>\nstruct a { int x; };\n")
	_, err := cheader.Load(cheader.Config{IncludeRoot: root})
	t.Log(err)
	var me *cheader.MissingError
	if !errors.As(err, &me) {
		t.Fatalf("want a MissingError, got %v", err)
	}
	for _, want := range []string{"infiniband/mlx5dv.h:1:", "infiniband/no_such_header.h", "libibverbs-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}

func TestParseErrorHasPosition(t *testing.T) {
	root := writeHeader(t, "mlx5dv.h", "struct ok { int a; };\n\nstruct broken {\n\tint a b;\n};\n")
	_, err := cheader.Load(cheader.Config{IncludeRoot: root})
	t.Log(err)
	var pe *cheader.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("want a ParseError, got %v", err)
	}
	if !regexp.MustCompile(`^infiniband/mlx5dv\.h:4:\d+: `).MatchString(pe.Messages[0]) {
		t.Errorf("first message %q is not file:line:col: message at line 4", pe.Messages[0])
	}
	if strings.Contains(err.Error(), root) {
		t.Errorf("%q contains the absolute include root", err)
	}
}

// Layouts the model cannot compute exactly are refused, naming the
// declaration, never laid out wrongly.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"_Pragma on the declaration's line", "_Pragma(\"pack(1)\") struct p { char a; int b; };\n",
			[]string{"infiniband/mlx5dv.h:1:20", "struct p", "_Pragma"}},
		{"pack inside a record", "struct q { char a;\n#pragma pack(1)\n int b; };\n",
			[]string{"infiniband/mlx5dv.h:1:1", "struct q", "#pragma pack changes between the marked lines"}},
		{"pack value from a macro", "#define V 1\n#pragma pack(push, V)\nstruct v { char a; int b; };\n",
			[]string{"infiniband/mlx5dv.h:2:9: #pragma pack: ", "uses V, which is a macro", "struct v at infiniband/mlx5dv.h:3:1"}},
		{"pack value from a macro, record in another header", "#include \"other.h\"\n#define PK 1\n#pragma pack(push, PK)\nstruct v { char a; int b; };\n",
			[]string{"infiniband/mlx5dv.h:3:9: #pragma pack: ", "uses PK, which is a macro", "struct o at infiniband/other.h:1:1"}},
		{"pack form not known", "#pragma pack(push, 1, 2, 3)\nstruct u { char a; int b; };\n",
			[]string{"infiniband/mlx5dv.h:2:1", "struct u", "#pragma pack at infiniband/mlx5dv.h:1:9"}},
		{"pack expression", "#pragma pack(1 + 1)\nstruct e { char a; int b; };\n",
			[]string{"infiniband/mlx5dv.h:2:1", "struct e", "#pragma pack at infiniband/mlx5dv.h:1:9"}},
		{"packed member", "struct m { char a; int b __attribute__((packed)); };\n",
			[]string{"infiniband/mlx5dv.h:1:", "struct m.b", "packed on a single member"}},
		{"mode typedef", "typedef int ti __attribute__((mode(TI)));\nstruct t { ti x; };\n",
			[]string{"typedef ti", "mode"}},
		{"aligned bitfield", "struct b { int x:3 __attribute__((aligned(8))); };\n",
			[]string{"struct b.x", "bitfield"}},
		{"bare aligned", "struct c { char x; } __attribute__((aligned));\n",
			[]string{"struct c", "aligned without an argument"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeHeader(t, "mlx5dv.h", c.src)
			if strings.Contains(c.src, "other.h") { // a record laid out before the pragma, in another header
				if err := os.WriteFile(filepath.Join(root, "infiniband", "other.h"), []byte("struct o { char c; };\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := cheader.Load(cheader.Config{IncludeRoot: root})
			t.Log(err)
			var le *cheader.LayoutError
			if !errors.As(err, &le) {
				t.Fatalf("want a LayoutError, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not mention %q", err, w)
				}
			}
		})
	}
}

// A pack pragma that was popped before a record does not affect it.
func TestPragmaPackPopped(t *testing.T) {
	root := writeHeader(t, "mlx5dv.h", "#pragma pack(push, 1)\n#pragma pack(pop)\nstruct ok { char a; int b; };\n")
	m, err := cheader.Load(cheader.Config{IncludeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Struct("ok"); r.Size != 8 {
		t.Errorf("struct ok: size %d, want 8", r.Size)
	}
}

// A record defined by a macro is laid out under the pack value in force
// where the macro is used.
func TestPragmaPackMacroDefinedRecord(t *testing.T) {
	root := writeHeader(t, "mlx5dv.h", "#define DEF(n) struct n { char a; int b; };\n#pragma pack(1)\nDEF(x)\n#pragma pack()\nDEF(y)\n")
	m, err := cheader.Load(cheader.Config{IncludeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if x, y := m.Struct("x"), m.Struct("y"); x.Size != 5 || y.Size != 8 {
		t.Errorf("struct x size %d (want 5), struct y size %d (want 8)", x.Size, y.Size)
	}
}

// A header that includes itself stops at gcc's 200 levels with the include
// chain, instead of recursing until memory runs out.
func TestIncludeLoop(t *testing.T) {
	root := writeHeader(t, "mlx5dv.h", "struct a { int x; };\n#include <infiniband/loop.h>\n")
	if err := os.WriteFile(filepath.Join(root, "infiniband", "loop.h"), []byte("\n#include \"loop.h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := cheader.Load(cheader.Config{IncludeRoot: root})
	t.Log(err)
	var ie *cheader.IncludeError
	if !errors.As(err, &ie) {
		t.Fatalf("want an IncludeError, got %v", err)
	}
	for _, want := range []string{"infiniband/loop.h:2: ", "200 levels", "infiniband/mlx5dv.h:2 -> infiniband/loop.h:2 -> infiniband/loop.h:2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), root) {
		t.Errorf("%q contains the absolute include root", err)
	}
}

// A macro C gives no value (cc/v4 wraps 1<<64 to 0) is refused with its
// position instead of emitted wrong.
func TestMacroOverflowRefused(t *testing.T) {
	for src, want := range map[string]string{
		"#define X (1 << 64)\n":                        "infiniband/mlx5dv.h:1:9: macro X: shift count 64",
		"\n#define Y (1ULL << 64)\n":                   "infiniband/mlx5dv.h:2:9: macro Y: shift count 64",
		"#define Z (2147483647 + 1)\n":                 "macro Z: 2147483647 + 1 overflows int",
		"#define D (1 / 0)\n":                          "macro D: division by zero",
		"#define N (1 << -1)\n":                        "macro N: shift count -1 is negative",
		"#define S 2\n#define W (1u << (S * 16))\n":    "macro W: shift count 32",
		"enum { E = 40 };\n#define V (1 << E)\n":       "macro V: shift count 40",
		"#define L (-9223372036854775807L - 1) / -1\n": "macro L: -9223372036854775808 / -1 overflows long",
	} {
		root := writeHeader(t, "mlx5dv.h", src)
		_, err := cheader.Load(cheader.Config{IncludeRoot: root})
		t.Log(err)
		var me *cheader.MacroError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want a MacroError with %q", src, err, want)
		}
	}
	// Unsigned arithmetic wraps in C: that value is kept.
	root := writeHeader(t, "mlx5dv.h", "#define U (0xffffffffffffffff + 1)\n")
	m, err := cheader.Load(cheader.Config{IncludeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Constant("U"); c == nil || c.ConstValue().Bits != 0 || c.ConstType().Kind != cheader.ULong {
		t.Errorf("U: %+v", c)
	}
}
