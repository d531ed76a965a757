package resolve_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/resolve"
	"github.com/mlx5gen/mlx5gen/gen/spec"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// TestPRMModel checks the real spec's PRM model: kinds, types and the
// nested layouts.
func TestPRMModel(t *testing.T) {
	p, err := build(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.PRM == nil {
		t.Fatal("no PRM model")
	}
	for _, s := range p.Spec {
		if s == "hw/prm.yaml" {
			t.Errorf("the header's package names the PRM-only file %s", s)
		}
	}
	fields := map[string]*model.LayoutField{}
	for _, l := range p.PRM.Layouts {
		for _, f := range l.Fields {
			fields[l.Name+"."+f.Name] = f
		}
	}
	for name, want := range map[string]struct {
		kind model.LayoutKind
		bits int
	}{
		"mkc.pd":                               {model.LayoutInt, 32},
		"mkc.start_addr":                       {model.LayoutInt, 64},
		"mkc.a":                                {model.LayoutInt, 8},
		"create_mkey_in.memory_key_mkey_entry": {model.LayoutNested, 0},
		"encryption_key_obj.key":               {model.LayoutBytes, 0},
		"query_hca_cap_out.capability":         {model.LayoutUnion, 0},
	} {
		f := fields[name]
		if f == nil || f.Kind != want.kind || f.Type.Bits != want.bits {
			t.Errorf("%s: %+v, want kind %d type bits %d", name, f, want.kind, want.bits)
		}
	}
	if f := fields["create_mkey_in.memory_key_mkey_entry"]; f != nil && (len(f.Nested) != 1 || f.Width != 0x200) {
		t.Errorf("memory_key_mkey_entry: %d layouts, width %#x", len(f.Nested), f.Width)
	}
}

// TestPRMBuildErrors checks the errors only the resolver can see.
func TestPRMBuildErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown nested", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, layout: nope}\n", "spec/x.yaml:5:9: prm layout x: field a: no prm layout nope"},
		{"unknown union member", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, width: 0x80, union: [mkc, nope]}\n", "field a: union member: no prm layout nope"},
		{"union member too wide", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, width: 0x80, union: [mkc]}\n", "union member mkc (0x200 bits) is wider than the field (0x80 bits)"},
		{"nested past the end", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, layout: mkc}\n", "prm layout x: field a: bits 0x0..0x1ff pass the end of the 0x80-bit layout"},
		{"self", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, layout: x}\n", "a layout cannot contain itself"},
		{"overlap", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, width: 8}\n      - {name: b, bit: 4, width: 4}\n", "spec/x.yaml:6:9: prm layout x: field b: bit 0x4 overlaps the field before it (which ends at bit 0x8)"},
		{"unknown enum", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, width: 8, enum: colour}\n", "field a: no prm enum colour"},
		{"enum too wide", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, width: 4, enum: cmd_opcode}\n", "field a: enum cmd_opcode takes 16 bits; the field has 4"},
		{"accessor clash", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a_b, bit: 0, width: 8}\n      - {name: a, go: AB, bit: 8, width: 8}\n", "field a: accessor AB is already field a_b's"},
		{"setter clash", "prm_layouts:\n  - name: x\n    bits: 0x80\n    fields:\n      - {name: a, bit: 0, width: 8}\n      - {name: set_a, bit: 8, width: 8}\n", "field set_a: accessor SetA is already field a's"},
		{"type clash", "prm_layouts:\n  - {name: x, go: Mkc, bits: 0x20, fields: [{name: a, bit: 0, width: 1}]}\n", "spec/x.yaml:2:5: Go name Mkc of prm layout x is already used (spec/hw/prm.yaml:"},
		{"reserved name", "prm_layouts:\n  - {name: x, go: CmdError, bits: 0x20, fields: [{name: a, bit: 0, width: 1}]}\n", "Go name CmdError of prm layout x is already used (the PRM package's own code)"},
		{"enum value clash", "prm_enums:\n  - {name: e, width: 16, values: [{name: MLX5_CMD_STAT_OK, value: 9, meaning: a}]}\n", "Go name MLX5_CMD_STAT_OK of value MLX5_CMD_STAT_OK of prm enum e is already used"},
		{"enum duplicate value", "prm_enums:\n  - {name: e, width: 4, values: [{name: E_A, value: 1, meaning: a}, {name: E_B, value: 1, meaning: b}]}\n", "prm enum e: value E_B = 0x1 is E_A's too"},
		{"unexported", "prm_layouts:\n  - {name: x, go: lower, bits: 0x20, fields: [{name: a, bit: 0, width: 1}]}\n", "Go name \"lower\" of prm layout x is not an exported Go identifier"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(t, map[string]string{"x.yaml": c.src})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestPRMNeedsStatus refuses PRM layouts without what CheckStatus reads.
func TestPRMNeedsStatus(t *testing.T) {
	c := *header(t)
	fsys := fstest.MapFS{}
	for _, dir := range []string{"enums", "hw", "api"} {
		entries, _ := specfiles.FS.ReadDir(dir)
		for _, e := range entries {
			if dir+"/"+e.Name() == "hw/prm.yaml" {
				continue
			}
			b, _ := specfiles.FS.ReadFile(dir + "/" + e.Name())
			fsys["spec/"+dir+"/"+e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	fsys["spec/hw/p.yaml"] = &fstest.MapFile{Data: []byte("prm_layouts:\n  - {name: x, bits: 0x20, fields: [{name: a, bit: 0, width: 1}]}\n")}
	s, err := spec.Load(fsys, "spec", "spec")
	if err != nil {
		t.Fatal(err)
	}
	_, err = resolve.Build(&c, s, resolve.Config{})
	if err == nil || !strings.Contains(err.Error(), "spec/hw/p.yaml:2:5: the PRM layouts need prm enum cmd_status") {
		t.Errorf("got %v", err)
	}
}
