package spec

import (
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
)

// The PRM (programmer's reference manual) layouts are the device's command
// interface: the input and output mailboxes of commands such as
// CREATE_MKEY, which DEVX (mlx5dv_devx_obj_create and friends) passes to
// the device unchanged. They are written as in mlx5_ifc.h: a sequence of
// big-endian 32-bit dwords, each field at a bit offset from the start of
// the layout (bit 0 is the most significant bit of byte 0) with a width
// in bits. They do not depend on the header; generated/mlx5prm holds them.

// PRMEnum is a set of named values a PRM field takes (command opcodes,
// statuses, object types).
type PRMEnum struct {
	Pos    Pos             `yaml:"-"`
	Name   string          `yaml:"name,required"`  // lower-case words: cmd_status
	Go     string          `yaml:"go"`             // Go type name; default from Name
	Width  int             `yaml:"width,required"` // bits a value takes
	Doc    string          `yaml:"doc"`
	Values []*PRMEnumValue `yaml:"values,required"`
}

// PRMEnumValue is one value, under the name mlx5_ifc.h gives it.
type PRMEnumValue struct {
	Pos     Pos    `yaml:"-"`
	Name    string `yaml:"name,required"` // MLX5_CMD_STAT_BAD_PARAM_ERR
	Value   uint64 `yaml:"value"`
	Meaning string `yaml:"meaning,required"` // one line, our own words
}

// Layout is one PRM layout (mlx5_ifc_<name>_bits).
type Layout struct {
	Pos    Pos            `yaml:"-"`
	Name   string         `yaml:"name,required"` // as mlx5_ifc.h names it without mlx5_ifc_ and _bits: create_mkey_in
	Go     string         `yaml:"go"`            // Go type name; default from Name
	Bits   int            `yaml:"bits,required"` // size in bits, a multiple of 32
	Doc    string         `yaml:"doc"`
	Fields []*LayoutField `yaml:"fields,required"`
}

// LayoutField is a field of a layout. A field of at most 32 bits lies in
// one dword; a 64-bit field is two whole dwords; a wider one is bytes
// (key material). With Layout, the field is another layout (its width is
// that layout's); with Union, it is a region read as any of the listed
// layouts (query_hca_cap_out's capability).
type LayoutField struct {
	Pos    Pos      `yaml:"-"`
	Name   string   `yaml:"name,required"` // as mlx5_ifc.h names it
	Go     string   `yaml:"go"`            // Go accessor name; default from Name
	Bit    int      `yaml:"bit"`           // offset from the layout's first bit
	Width  int      `yaml:"width"`         // bits (not for Layout fields)
	Enum   string   `yaml:"enum"`          // a PRM enum the value takes
	Layout string   `yaml:"layout"`        // a nested layout
	Union  []string `yaml:"union"`         // layouts the region can be read as
	Doc    string   `yaml:"doc"`
}

// prmOnly reports whether the file describes PRM layouts or enums and
// nothing of the header.
func (f *File) prmOnly() bool {
	return len(f.PRMEnums)+len(f.Layouts) > 0 && len(f.Enums)+len(f.Segments)+len(f.Formats)+
		len(f.Functions)+len(f.Structs)+len(f.Rules) == 0
}

// MaxLayoutBits bounds a layout: the largest mailbox described is
// query_hca_cap_out, 0x8080 bits; 64 KiB leaves room and keeps every sum
// of offsets far from overflow.
const MaxLayoutBits = 1 << 19

