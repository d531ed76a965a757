package cheader

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

// The model cache (cache.go) stores a Model as flat tables: every record,
// type, enum and function type once, referred to by its index plus one (0
// is nil), so that the pointer graph (shared types, a record's fields
// pointing back at it, nested records at their parent) comes back with the
// same shape. TestCodecCoversEveryField fails when a model type gains a
// field this file does not carry.

type flatModel struct {
	Files       []string
	Types       []fType
	Records     []fRecord
	Enums       []fEnum
	FuncTypes   []fFuncType
	RecordList  []int32
	External    []int32
	EnumList    []int32
	ExternEnums []int32
	Macros      []fMacro
	Skipped     []Skipped
	Funcs       []fFunc
	Typedefs    []fTypedef
}

type fType struct {
	Kind            Kind
	Name            string
	Typedefs        []string
	Endian          Endian
	Size, Align     int64
	Const, Volatile bool
	Elem            int32
	Len             int64
	Record, Enum    int32
	Func            int32
}

type fRecord struct {
	Pos                  Pos
	Kind                 Kind
	Tag                  string
	Parent               int32
	Path, Typedef        string
	Size, Align          int64
	Packed               bool
	Aligned, Pack        int64
	PackPos              Pos
	Fields               []fField
	Incomplete, External bool
	CCDiffers            bool
}

type fField struct {
	Pos               Pos
	Name              string
	Type, Record      int32
	BitOffset         int64
	Bitfield          bool
	BitWidth, Aligned int64
}

type fEnum struct {
	Pos          Pos
	Tag, Typedef string
	Underlying   int32
	Enumerators  []fEnumerator
	External     bool
}

type fEnumerator struct {
	Pos        Pos
	Name       string
	Value      Value
	Type, Enum int32
}

type fFuncType struct {
	Result   int32
	Params   []fParam
	Variadic bool
}

type fParam struct {
	Name string
	Type int32
}

type fMacro struct {
	Pos         Pos
	Name        string
	Value       Value
	Type        int32
	Replacement string
}

type fFunc struct {
	Pos                  Pos
	Name                 string
	Type                 int32
	Static, Inline, Body bool
}

type fTypedef struct {
	Pos  Pos
	Name string
	Type int32
}

// encoder numbers every object of the graph the first time it meets it.
type encoder struct {
	f     flatModel
	types map[*Type]int32
	recs  map[*Record]int32
	enums map[*Enum]int32
	fts   map[*FuncType]int32
}

