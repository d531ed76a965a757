package cheader

import (
	"fmt"
	"strconv"
)

// Model is what the rdma-core headers declare, laid out as gcc lays it out on
// the target (x86-64 SysV). Slices are in source order; every item keeps its
// position so that errors and generated comments can point at the header.
type Model struct {
	IncludeRoot string // the directory that holds infiniband/, as given
	Header      string // the header parsed, relative to IncludeRoot

	// Version is the rdma-core release ("44.0") when it can be detected,
	// and VersionSource says from what ("pkg-config libibverbs.pc").
	Version       string
	VersionSource string

	Files []string // rdma-core headers that contributed, relative to IncludeRoot

	Records     []*Record  // tagged and anonymous structs and unions defined in rdma-core headers
	Enums       []*Enum    // enums defined in rdma-core headers
	Macros      []*Macro   // object-like macros with an integer value
	Skipped     []*Skipped // every other macro, with the reason
	Funcs       []*Func    // prototypes and static inline definitions
	Typedefs    []*Typedef // typedef names declared in rdma-core headers
	External    []*Record  // records from libc/kernel headers that rdma-core records embed
	ExternEnums []*Enum    // enums from libc/kernel headers that rdma-core types use

	records map[string]*Record // "struct x" / "union x" -> record
	consts  map[string]Constant
	funcs   map[string]*Func
	enums   map[string]*Enum
	tdefs   map[string]*Typedef
}

// Pos is a position in a header. File is relative to the include directory it
// was found in (infiniband/mlx5dv.h, linux/types.h), never absolute, so that
// generated output does not depend on where the headers were unpacked.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.File == "" {
		return "-"
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Kind classifies a C type.
type Kind uint8

const (
	Invalid Kind = iota
	Void
	Bool
	Char
	SChar
	UChar
	Short
	UShort
	Int
	UInt
	Long
	ULong
	LongLong
	ULongLong
	Int128
	UInt128
	Float
	Double
	LongDouble
	Float128
	Complex
	Pointer
	Array
	Struct
	Union
	Enumeration
	Function
	Vector
)

