package verify

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

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// rootsEnv names more include roots, separated like PATH, for the release
// tests here and for gen/cheader's TestLayoutMatchesGCC: any rdma-core
// release (an upstream tag assembled as rdma-core installs it, a vendor
// tree, a copy without libibverbs.pc).
const rootsEnv = "MLX5GEN_INCLUDE_ROOTS"

// releaseRoots are the cached releases plus the roots of rootsEnv.
func releaseRoots(t *testing.T) map[string]string {
	roots := map[string]string{}
	for _, v := range rdmacore.Versions {
		r, err := rdmacore.IncludeRoot(".", v)
		if err != nil {
			t.Fatal(err)
		}
		roots[v] = r
	}
	for _, r := range filepath.SplitList(os.Getenv(rootsEnv)) {
		if r == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(r, "infiniband", "mlx5dv.h")); err != nil {
			t.Fatalf("%s: %v", rootsEnv, err)
		}
		roots["env:"+r] = r
	}
	return roots
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestMirrorLayoutsMatchGCC generates the package for every release root
// and compares each struct mirror's size, alignment and every member's
// offset and size (union members too) with gcc. The generated mirrors
// assert these numbers at compile time, so with the build of
// TestReleaseBuilds this proves the Go layout.
func TestMirrorLayoutsMatchGCC(t *testing.T) {
	roots := releaseRoots(t)
	for _, name := range sortedKeys(roots) {
		root := roots[name]
		t.Run(name, func(t *testing.T) {
			res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range res.Package.Warnings {
				t.Errorf("warning: %v", w)
			}
			want, prog := mirrorProgram(res.Package.API.Mirrors)
			got := runC(t, root, prog)
			for _, k := range sortedKeys(want) {
				if got[k] != want[k] {
					t.Errorf("%s: gcc says %q, the mirror %q", k, got[k], want[k])
				}
			}
			t.Logf("%d mirrors, %d sizes and offsets checked against gcc", len(res.Package.API.Mirrors), len(want))
			if len(want) < 100 {
				t.Errorf("only %d items checked", len(want))
			}
		})
	}
}

// mirrorProgram writes a C program printing what want expects.
func mirrorProgram(mirrors []*model.Mirror) (want map[string]string, prog string) {
	want = map[string]string{}
	var c strings.Builder
	c.WriteString("#include <stddef.h>\n#include <stdio.h>\n#include <infiniband/mlx5dv.h>\nint main(void) {\n")
	line := func(key, expr string, v string) {
		want[key] = v
		fmt.Fprintf(&c, "\tprintf(\"%s\\t%%zu\\n\", (size_t)(%s));\n", key, expr)
	}
	for _, m := range mirrors {
		st := "struct " + m.CName
		line(m.CName+" sizeof", "sizeof("+st+")", fmt.Sprint(m.Size))
		line(m.CName+" alignof", "_Alignof("+st+")", fmt.Sprint(m.Align))
		for _, f := range m.Fields {
			if f.CName != "" {
				line(m.CName+"."+f.CName+" offsetof", "offsetof("+st+", "+f.CName+")", fmt.Sprint(f.Offset))
				line(m.CName+"."+f.CName+" sizeof", "sizeof(((("+st+" *)0)->"+f.CName+"))", fmt.Sprint(f.Size))
			}
			for _, u := range f.Members {
				line(m.CName+"."+u.CName+" offsetof", "offsetof("+st+", "+u.CName+")", fmt.Sprint(f.Offset+u.Offset))
			}
		}
	}
	c.WriteString("\treturn 0;\n}\n")
	return want, c.String()
}

// runC compiles and runs a program against the headers of root and
// returns its "key\tvalue" lines.
func runC(t *testing.T, root, prog string) map[string]string {
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "m.c"), filepath.Join(dir, "m")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-std=gnu11", "-w", "-I", root, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "\t"); ok {
			got[k] = v
		}
	}
	return got
}

// TestReleaseBuilds generates the package for every release root into a
// module of its own and runs go build and go vet on it: what each release
// declares (more or fewer functions, rules and constants) still compiles,
// and the mirrors' compile-time layout assertions hold.
func TestReleaseBuilds(t *testing.T) {
	roots := releaseRoots(t)
	for _, name := range sortedKeys(roots) {
		root := roots[name]
		t.Run(name, func(t *testing.T) {
			res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
			if err != nil {
				t.Fatal(err)
			}
			mod := t.TempDir()
			pkg := filepath.Join(mod, "mlx5dv")
			if err := os.MkdirAll(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			// The generated package imports only the standard library.
			files := map[string][]byte{filepath.Join(mod, "go.mod"): []byte("module example.com/release\n\ngo 1.26\n")}
			for _, f := range res.Files {
				files[filepath.Join(pkg, f.Name)] = f.Content
			}
			for path, b := range files {
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
				cmd := exec.Command("go", args...)
				cmd.Dir = mod
				cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=on", "GOWORK=off")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("go %s (rdma-core %s): %v\n%s", strings.Join(args, " "), res.C.Version, err, out)
				}
			}
			p := res.Package
			t.Logf("rdma-core %q: %d functions, %d rules, %d constants: go build and go vet pass", res.C.Version, len(p.API.Funcs), len(p.API.Rules), len(p.Consts))
		})
	}
}
