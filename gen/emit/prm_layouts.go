package emit

import (
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// prmLayouts prints every layout: its size, its byte-array type, its View
// function and its fields' accessors.
func prmLayouts(m *model.PRM, b *strings.Builder) {
	for _, l := range m.Layouts {
		t := l.GoName
		fmt.Fprintf(b, "// %sSize is the size of PRM layout %s in bytes (%#x bits).\nconst %sSize = %d\n\n", t, l.Name, l.Bits, t, l.Bytes())
		prmComment(b, "", fmt.Sprintf("%s is PRM layout %s (mlx5_ifc_%s_bits).", t, l.Name, l.Name), l.Doc)
		fmt.Fprintf(b, "type %s [%sSize]byte\n\n", t, t)
		fmt.Fprintf(b, "// View%s returns the first %sSize bytes of b as a %s, or a *FieldError when b is shorter.\n", t, t, t)
		fmt.Fprintf(b, "func View%s(b []byte) (*%s, error) {\n\tif len(b) < %sSize {\n\t\treturn nil, shortBuffer(%q, %sSize, len(b))\n\t}\n\treturn (*%s)(b[:%sSize]), nil\n}\n\n",
			t, t, t, l.Name, t, t, t)
		for _, f := range l.Fields {
			prmField(b, l, f)
		}
	}
}

// prmField prints the accessors of one field.
func prmField(b *strings.Builder, l *model.Layout, f *model.LayoutField) {
	t := l.GoName
	where := fmt.Sprintf("bits %#x..%#x of %s", f.Bit, f.Bit+f.Width-1, l.Name)
	switch f.Kind {
	case model.LayoutInt:
		typ := f.Type.String()
		if f.Enum != nil {
			typ = f.Enum.GoName
		}
		prmComment(b, "", fmt.Sprintf("%s returns %s (%s, %d bits).", f.GoName, f.Name, where, f.Width), f.Doc)
		fmt.Fprintf(b, "func (l *%s) %s() %s {\n\treturn %s(getBits(l[:], %#x, %d))\n}\n\n", t, f.GoName, typ, typ, f.Bit, f.Width)
		refuse := "; a value wider than the field is refused with a *FieldError and nothing is written"
		if f.Width == 64 {
			refuse = "; it never fails (every value fits)"
		}
		fmt.Fprintf(b, "// Set%s sets %s (%s)%s.\n", f.GoName, f.Name, where, refuse)
		fmt.Fprintf(b, "func (l *%s) Set%s(v %s) error {\n\treturn setBits(l[:], %q, %q, %#x, %d, uint64(v))\n}\n\n", t, f.GoName, typ, l.Name, f.Name, f.Bit, f.Width)
	case model.LayoutBytes, model.LayoutUnion:
		lo, hi := f.Bit/8, (f.Bit+f.Width)/8
		prmComment(b, "", fmt.Sprintf("%s returns %s (%s, %d bytes) in place.", f.GoName, f.Name, where, hi-lo), f.Doc)
		fmt.Fprintf(b, "func (l *%s) %s() []byte {\n\treturn l[%d:%d:%d]\n}\n\n", t, f.GoName, lo, hi, hi)
		for _, n := range f.Nested {
			fmt.Fprintf(b, "// %s%s returns %s read as PRM layout %s, in place.\n", f.GoName, n.GoName, f.Name, n.Name)
			fmt.Fprintf(b, "func (l *%s) %s%s() *%s {\n\treturn (*%s)(l[%d:%d])\n}\n\n", t, f.GoName, n.GoName, n.GoName, n.GoName, lo, lo+n.Bytes())
		}
	case model.LayoutNested:
		n := f.Nested[0]
		lo := f.Bit / 8
		prmComment(b, "", fmt.Sprintf("%s returns %s (%s), PRM layout %s, in place.", f.GoName, f.Name, where, n.Name), f.Doc)
		fmt.Fprintf(b, "func (l *%s) %s() *%s {\n\treturn (*%s)(l[%d:%d])\n}\n\n", t, f.GoName, n.GoName, n.GoName, lo, lo+n.Bytes())
	}
}

// prmTable prints Layouts and Enums, the description of every layout,
// field and enum.
func prmTable(m *model.PRM, b *strings.Builder) {
	b.WriteString("// Layouts describes every layout of the package and its fields, in the\n// spec's order, with their bit offsets and widths.\nvar Layouts = []LayoutInfo{\n")
	kinds := map[model.LayoutKind]string{model.LayoutInt: "IntField", model.LayoutBytes: "BytesField",
		model.LayoutNested: "NestedField", model.LayoutUnion: "UnionField"}
	for _, l := range m.Layouts {
		fmt.Fprintf(b, "\t{Name: %q, Go: %q, Bits: %#x, New: func() any { return new(%s) }, Fields: []FieldInfo{\n", l.Name, l.GoName, l.Bits, l.GoName)
		for _, f := range l.Fields {
			var nested []string
			for _, n := range f.Nested {
				nested = append(nested, fmt.Sprintf("%q", n.Name))
			}
			fmt.Fprintf(b, "\t\t{Name: %q, Go: %q, Bit: %#x, Width: %#x, Kind: %s", f.Name, f.GoName, f.Bit, f.Width, kinds[f.Kind])
			if len(nested) > 0 {
				fmt.Fprintf(b, ", Layouts: []string{%s}", strings.Join(nested, ", "))
			}
			b.WriteString("},\n")
		}
		b.WriteString("\t}},\n")
	}
	b.WriteString("}\n\n// Enums describes every enum of the package and its values.\nvar Enums = []EnumInfo{\n")
	for _, e := range m.Enums {
		fmt.Fprintf(b, "\t{Name: %q, Go: %q, Width: %d, Values: []EnumValue{\n", e.Name, e.GoName, e.Width)
		for _, v := range e.Values {
			fmt.Fprintf(b, "\t\t{Name: %q, Value: %#x},\n", v.Name, v.Value)
		}
		b.WriteString("\t}},\n")
	}
	b.WriteString("}\n")
}
