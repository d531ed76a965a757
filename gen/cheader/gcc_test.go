package cheader_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestLayoutMatchesGCC is the model's proof: for each supported rdma-core
// release it writes a C program that prints sizeof/_Alignof of every record
// and enum, offsetof and sizeof of every named field (bit offset and width
// for bitfields), and the value and type of every constant, compiles it with
// gcc against the same headers, and compares everything with the model.
func TestLayoutMatchesGCC(t *testing.T) {
	roots := map[string]string{}
	for _, v := range rdmacore.Versions {
		root, err := rdmacore.IncludeRoot(".", v)
		if err != nil {
			t.Fatalf("rdma-core %s headers: %v", v, err)
		}
		roots[v] = root
	}
	if _, err := os.Stat(filepath.Join(cheader.DefaultIncludeRoot, cheader.DefaultHeader)); err == nil {
		roots["installed"] = cheader.DefaultIncludeRoot
	}
	for name, root := range extraRoots(t) {
		roots[name] = root
	}
	names := make([]string, 0, len(roots))
	for n := range roots {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		root := roots[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, err := cheader.Load(cheader.Config{IncludeRoot: root})
			if err != nil {
				t.Fatal(err)
			}
			if name != "installed" && !strings.HasPrefix(name, "env:") && m.Version != name {
				t.Errorf("detected version %q (%s), want %s", m.Version, m.VersionSource, name)
			}
			c, bad := compareWithGCC(t, m, cheader.DefaultHeader)
			report(t, bad)
			t.Logf("rdma-core %s: %d structs and unions (%d external), %d enums, %d fields, %d constants checked against gcc: %d mismatches",
				m.Version, c.records, c.external, c.enums, c.fields, c.consts, len(bad))
			if c.records < 300 || c.fields < 1700 || c.consts < 850 {
				t.Errorf("suspiciously few items checked: %+v", c)
			}
		})
	}
}

type counts struct {
	records, external, enums, fields, consts int
}

func report(t *testing.T, mismatches []string) {
	t.Helper()
	for i, s := range mismatches {
		if i == 40 {
			t.Errorf("... %d mismatches in all", len(mismatches))
			break
		}
		t.Error(s)
	}
}

// compareWithGCC checks every layout and constant of m against gcc and
// returns what differs. header is the header to include, relative to
// m.IncludeRoot.
func compareWithGCC(t *testing.T, m *cheader.Model, header string) (counts, []string) {
	t.Helper()
	var prog bytes.Buffer
	want := map[string]string{}
	var order []string
	var c counts
	expect := func(key, val string) {
		if _, dup := want[key]; !dup {
			order = append(order, key)
		}
		want[key] = val
	}

	fmt.Fprintf(&prog, `#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <%s>

#define TN(x) _Generic((x), _Bool: "_Bool", char: "char", signed char: "signed char", unsigned char: "unsigned char", \
	short: "short", unsigned short: "unsigned short", int: "int", unsigned int: "unsigned int", long: "long", \
	unsigned long: "unsigned long", long long: "long long", unsigned long long: "unsigned long long", default: "other")
#define TYPE(key, T) printf("%%s\t%%zu %%zu\n", key, sizeof(T), _Alignof(T));
#define FIELD(key, T, f) printf("%%s\t%%zu %%zu\n", key, offsetof(T, f), sizeof(((T *)0)->f));
#define FLEX(key, T, f) printf("%%s\t%%zu\n", key, offsetof(T, f));
#define BITS(key, T, f) do { \
	union { T s; unsigned char b[sizeof(T)]; } u; int first = -1, n = 0; \
	memset(&u, 0, sizeof u); u.s.f = ~0ULL; \
	for (int i = 0; i < (int)(8 * sizeof(T)); i++) \
		if (u.b[i / 8] >> (i %% 8) & 1) { if (first < 0) first = i; n++; } \
	printf("%%s\t%%d %%d\n", key, first, n); } while (0);
#define CONST(key, x) printf("%%s\t%%lld %%llu %%s\n", key, (long long)(x), (unsigned long long)(x), TN(x));

int main(void) {
`, header)

	records := append(append([]*cheader.Record(nil), m.Records...), m.External...)
	for _, r := range records {
		if r.Incomplete || r.Parent != nil {
			continue
		}
		cname := r.CName()
		if r.Tag == "" && r.Typedef == "" {
			continue // reached only through its parent's members
		}
		c.records++
		if r.External {
			c.external++
		}
		key := "T " + cname
		fmt.Fprintf(&prog, "TYPE(%q, %s)\n", key, cname)
		expect(key, fmt.Sprintf("%d %d", r.Size, r.Align))
		for _, mb := range r.Members() {
			c.fields++
			f := mb.Field
			key := "F " + cname + "." + mb.Path
			switch {
			case f.Bitfield:
				fmt.Fprintf(&prog, "BITS(%q, %s, %s)\n", key, cname, mb.Path)
				expect(key, fmt.Sprintf("%d %d", mb.BitOffset, f.BitWidth))
			case f.Type.Kind == cheader.Array && f.Type.Len < 0:
				fmt.Fprintf(&prog, "FLEX(%q, %s, %s)\n", key, cname, mb.Path)
				expect(key, fmt.Sprintf("%d", mb.Offset))
			default:
				fmt.Fprintf(&prog, "FIELD(%q, %s, %s)\n", key, cname, mb.Path)
				expect(key, fmt.Sprintf("%d %d", mb.Offset, f.Type.Size))
			}
		}
	}
	for _, e := range append(append([]*cheader.Enum(nil), m.Enums...), m.ExternEnums...) {
		if e.Tag == "" && e.Typedef == "" {
			continue
		}
		c.enums++
		key := "T " + e.CName()
		fmt.Fprintf(&prog, "TYPE(%q, %s)\n", key, e.CName())
		expect(key, fmt.Sprintf("%d %d", e.Underlying.Size, e.Underlying.Align))
	}
	for _, k := range m.Constants() {
		c.consts++
		key := "C " + k.ConstName()
		fmt.Fprintf(&prog, "CONST(%q, %s)\n", key, k.ConstName())
		v := k.ConstValue()
		tn := k.ConstType().Kind
		if tn == cheader.Enumeration {
			tn = k.ConstType().Enum.Underlying.Kind
		}
		// (long long)x and (unsigned long long)x of a C constant of type T.
		s, u := int64(v.Bits), v.Bits
		switch k.ConstType().Size {
		case 4:
			if v.Signed {
				s, u = int64(int32(v.Bits)), uint64(int64(int32(v.Bits)))
			} else {
				s, u = int64(uint32(v.Bits)), uint64(uint32(v.Bits))
			}
		}
		expect(key, fmt.Sprintf("%d %d %s", s, u, tn))
	}
	prog.WriteString("return 0;\n}\n")

	dir := t.TempDir()
	src := filepath.Join(dir, "layout.c")
	bin := filepath.Join(dir, "layout")
	if err := os.WriteFile(src, prog.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcc", "-std=gnu11", "-w", "-I", m.IncludeRoot, "-o", bin, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, limit(string(out), 4000))
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("running the layout program: %v", err)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			got[k] = v
		}
	}
	var bad []string
	for _, k := range order {
		if got[k] != want[k] {
			bad = append(bad, fmt.Sprintf("%s: gcc says %q, the model %q", k, got[k], want[k]))
		}
	}
	return c, bad
}

func limit(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