var kindNames = [...]string{
	Invalid: "invalid", Void: "void", Bool: "_Bool", Char: "char", SChar: "signed char",
	UChar: "unsigned char", Short: "short", UShort: "unsigned short", Int: "int",
	UInt: "unsigned int", Long: "long", ULong: "unsigned long", LongLong: "long long",
	ULongLong: "unsigned long long", Int128: "__int128", UInt128: "unsigned __int128",
	Float: "float", Double: "double", LongDouble: "long double", Float128: "_Float128",
	Complex: "_Complex", Pointer: "pointer", Array: "array", Struct: "struct", Union: "union",
	Enumeration: "enum", Function: "function", Vector: "vector",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// IsInteger reports whether k is an integer kind (enums excluded).
func (k Kind) IsInteger() bool { return k >= Bool && k <= UInt128 }

// IsSigned reports whether values of integer kind k are signed (char is
// signed on x86-64).
func (k Kind) IsSigned() bool {
	switch k {
	case Char, SChar, Short, Int, Long, LongLong, Int128:
		return true
	}
	return false
}

// Endian is the byte order a scalar is stored in. rdma-core spells it in the
// typedef name (__be32, __le16); everything else is host order.
type Endian uint8

const (
	Host Endian = iota
	BigEndian
	LittleEndian
)

func (e Endian) String() string {
	switch e {
	case BigEndian:
		return "big-endian"
	case LittleEndian:
		return "little-endian"
	}
	return "host"
}

// Type is a C type as used by a field, parameter, typedef or constant.
type Type struct {
	Kind Kind

	// Name is the typedef name the declaration used (__be32, uint8_t,
	// pthread_mutex_t), or "" when it named the type directly. Typedefs is
	// the whole chain, outermost first (__be32, __u32).
	Name     string
	Typedefs []string
	Endian   Endian

	Size  int64
	Align int64

	Const, Volatile bool

	Elem   *Type     // Pointer, Array, Vector
	Len    int64     // Array: element count; 0 for [0]; -1 for a flexible []
	Record *Record   // Struct, Union
	Enum   *Enum     // Enum
	Func   *FuncType // Func
}

// IsFuncPointer reports whether t is a pointer to a function.
func (t *Type) IsFuncPointer() bool {
	return t != nil && t.Kind == Pointer && t.Elem != nil && t.Elem.Kind == Function
}

// Spelling is a C spelling of t good enough for messages and comments:
// the typedef name when there is one, else the structural type.
func (t *Type) Spelling() string {
	if t == nil {
		return "<nil>"
	}
	if t.Name != "" {
		return qual(t) + t.Name
	}
	switch t.Kind {
	case Pointer:
		if t.Elem.Kind == Function {
			return t.Elem.Func.Result.Spelling() + " (*)(" + t.Elem.Func.paramList() + ")"
		}
		return t.Elem.Spelling() + " *" + trimq(qual(t))
	case Array:
		n := ""
		if t.Len >= 0 {
			n = strconv.FormatInt(t.Len, 10)
		}
		return t.Elem.Spelling() + "[" + n + "]"
	case Struct, Union:
		return qual(t) + t.Record.CName()
	case Enumeration:
		return qual(t) + t.Enum.CName()
	case Function:
		return t.Func.Result.Spelling() + " (" + t.Func.paramList() + ")"
	case Vector:
		return t.Elem.Spelling() + " __attribute__((vector_size(" + strconv.FormatInt(t.Size, 10) + ")))"
	}
	return qual(t) + t.Kind.String()
}

func (t *Type) String() string { return t.Spelling() }

func qual(t *Type) string {
	s := ""
	if t.Const {
		s += "const "
	}
	if t.Volatile {
		s += "volatile "
	}
	return s
}

func trimq(s string) string {
	if s == "" {
		return ""
	}
	return s[:len(s)-1]
}

// Record is a struct or a union.
type Record struct {
	Pos  Pos
	Kind Kind // Struct or Union
	Tag  string

	// Parent is the record an anonymous (untagged) record is defined in,
	// and Path the member path that reaches it from the outermost tagged
	// record ("key" for a named member, "" for an anonymous one). Typedef
	// is set for "typedef struct { ... } name".
	Parent  *Record
	Path    string
	Typedef string

	Size  int64
	Align int64

	Packed  bool  // __attribute__((packed)) on the record
	Aligned int64 // __attribute__((aligned(N))) on the record, 0 if none
	Pack    int64 // the #pragma pack(n) in force at the definition, 0 if none
	PackPos Pos   // the #pragma that set Pack, when Pack is not 0

	Fields []*Field

	Incomplete bool // declared but never defined
	External   bool // defined outside the RDMA headers (libc, other kernel headers)

	ccDiffers bool // cc/v4's own layout of the record is not gcc's
}

// CName is how C code names the record: "struct mlx5_wqe_ctrl_seg", the
// typedef name for typedef'd anonymous records, or a descriptive name for
// other anonymous ones.
func (r *Record) CName() string {
	if r.Tag != "" {
		return r.Kind.String() + " " + r.Tag
	}
	if r.Typedef != "" {
		return r.Typedef
	}
	return fmt.Sprintf("%s <anonymous at %s>", r.Kind, r.Pos)
}

// Root returns the outermost enclosing record.
func (r *Record) Root() *Record {
	for r.Parent != nil {
		r = r.Parent
	}
	return r
}

// Field is a direct member of a record.
type Field struct {
	Pos    Pos
	Name   string // "" for an anonymous struct/union member or an unnamed bitfield
	Type   *Type
	Record *Record // the record the field belongs to

	BitOffset int64 // bit offset in Record
	Bitfield  bool
	BitWidth  int64 // width of a bitfield; 0 otherwise (and for ':0')

	Aligned int64 // __attribute__((aligned(N))) on the member, 0 if none
}

// Anonymous reports whether f is an anonymous struct or union member whose
// fields are accessed as if they belonged to the enclosing record.
func (f *Field) Anonymous() bool {
	return f.Name == "" && !f.Bitfield && (f.Type.Kind == Struct || f.Type.Kind == Union)
}

// Offset is the field's byte offset in its record (for a bitfield, the byte
// holding its first bit).
func (f *Field) Offset() int64 { return f.BitOffset / 8 }

// Size is the field's size in bytes (for bitfields, of the declared type).
func (f *Field) Size() int64 { return f.Type.Size }

// Member is a field reached from a tagged record through anonymous members
// and members of untagged record type: Path is the C member designator
// (usable with offsetof), offsets are from the start of the outer record.
type Member struct {
	Path      string
	Offset    int64
	BitOffset int64
	Field     *Field
}

// Members lists every named field of r and of the untagged records nested in
// it, depth first in declaration order. Members of tagged record type are
// listed but not entered: their own record lists their fields.
func (r *Record) Members() []Member {
	var out []Member
	var walk func(r *Record, prefix string, bit int64)
	walk = func(r *Record, prefix string, bit int64) {
		for _, f := range r.Fields {
			b := bit + f.BitOffset
			path := prefix
			if f.Name != "" {
				if path != "" {
					path += "."
				}
				path += f.Name
				out = append(out, Member{Path: path, Offset: b / 8, BitOffset: b, Field: f})
			}
			if t := f.Type; (t.Kind == Struct || t.Kind == Union) && t.Record.Tag == "" && !f.Bitfield {
				if f.Name == "" || t.Name == "" {
					walk(t.Record, path, b)
				}
			}
		}
	}
	walk(r, "", 0)
	return out
}

// Value is an integer constant as its two's complement bits plus signedness,
// so that both -1 and UINT64_MAX are exact.
type Value struct {
	Bits   uint64
	Signed bool
}

// Int64 returns v as an int64 (wrapping for unsigned values above MaxInt64).
func (v Value) Int64() int64 { return int64(v.Bits) }

// Uint64 returns v's bits.
func (v Value) Uint64() uint64 { return v.Bits }

// Negative reports whether v is a negative signed value.
func (v Value) Negative() bool { return v.Signed && int64(v.Bits) < 0 }

func (v Value) String() string {
	if v.Signed {
		return strconv.FormatInt(int64(v.Bits), 10)
	}
	return strconv.FormatUint(v.Bits, 10)
}

// Constant is an enumerator or an integer macro.
type Constant interface {
	ConstName() string
	ConstValue() Value
	ConstType() *Type
	Position() Pos
}

// Enum is an enumeration type.
type Enum struct {
	Pos         Pos
	Tag         string // "" for an anonymous enum
	Typedef     string // for "typedef enum { ... } name"
	Underlying  *Type  // the integer type gcc gives it
	Enumerators []*Enumerator
	External    bool
}

// CName is how C code names the enum.
func (e *Enum) CName() string {
	if e.Tag != "" {
		return "enum " + e.Tag
	}
	if e.Typedef != "" {
		return e.Typedef
	}
	return fmt.Sprintf("enum <anonymous at %s>", e.Pos)
}

// Enumerator is one enumeration constant. Type is the type C gives the
// constant itself (int, or a wider type under GNU C when the value needs it).
type Enumerator struct {
	Pos   Pos
	Name  string
	Value Value
	Type  *Type
	Enum  *Enum
}

func (e *Enumerator) ConstName() string { return e.Name }
func (e *Enumerator) ConstValue() Value { return e.Value }
func (e *Enumerator) ConstType() *Type  { return e.Type }
func (e *Enumerator) Position() Pos     { return e.Pos }

// Macro is an object-like macro whose expansion is an integer constant
// expression.
type Macro struct {
	Pos         Pos
	Name        string
	Value       Value
	Type        *Type
	Replacement string // the replacement list as written
}

func (m *Macro) ConstName() string { return m.Name }
func (m *Macro) ConstValue() Value { return m.Value }
func (m *Macro) ConstType() *Type  { return m.Type }
func (m *Macro) Position() Pos     { return m.Pos }

// SkipReason says why a macro is not an integer constant.
type SkipReason uint8

const (
	SkipFunctionLike SkipReason = iota + 1 // #define f(x) ...
	SkipGuard                              // include guard: defined empty, named like the header
	SkipEmpty                              // defined empty (a feature flag or a keyword eraser)
	SkipString                             // a string literal
	SkipFloat                              // a floating-point constant
	SkipPointer                            // a pointer constant ((void *)-1)
	SkipAlias                              // another name: a type, function, keyword or attribute
	SkipNotConstant                        // an expression with no constant value
	SkipLayout                             // sizeof/offsetof of a record cc/v4 lays out unlike gcc
)

var skipNames = [...]string{
	SkipFunctionLike: "function-like", SkipGuard: "guard", SkipEmpty: "empty", SkipString: "string",
	SkipFloat: "float", SkipPointer: "pointer", SkipAlias: "alias", SkipNotConstant: "not-constant",
	SkipLayout: "layout-dependent",
}

func (r SkipReason) String() string {
	if int(r) < len(skipNames) && skipNames[r] != "" {
		return skipNames[r]
	}
	return "SkipReason(" + strconv.Itoa(int(r)) + ")"
}

// Skipped is a macro the model does not turn into a constant.
type Skipped struct {
	Pos         Pos
	Name        string
	Reason      SkipReason
	Detail      string // for SkipLayout: the record
	Replacement string
}

// FuncType is a function's signature.
type FuncType struct {
	Result   *Type
	Params   []*Param
	Variadic bool
}

func (f *FuncType) paramList() string {
	s := ""
	for i, p := range f.Params {
		if i > 0 {
			s += ", "
		}
		s += p.Type.Spelling()
		if p.Name != "" {
			s += " " + p.Name
		}
	}
	if f.Variadic {
		s += ", ..."
	}
	if s == "" {
		s = "void"
	}
	return s
}

// Param is a function parameter; Name is "" when the prototype omits it.
type Param struct {
	Name string
	Type *Type
}

// Func is a function prototype or a static inline definition.
type Func struct {
	Pos    Pos
	Name   string
	Type   *FuncType
	Static bool // static (with Inline: a header helper such as mlx5dv_set_ctrl_seg)
	Inline bool
	Body   bool // defined in the header, not only declared
}

// Typedef is a typedef name and the type it stands for.
type Typedef struct {
	Pos  Pos
	Name string
	Type *Type
}

// Record looks up "struct name" or "union name".
func (m *Model) Record(cname string) *Record { return m.records[cname] }

// Struct looks up a struct by tag.
func (m *Model) Struct(tag string) *Record { return m.records["struct "+tag] }

// Constant looks up an enumerator or integer macro by name.
func (m *Model) Constant(name string) Constant { return m.consts[name] }

// Func looks up a function by name.
func (m *Model) Func(name string) *Func { return m.funcs[name] }

// Enum looks up an enum by tag or typedef name.
func (m *Model) Enum(name string) *Enum { return m.enums[name] }

// Typedef looks up a typedef by name.
func (m *Model) Typedef(name string) *Typedef { return m.tdefs[name] }

// Constants returns every enumerator and integer macro, enumerators first,
// each group in source order.
func (m *Model) Constants() []Constant {
	var out []Constant
	for _, e := range m.Enums {
		for _, x := range e.Enumerators {
			out = append(out, x)
		}
	}
	for _, x := range m.Macros {
		out = append(out, x)
	}
	return out
}

func (m *Model) index() {
	m.records = map[string]*Record{}
	m.consts = map[string]Constant{}
	m.funcs = map[string]*Func{}
	m.enums = map[string]*Enum{}
	m.tdefs = map[string]*Typedef{}
	for _, r := range append(append([]*Record(nil), m.Records...), m.External...) {
		if r.Tag != "" {
			m.records[r.CName()] = r
		}
	}
	for _, e := range m.Enums {
		if e.Tag != "" {
			m.enums[e.Tag] = e
		}
		if e.Typedef != "" {
			m.enums[e.Typedef] = e
		}
	}
	for _, c := range m.Constants() {
		m.consts[c.ConstName()] = c
	}
	for _, f := range m.Funcs {
		m.funcs[f.Name] = f
	}
	for _, t := range m.Typedefs {
		m.tdefs[t.Name] = t
	}
}
