package cdiff

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

func load(t *testing.T, root string) *cheader.Model {
	t.Helper()
	m, err := cheader.Load(cheader.Config{IncludeRoot: root, Header: "infiniband/mlx5dv.h"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// find returns the change of kind to name, or fails.
func find(t *testing.T, r *Report, kind, name string) Change {
	t.Helper()
	for _, c := range r.Changes {
		if c.Kind == kind && c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s change for %s in:\n%s", kind, name, table(r))
	return Change{}
}

func table(r *Report) string {
	var b bytes.Buffer
	r.WriteTable(&b)
	return b.String()
}

// TestTiny compares two small headers whose every difference is known.
func TestTiny(t *testing.T) {
	r := Compare(load(t, "testdata/old"), load(t, "testdata/new"))
	want := []struct{ kind, change, name, old, new string }{
		{KindFunction, Changed, "tiny_open", "int tiny_open(int fd, unsigned int flags)", "int tiny_open(long fd, unsigned int flags)"},
		{KindFunction, Changed, "tiny_close", "int tiny_close(int fd)", "#define tiny_close(...) _tiny_close(fd, 0)"},
		{KindFunction, Added, "_tiny_close", "", "int _tiny_close(int fd, int how)"},
		{KindFunction, Added, "tiny_added", "", "int tiny_added(void)"},
		{KindRecord, Added, "struct tiny_new_only", "", "size 4, align 4"},
		{KindRecord, Removed, "struct tiny_old_only", "size 4, align 4", ""},
		{KindLayout, Changed, "struct tiny_seg", "size 8, align 4", "size 24, align 8"},
		{KindField, Changed, "struct tiny_seg.half", "uint16_t at 6" /* placeholder, checked below */, ""},
		{KindField, Changed, "struct tiny_seg.bits", "", ""},
		{KindField, Added, "struct tiny_seg.wide", "", "uint64_t at 16"},
		{KindEnum, Added, "enum tiny_new_enum", "", ""},
		{KindConstant, Added, "TINY_C", "", "0x4 int (enum tiny_flags)"},
		{KindConstant, Added, "TINY_X", "", ""},
		{KindConstant, Removed, "TINY_GONE", "0x1 int (macro)", ""},
		{KindConstant, Changed, "TINY_MAX", "0x10 int (macro)", "0x20 int (macro)"},
		// One inserted member: the members after it are one change.
		{KindLayout, Changed, "struct tiny_ctx", "size 16, align 4", "size 20, align 4"},
		{KindField, Added, "struct tiny_ctx.ins", "", "int at 4"},
		{KindOffsets, Changed, "struct tiny_ctx", "3 fields, .b to .d", "moved +4 bytes"},
		// Macros by their tokens (tiny_ws only gained spaces).
		{KindMacro, Changed, "tiny_reg", "#define tiny_reg(...) _tiny_reg(pd, a, 0)", "#define tiny_reg(...) _tiny_reg(pd, a, 1)"},
		{KindMacro, Changed, "TINY_STR", `#define TINY_STR "old"`, `#define TINY_STR "new"`},
		{KindMacro, Added, "tiny_new_macro", "", "#define tiny_new_macro(...) (x)"},
	}
	for _, w := range want {
		c := find(t, r, w.kind, w.name)
		if c.Change != w.change {
			t.Errorf("%s %s: %s, want %s", w.kind, w.name, c.Change, w.change)
		}
		if w.kind == KindField && w.change == Changed {
			continue
		}
		if w.old != "" && c.Old != w.old || w.new != "" && c.New != w.new {
			t.Errorf("%s %s: %q -> %q, want %q -> %q", w.kind, w.name, c.Old, c.New, w.old, w.new)
		}
	}
	if c := find(t, r, KindField, "struct tiny_seg.half"); c.Old != "uint16_t at 4" || c.New != "uint32_t at 4" {
		t.Errorf("half: %q -> %q", c.Old, c.New)
	}
	if c := find(t, r, KindField, "struct tiny_seg.bits"); c.Old != "uint8_t:4 at bit 48" || c.New != "uint8_t:5 at bit 64" {
		t.Errorf("bits: %q -> %q", c.Old, c.New)
	}
	for _, c := range r.Changes {
		if c.Name == "tiny_renamed_param" || c.Name == "TINY_A" || c.Name == "enum tiny_flags" || c.Name == "tiny_ws" ||
			strings.HasPrefix(c.Name, "struct tiny_ctx.") && c.Name != "struct tiny_ctx.ins" {
			t.Errorf("reported an unchanged declaration: %+v", c)
		}
	}
	if n := len(r.Changes); n != len(want) {
		t.Errorf("%d changes, want %d:\n%s", n, len(want), table(r))
	}
	// The JSON has the same changes.
	var back Report
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Changes) != len(r.Changes) {
		t.Fatalf("JSON round trip: %v", err)
	}
	if tb := table(r); !strings.Contains(tb, "KIND") || !strings.Contains(tb, "TINY_MAX") {
		t.Errorf("table:\n%s", tb)
	}
}

// TestReleases checks what the upgrade path promises on the real headers.
func TestReleases(t *testing.T) {
	models := map[string]*cheader.Model{}
	for _, v := range rdmacore.Versions {
		root, err := rdmacore.IncludeRoot(".", v)
		if err != nil {
			t.Fatal(err)
		}
		models[v] = load(t, root)
	}
	r := Compare(models["44.0"], models["56.1"])
	find(t, r, KindConstant, "MLX5DV_QP_CREATE_OOO_DP")
	for _, f := range []string{"mlx5dv_reg_dmabuf_mr", "mlx5dv_get_data_direct_sysfs_path"} {
		if c := find(t, r, KindFunction, f); c.Change != Added {
			t.Errorf("%s: %s", f, c.Change)
		}
	}
	// ibv_reg_mr's body changed (as from 44.0 to 44.12): its tokens.
	if c := find(t, r, KindMacro, "ibv_reg_mr"); c.Change != Changed || !strings.Contains(c.New, "(int)(access)") {
		t.Errorf("ibv_reg_mr: %+v", c)
	}
	r = Compare(models["56.1"], models["65.0"])
	// The members 65.0 adds to verbs_context move the 41 others: one line.
	if c := find(t, r, KindOffsets, "struct verbs_context"); c.Old != "41 fields, .query_port to .context" || c.New != "moved +48 bytes" {
		t.Errorf("verbs_context: %+v", c)
	}
	for _, c := range r.Changes {
		if c.Kind == KindField && c.Change == Changed && strings.HasPrefix(c.Name, "struct verbs_context.") {
			t.Errorf("a moved member on a line of its own: %+v", c)
		}
	}
	for _, f := range []string{"mlx5dv_devx_obj_export", "mlx5dv_devx_obj_import", "mlx5dv_devx_obj_unimport",
		"mlx5dv_devx_umem_export", "mlx5dv_devx_umem_import", "mlx5dv_var_export", "mlx5dv_var_import"} {
		if c := find(t, r, KindFunction, f); c.Change != Added {
			t.Errorf("%s: %s", f, c.Change)
		}
	}
	if r := Compare(models["65.0"], models["65.0"]); len(r.Changes) != 0 {
		t.Errorf("a header differs from itself:\n%s", table(r))
	}
}

// TestNoChangesJSON: a header compared with itself has no changes, and the
// JSON says so with [] (not null).
func TestNoChangesJSON(t *testing.T) {
	m := load(t, "testdata/old")
	b, err := json.Marshal(Compare(m, m))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"changes":[]`) {
		t.Errorf("no changes: %s", b)
	}
}

// TestTableWidth: every line of the table of a release upgrade stays near
// MaxWidth, and a declaration too long for its column is printed whole
// under its row.
func TestTableWidth(t *testing.T) {
	long := strings.Repeat("struct mlx5dv_flow_match_parameters * match_value, ", 10)
	r := &Report{Changes: []Change{
		{Kind: KindFunction, Change: Added, Name: "f", New: "int f(" + long + "int x)", File: "infiniband/mlx5dv.h:1:1"},
		{Kind: KindConstant, Change: Added, Name: "C", New: "0x1 int (macro)", File: "infiniband/mlx5dv.h:2:1"},
		{Kind: KindField, Change: Changed, Name: "struct " + strings.Repeat("x", 90) + ".y", Old: "int at 0", New: "long at 0", File: "infiniband/mlx5dv.h:3:1"},
	}}
	tb := table(r)
	for _, l := range strings.Split(strings.TrimSuffix(tb, "\n"), "\n")[1:] {
		if n := utf8.RuneCountInString(l); n > MaxWidth+20 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if got := strings.Join(strings.Fields(tb), " "); !strings.Contains(got, strings.Join(strings.Fields(long), " ")) {
		t.Errorf("the long declaration is not printed whole:\n%s", tb)
	}
	if !regexp.MustCompile(`(?m)^constant +added +C +- +0x1 int \(macro\) +infiniband/mlx5dv.h:2:1$`).MatchString(tb) {
		t.Errorf("a short row is not one line:\n%s", tb)
	}
	if !strings.Contains(tb, "…") {
		t.Errorf("the long name is not elided:\n%s", tb)
	}
}
