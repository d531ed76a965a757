package spec

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestPRMErrors checks that each malformed PRM descriptor is refused with
// its position and the rule it breaks.
func TestPRMErrors(t *testing.T) {
	lay := func(fields string) string {
		return "prm_layouts:\n  - name: l\n    bits: 0x80\n    fields:\n" + fields
	}
	cases := []struct{ name, src, want string }{
		{"bits not dwords", "prm_layouts:\n  - {name: l, bits: 0x30, fields: [{name: a, bit: 0, width: 1}]}\n", "spec/a.yaml:2:5: prm layout l: bits 0x30: a layout is a whole number of 32-bit dwords"},
		{"bits huge", "prm_layouts:\n  - {name: l, bits: 0x7fffffffffffffe0, fields: [{name: a, bit: 0, width: 1}]}\n", "prm layout l: bits 0x7fffffffffffffe0"},
		{"no fields", "prm_layouts:\n  - {name: l, bits: 0x20}\n", "spec/a.yaml:2:5: missing required key \"fields\""},
		{"outside", lay("      - {name: a, bit: 0x80, width: 1}\n"), "spec/a.yaml:5:9: prm layout l: field a: bit 0x80 is outside the 0x80-bit layout"},
		{"negative bit", lay("      - {name: a, bit: -1, width: 1}\n"), "field a: bit -0x1 is outside"},
		{"too wide", lay("      - {name: a, bit: 0x60, width: 0x40}\n"), "prm layout l: field a: width 0x40 does not fit the 0x80-bit layout from bit 0x60"},
		{"zero width", lay("      - {name: a, bit: 0}\n"), "field a: width 0x0 does not fit"},
		{"crosses dword", lay("      - {name: a, bit: 0x18, width: 0x10}\n"), "prm layout l: field a: bits 0x18..0x27 cross a dword boundary"},
		{"odd 64", lay("      - {name: a, bit: 0x10, width: 0x40}\n"), "field a: a field wider than 32 bits is 64 bits on two whole dwords (bit 0x10 width 0x40)"},
		{"48 bits", lay("      - {name: a, bit: 0, width: 0x30}\n"), "a field wider than 32 bits is 64 bits"},
		{"bytes not dwords", lay("      - {name: a, bit: 0x8, width: 0x60}\n"), "a region wider than 64 bits (or a union) is whole dwords"},
		{"twice", lay("      - {name: a, bit: 0, width: 1}\n      - {name: a, bit: 1, width: 1}\n"), "spec/a.yaml:6:9: prm layout l: field a: described twice"},
		{"layout and enum", lay("      - {name: a, bit: 0, layout: m, enum: e}\n"), "give at most one of layout, union and enum"},
		{"nested width", lay("      - {name: a, bit: 0, width: 0x20, layout: m}\n"), "a nested layout's width is its layout's"},
		{"nested unaligned", lay("      - {name: a, bit: 0x8, layout: m}\n"), "a nested layout starts on a dword"},
		{"layout twice", "prm_layouts:\n  - {name: l, bits: 0x20, fields: [{name: a, bit: 0, width: 1}]}\n  - {name: l, bits: 0x20, fields: [{name: a, bit: 0, width: 1}]}\n", "spec/a.yaml:3:5: prm layout l described twice (first at spec/a.yaml:2:5)"},
		{"enum width", "prm_enums:\n  - {name: e, width: 40, values: [{name: A, value: 1, meaning: a}]}\n", "spec/a.yaml:2:5: prm enum e: width 40: an enum value takes 1 to 32 bits"},
		{"enum value too big", "prm_enums:\n  - {name: e, width: 4, values: [{name: A, value: 0x10, meaning: a}]}\n", "spec/a.yaml:2:34: prm enum e: value A = 0x10 does not fit its 4 bits"},
		{"enum meaning", "prm_enums:\n  - {name: e, width: 4, values: [{name: A, value: 1, meaning: \" \"}]}\n", "prm enum e: value A: the meaning must be one non-empty line"},
		{"enum value twice", "prm_enums:\n  - {name: e, width: 4, values: [{name: A, value: 1, meaning: a}, {name: A, value: 2, meaning: b}]}\n", "prm enum e: value A given twice"},
		{"enum twice", "prm_enums:\n  - {name: e, width: 4, values: [{name: A, value: 1, meaning: a}]}\n  - {name: e, width: 4, values: [{name: B, value: 1, meaning: a}]}\n", "prm enum e described twice"},
		{"unknown key", lay("      - {name: a, bit: 0, width: 1, offset: 3}\n"), "spec/a.yaml:5:37: unknown key \"offset\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := load(t, map[string]string{"a.yaml": c.src})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestPRMOnly marks the files that describe PRM layouts and nothing else.
func TestPRMOnly(t *testing.T) {
	fsys := map[string]string{
		"p.yaml": "prm_enums:\n  - {name: e, width: 4, values: [{name: A, value: 1, meaning: a}]}\n",
		"m.yaml": "enums:\n  - {c: x, kind: flags}\nprm_enums:\n  - {name: f, width: 4, values: [{name: B, value: 1, meaning: a}]}\n",
	}
	mfs := fstest.MapFS{}
	for name, src := range fsys {
		mfs["spec/"+name] = &fstest.MapFile{Data: []byte(src)}
	}
	s, err := Load(mfs, "spec", "spec")
	if err != nil {
		t.Fatal(err)
	}
	if !s.PRMOnly["p.yaml"] || s.PRMOnly["m.yaml"] {
		t.Errorf("PRMOnly = %v", s.PRMOnly)
	}
}