// encodeModel flattens m and encodes it with gob. IncludeRoot, Header and
// the version are not stored: the caller knows them.
func encodeModel(m *Model) ([]byte, error) {
	e := &encoder{types: map[*Type]int32{}, recs: map[*Record]int32{}, enums: map[*Enum]int32{}, fts: map[*FuncType]int32{}}
	f := &e.f
	f.Files = m.Files
	f.RecordList = e.recList(m.Records)
	f.External = e.recList(m.External)
	f.EnumList = e.enumList(m.Enums)
	f.ExternEnums = e.enumList(m.ExternEnums)
	for _, x := range m.Macros {
		f.Macros = append(f.Macros, fMacro{Pos: x.Pos, Name: x.Name, Value: x.Value, Type: e.typ(x.Type), Replacement: x.Replacement})
	}
	for _, x := range m.Skipped {
		f.Skipped = append(f.Skipped, *x)
	}
	for _, x := range m.Funcs {
		f.Funcs = append(f.Funcs, fFunc{Pos: x.Pos, Name: x.Name, Type: e.funcType(x.Type), Static: x.Static, Inline: x.Inline, Body: x.Body})
	}
	for _, x := range m.Typedefs {
		f.Typedefs = append(f.Typedefs, fTypedef{Pos: x.Pos, Name: x.Name, Type: e.typ(x.Type)})
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (e *encoder) recList(rs []*Record) []int32 {
	ids := make([]int32, len(rs))
	for i, r := range rs {
		ids[i] = e.rec(r)
	}
	return ids
}

func (e *encoder) enumList(es []*Enum) []int32 {
	ids := make([]int32, len(es))
	for i, x := range es {
		ids[i] = e.enum(x)
	}
	return ids
}

func (e *encoder) typ(t *Type) int32 {
	if t == nil {
		return 0
	}
	if id, ok := e.types[t]; ok {
		return id
	}
	e.f.Types = append(e.f.Types, fType{})
	id := int32(len(e.f.Types))
	e.types[t] = id
	ft := fType{Kind: t.Kind, Name: t.Name, Typedefs: t.Typedefs, Endian: t.Endian, Size: t.Size, Align: t.Align,
		Const: t.Const, Volatile: t.Volatile, Len: t.Len}
	ft.Elem = e.typ(t.Elem)
	ft.Record = e.rec(t.Record)
	ft.Enum = e.enum(t.Enum)
	ft.Func = e.funcType(t.Func)
	e.f.Types[id-1] = ft
	return id
}

func (e *encoder) rec(r *Record) int32 {
	if r == nil {
		return 0
	}
	if id, ok := e.recs[r]; ok {
		return id
	}
	e.f.Records = append(e.f.Records, fRecord{})
	id := int32(len(e.f.Records))
	e.recs[r] = id
	fr := fRecord{Pos: r.Pos, Kind: r.Kind, Tag: r.Tag, Path: r.Path, Typedef: r.Typedef, Size: r.Size, Align: r.Align,
		Packed: r.Packed, Aligned: r.Aligned, Pack: r.Pack, PackPos: r.PackPos, Incomplete: r.Incomplete, External: r.External, CCDiffers: r.ccDiffers}
	fr.Parent = e.rec(r.Parent)
	for _, x := range r.Fields {
		fr.Fields = append(fr.Fields, fField{Pos: x.Pos, Name: x.Name, Type: e.typ(x.Type), Record: e.rec(x.Record),
			BitOffset: x.BitOffset, Bitfield: x.Bitfield, BitWidth: x.BitWidth, Aligned: x.Aligned})
	}
	e.f.Records[id-1] = fr
	return id
}

func (e *encoder) enum(x *Enum) int32 {
	if x == nil {
		return 0
	}
	if id, ok := e.enums[x]; ok {
		return id
	}
	e.f.Enums = append(e.f.Enums, fEnum{})
	id := int32(len(e.f.Enums))
	e.enums[x] = id
	fe := fEnum{Pos: x.Pos, Tag: x.Tag, Typedef: x.Typedef, External: x.External}
	fe.Underlying = e.typ(x.Underlying)
	for _, v := range x.Enumerators {
		fe.Enumerators = append(fe.Enumerators, fEnumerator{Pos: v.Pos, Name: v.Name, Value: v.Value, Type: e.typ(v.Type), Enum: e.enum(v.Enum)})
	}
	e.f.Enums[id-1] = fe
	return id
}

func (e *encoder) funcType(x *FuncType) int32 {
	if x == nil {
		return 0
	}
	if id, ok := e.fts[x]; ok {
		return id
	}
	e.f.FuncTypes = append(e.f.FuncTypes, fFuncType{})
	id := int32(len(e.f.FuncTypes))
	e.fts[x] = id
	ff := fFuncType{Variadic: x.Variadic}
	ff.Result = e.typ(x.Result)
	for _, p := range x.Params {
		ff.Params = append(ff.Params, fParam{Name: p.Name, Type: e.typ(p.Type)})
	}
	e.f.FuncTypes[id-1] = ff
	return id
}

// decoder rebuilds the graph: every object is allocated first, then the
// references are resolved, each checked to be in range.
type decoder struct {
	f     *flatModel
	types []Type
	recs  []Record
	enums []Enum
	fts   []FuncType
	err   error
}

// decodeModel decodes what encodeModel wrote. A reference out of range is
// an error, never a panic.
func decodeModel(b []byte) (*Model, error) {
	var f flatModel
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		return nil, err
	}
	d := &decoder{f: &f, types: make([]Type, len(f.Types)), recs: make([]Record, len(f.Records)),
		enums: make([]Enum, len(f.Enums)), fts: make([]FuncType, len(f.FuncTypes))}
	d.fill()
	m := &Model{Files: f.Files}
	m.Records = d.recList(f.RecordList)
	m.External = d.recList(f.External)
	m.Enums = d.enumList(f.EnumList)
	m.ExternEnums = d.enumList(f.ExternEnums)
	for _, x := range f.Macros {
		m.Macros = append(m.Macros, &Macro{Pos: x.Pos, Name: x.Name, Value: x.Value, Type: d.typ(x.Type), Replacement: x.Replacement})
	}
	for i := range f.Skipped {
		s := f.Skipped[i]
		m.Skipped = append(m.Skipped, &s)
	}
	for _, x := range f.Funcs {
		m.Funcs = append(m.Funcs, &Func{Pos: x.Pos, Name: x.Name, Type: d.funcType(x.Type), Static: x.Static, Inline: x.Inline, Body: x.Body})
	}
	for _, x := range f.Typedefs {
		m.Typedefs = append(m.Typedefs, &Typedef{Pos: x.Pos, Name: x.Name, Type: d.typ(x.Type)})
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// fill resolves the references inside the tables.
func (d *decoder) fill() {
	for i, x := range d.f.Types {
		d.types[i] = Type{Kind: x.Kind, Name: x.Name, Typedefs: x.Typedefs, Endian: x.Endian, Size: x.Size, Align: x.Align,
			Const: x.Const, Volatile: x.Volatile, Elem: d.typ(x.Elem), Len: x.Len, Record: d.rec(x.Record),
			Enum: d.enum(x.Enum), Func: d.funcType(x.Func)}
	}
	for i, x := range d.f.Records {
		r := &d.recs[i]
		*r = Record{Pos: x.Pos, Kind: x.Kind, Tag: x.Tag, Parent: d.rec(x.Parent), Path: x.Path, Typedef: x.Typedef,
			Size: x.Size, Align: x.Align, Packed: x.Packed, Aligned: x.Aligned, Pack: x.Pack, PackPos: x.PackPos,
			Incomplete: x.Incomplete, External: x.External, ccDiffers: x.CCDiffers}
		if len(x.Fields) > 0 {
			fs := make([]Field, len(x.Fields))
			r.Fields = make([]*Field, len(x.Fields))
			for j, y := range x.Fields {
				fs[j] = Field{Pos: y.Pos, Name: y.Name, Type: d.typ(y.Type), Record: d.rec(y.Record),
					BitOffset: y.BitOffset, Bitfield: y.Bitfield, BitWidth: y.BitWidth, Aligned: y.Aligned}
				r.Fields[j] = &fs[j]
			}
		}
	}
	for i, x := range d.f.Enums {
		en := &d.enums[i]
		*en = Enum{Pos: x.Pos, Tag: x.Tag, Typedef: x.Typedef, Underlying: d.typ(x.Underlying), External: x.External}
		if len(x.Enumerators) > 0 {
			vs := make([]Enumerator, len(x.Enumerators))
			en.Enumerators = make([]*Enumerator, len(x.Enumerators))
			for j, y := range x.Enumerators {
				vs[j] = Enumerator{Pos: y.Pos, Name: y.Name, Value: y.Value, Type: d.typ(y.Type), Enum: d.enum(y.Enum)}
				en.Enumerators[j] = &vs[j]
			}
		}
	}
	for i, x := range d.f.FuncTypes {
		ft := &d.fts[i]
		*ft = FuncType{Result: d.typ(x.Result), Variadic: x.Variadic}
		for _, p := range x.Params {
			ft.Params = append(ft.Params, &Param{Name: p.Name, Type: d.typ(p.Type)})
		}
	}
}

// bad records the first reference out of range.
func (d *decoder) bad(what string, id int32) {
	if d.err == nil {
		d.err = fmt.Errorf("%s reference %d out of range", what, id)
	}
}

func (d *decoder) typ(id int32) *Type {
	if id == 0 {
		return nil
	}
	if id < 0 || int(id) > len(d.types) {
		d.bad("type", id)
		return nil
	}
	return &d.types[id-1]
}

func (d *decoder) rec(id int32) *Record {
	if id == 0 {
		return nil
	}
	if id < 0 || int(id) > len(d.recs) {
		d.bad("record", id)
		return nil
	}
	return &d.recs[id-1]
}

func (d *decoder) enum(id int32) *Enum {
	if id == 0 {
		return nil
	}
	if id < 0 || int(id) > len(d.enums) {
		d.bad("enum", id)
		return nil
	}
	return &d.enums[id-1]
}

func (d *decoder) funcType(id int32) *FuncType {
	if id == 0 {
		return nil
	}
	if id < 0 || int(id) > len(d.fts) {
		d.bad("function type", id)
		return nil
	}
	return &d.fts[id-1]
}

func (d *decoder) recList(ids []int32) []*Record {
	var out []*Record
	for _, id := range ids {
		if r := d.rec(id); r != nil {
			out = append(out, r)
		} else {
			d.bad("record", id)
		}
	}
	return out
}

func (d *decoder) enumList(ids []int32) []*Enum {
	var out []*Enum
	for _, id := range ids {
		if x := d.enum(id); x != nil {
			out = append(out, x)
		} else {
			d.bad("enum", id)
		}
	}
	return out
}