// checkPRM validates the PRM descriptors on their own; the resolver checks
// the names they give one another (enums, nested layouts) and that fields
// are in bit order without overlap (a nested layout's width is its
// layout's).
func (s *Spec) checkPRM() diag.List {
	var errs diag.List
	bad := func(p Pos, format string, args ...any) { errs.Add(p, format, args...) }
	seen := map[string]Pos{}
	for _, e := range s.PRMEnums {
		if p, dup := seen["enum "+e.Name]; dup {
			bad(e.Pos, "prm enum %s described twice (first at %s)", e.Name, p)
		}
		seen["enum "+e.Name] = e.Pos
		if e.Width <= 0 || e.Width > 32 {
			bad(e.Pos, "prm enum %s: width %d: an enum value takes 1 to 32 bits", e.Name, e.Width)
			continue
		}
		names := map[string]bool{}
		for _, v := range e.Values {
			if names[v.Name] {
				bad(v.Pos, "prm enum %s: value %s given twice", e.Name, v.Name)
			}
			names[v.Name] = true
			if v.Value>>uint(e.Width) != 0 {
				bad(v.Pos, "prm enum %s: value %s = %#x does not fit its %d bits", e.Name, v.Name, v.Value, e.Width)
			}
			if v.Meaning = strings.TrimSpace(v.Meaning); v.Meaning == "" || strings.Contains(v.Meaning, "\n") {
				bad(v.Pos, "prm enum %s: value %s: the meaning must be one non-empty line", e.Name, v.Name)
			}
		}
	}
	for _, l := range s.Layouts {
		if p, dup := seen["layout "+l.Name]; dup {
			bad(l.Pos, "prm layout %s described twice (first at %s)", l.Name, p)
		}
		seen["layout "+l.Name] = l.Pos
		if l.Bits <= 0 || l.Bits%32 != 0 || l.Bits > MaxLayoutBits {
			bad(l.Pos, "prm layout %s: bits %#x: a layout is a whole number of 32-bit dwords, at most %#x bits", l.Name, l.Bits, MaxLayoutBits)
			continue
		}
		errs = append(errs, checkLayoutFields(l)...)
	}
	return errs
}

// checkLayoutFields checks each field's shape and place: inside the
// layout and of a width the PRM's accessors read
// (DEVX_GET reads at most 32 bits inside one dword, DEVX_GET64 two whole
// dwords).
func checkLayoutFields(l *Layout) diag.List {
	var errs diag.List
	names := map[string]bool{}
	for _, f := range l.Fields {
		bad := func(format string, args ...any) {
			errs.Add(f.Pos, "prm layout %s: field %s: "+format, append([]any{l.Name, f.Name}, args...)...)
		}
		if names[f.Name] {
			bad("described twice")
		}
		names[f.Name] = true
		kinds := 0
		for _, set := range []bool{f.Layout != "", len(f.Union) > 0, f.Enum != ""} {
			if set {
				kinds++
			}
		}
		if kinds > 1 {
			bad("give at most one of layout, union and enum")
		}
		if f.Bit < 0 || f.Bit >= l.Bits {
			bad("bit %#x is outside the %#x-bit layout", f.Bit, l.Bits)
			continue
		}
		switch {
		case f.Layout != "":
			if f.Width != 0 {
				bad("a nested layout's width is its layout's; leave width out")
			}
			if f.Bit%32 != 0 {
				bad("a nested layout starts on a dword (bit %#x is not a multiple of 32)", f.Bit)
			}
			continue
		case f.Width <= 0 || f.Width > l.Bits-f.Bit:
			bad("width %#x does not fit the %#x-bit layout from bit %#x", f.Width, l.Bits, f.Bit)
			continue
		case len(f.Union) > 0, f.Width > 64:
			if f.Bit%32 != 0 || f.Width%32 != 0 {
				bad("a region wider than 64 bits (or a union) is whole dwords: bit %#x width %#x", f.Bit, f.Width)
			}
		case f.Width > 32:
			if f.Width != 64 || f.Bit%32 != 0 {
				bad("a field wider than 32 bits is 64 bits on two whole dwords (bit %#x width %#x)", f.Bit, f.Width)
			}
		case f.Bit/32 != (f.Bit+f.Width-1)/32:
			bad("bits %#x..%#x cross a dword boundary; a field of at most 32 bits lies in one dword", f.Bit, f.Bit+f.Width-1)
		}
	}
	return errs
}
