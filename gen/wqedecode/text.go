package wqedecode

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// Text prints the fields of segment sg, laid over the start of b (at least
// sg.Size bytes), as the generated String method does: name{field: value,
// ...}, integers in hex with their parts in parentheses, enum values by
// name, byte arrays in hex, nested segments in braces.
func Text(sg *model.Segment, b []byte) string {
	var w strings.Builder
	writeSegment(&w, sg, b[:sg.Size])
	return w.String()
}

func writeSegment(w *strings.Builder, sg *model.Segment, b []byte) {
	w.WriteString(sg.CName + "{")
	for i, f := range sg.Fields {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(f.CName + ": ")
		writeField(w, f, b[f.Offset:f.Offset+f.Size()])
	}
	w.WriteString("}")
}

// writeField prints the value of field f, whose bytes are fb.
func writeField(w *strings.Builder, f *model.Field, fb []byte) {
	switch f.Kind {
	case model.IntField:
		v := readInt(fb, f.Int.Bits, f.Endian)
		writeValue(w, v, f.Enum)
		for j, p := range f.Parts {
			w.WriteString(map[bool]string{true: " (", false: ", "}[j == 0] + p.Name + ": ")
			writeValue(w, part(v, p), p.Enum)
		}
		if len(f.Parts) > 0 {
			w.WriteString(")")
		}
	case model.IntArray:
		n := f.Int.Bits / 8
		w.WriteString("[")
		for i := 0; i < f.Len; i++ {
			if i > 0 {
				w.WriteString(" ")
			}
			w.WriteString("0x" + strconv.FormatUint(readInt(fb[n*i:n*i+n], f.Int.Bits, f.Endian), 16))
		}
		w.WriteString("]")
	case model.BytesField:
		w.WriteString(hexOf(fb))
	case model.NestedField:
		writeSegment(w, f.Nested, fb)
	}
}

// intAt reads the integer field or part of sg named name (its C name) from
// b; with b nil it only says whether there is one.
func intAt(sg *model.Segment, b []byte, name string) (uint64, bool) {
	for _, f := range sg.Fields {
		if f.Kind != model.IntField {
			continue
		}
		var v uint64
		if b != nil {
			v = readInt(b[f.Offset:f.Offset+f.Size()], f.Int.Bits, f.Endian)
		}
		if f.CName == name {
			return v, true
		}
		for _, p := range f.Parts {
			if p.Name == name {
				return part(v, p), true
			}
		}
	}
	return 0, false
}

// part extracts a bit range of a field's value.
func part(v uint64, p *model.Part) uint64 {
	return v >> uint(p.Shift) & (1<<uint(p.Width) - 1)
}

func readInt(b []byte, bits int, e model.Endian) uint64 {
	if bits == 8 {
		return uint64(b[0])
	}
	order := map[model.Endian]binary.ByteOrder{model.Big: binary.BigEndian, model.Little: binary.LittleEndian, model.Native: binary.NativeEndian}[e]
	switch bits {
	case 16:
		return uint64(order.Uint16(b))
	case 32:
		return uint64(order.Uint32(b))
	}
	return order.Uint64(b)
}

// writeValue prints v in hex, or by the names of its enum.
func writeValue(w *strings.Builder, v uint64, e *model.Enum) {
	if e == nil {
		w.WriteString("0x" + strconv.FormatUint(v, 16))
		return
	}
	v = convert(v, e.Underlying)
	if e.Flags {
		w.WriteString(flags(v, e))
		return
	}
	for _, m := range e.Members {
		if m.Value.Bits == v {
			w.WriteString(m.Name) // the first of aliases
			return
		}
	}
	if e.Underlying.Signed {
		w.WriteString(e.GoName + "(" + strconv.FormatInt(int64(v), 10) + ")")
		return
	}
	w.WriteString(e.GoName + "(" + strconv.FormatUint(v, 10) + ")")
}

// convert gives v as the enum's Go type holds it, widened to 64 bits as a
// conversion to uint64 does: truncated to its size, sign-extended if
// signed.
func convert(v uint64, t model.IntType) uint64 {
	if t.Bits >= 64 {
		return v
	}
	v &= 1<<uint(t.Bits) - 1
	if t.Signed && v>>uint(t.Bits-1) != 0 {
		v |= ^uint64(0) << uint(t.Bits)
	}
	return v
}

// flags prints a flag set: an exact member first (masks and aliases), else
// every member whose bits are all set, then the rest in hex; "|" between.
func flags(v uint64, e *model.Enum) string {
	for _, m := range e.Members {
		if m.Value.Bits == v {
			return m.Name
		}
	}
	if v == 0 {
		return "0"
	}
	var names []string
	rest := v
	for _, m := range e.Members {
		if b := m.Value.Bits; b != 0 && rest&b == b {
			names = append(names, m.Name)
			rest &^= b
		}
	}
	if rest != 0 {
		names = append(names, "0x"+strconv.FormatUint(rest, 16))
	}
	return strings.Join(names, "|")
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
