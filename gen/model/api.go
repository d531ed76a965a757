package model

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// ChainChecks are the checks of the work-request state machine
// (runtime/wrcheck) that rules name with check: {chain: name}, in the order
// of the generated ChainCheck constants.
var ChainChecks = []string{
	"in_batch", "qp_type", "send_op", "wr_flags", "setter_after_builder", "setter_once",
	"layout_once", "num_setters", "requires_data", "requires_dc_addr", "sge_count",
	"inline_size", "layout_entries", "mkey_entries", "mkey_signature", "mkey_crypto",
	"mkey_tag", "mkey_state", "mkey_crypto_state", "memcpy_zero", "memcpy_max",
	"dc_streams", "dc_stream_id", "copy_mask_structure", "crypto_order", "length_4g",
	"single_block", "bsf_room", "sq_room", "raw_wqe_size",
	"rq_room", "rq_sge_count",
}

// ReceiveChecks are the checks of ChainChecks that the receive-queue
// writer (runtime/rq) makes on ibv_post_recv and ibv_post_srq_recv: the
// room in the queue and the SGE count.
var ReceiveChecks = []string{"rq_room", "rq_sge_count"}

// Func is a function of the API.
type Func struct {
	// ID is the function's Func value: its index among all the spec's
	// functions, gated out or not, so that a value means the same function
	// in the packages of every rdma-core release (a downstream package's
	// aliases and errors.As on a RuleError depend on it).
	ID      int
	Name    string
	GoName  string // FnMlx5dvWrMkeyConfigure
	Spec    *spec.Function
	C       *cheader.Func // nil when the header has no prototype (never for a gated-in function)
	Kind    string
	Params  []*Param
	QPTypes []string
	SendOp  *Const
	MlxOp   *Const
	WRFlags []*Const
	Takes   []string
	Needs   []string
	Group   string
	Of      []*Func
	Rules   []*Rule // argument rules on its parameters, in spec order
}

// Param is a function parameter.
type Param struct {
	Name   string
	GoName string
	C      *cheader.Type
	Enum   *Enum
}

// Mirror is a Go struct with the exact layout of a C struct of the API.
type Mirror struct {
	CName  string
	GoName string
	Spec   *spec.Struct
	C      *cheader.Record
	Fields []*MirrorField
	Rules  []*Rule // argument rules on its fields, in spec order
}

// MirrorKind is how a C member is mirrored in Go.
type MirrorKind uint8

const (
	MInt      MirrorKind = iota // integer or enum
	MBool                       // _Bool
	MArray                      // array of integers
	MPointer                    // pointer to a mirrored struct
	MRawPtr                     // any other pointer: unsafe.Pointer
	MNested                     // a mirrored struct by value
	MBytes                      // anything else by value, as bytes
	MPtrUnion                   // a union of pointers: unsafe.Pointer with typed accessors
	MUnion                      // another union: bytes with accessors
)

// MirrorField is one member of a mirror (a direct member of the C record).
type MirrorField struct {
	CName   string // "" for an anonymous union
	GoName  string
	Offset  int64
	Size    int64
	Kind    MirrorKind
	Int     IntType // MInt, MArray element
	Len     int64   // MArray, MBytes
	Enum    *Enum   // MInt: the named type, when the spec gives the enum
	Names   *Enum   // MInt: the enum or flag set whose names its values take (even when Enum is nil)
	Target  *Mirror // MPointer, MNested
	Members []*UnionMember
	When    *Cond // validate (descend) only when this holds
	Doc     string
}

// UnionMember is one member of a mirrored union.
type UnionMember struct {
	CName  string // as spec and C name it: dci_streams, or sig.crc
	GoName string
	Offset int64 // within the union
	Kind   MirrorKind
	Int    IntType
	Target *Mirror
	When   *Cond
}

// Cond is a field condition of a check or of a union member.
type Cond struct {
	Field   *MirrorField
	OneOf   []uint64
	Bits    uint64 // the field has all these bits
	Clear   uint64 // the field has none of these bits
	NotNull bool
}

// Rule is a rule of the spec, resolved.
type Rule struct {
	ID     string
	GoName string // errSigCrcSeed
	Spec   *spec.Rule
	Errno  string
	Funcs  []*Func
	Arg    *ArgCheck // argument rules
	Chain  int       // index in ChainChecks + 1; 0 for none
}

// ArgCheck is a predicate on a mirror field or a parameter.
type ArgCheck struct {
	Mirror     *Mirror
	Field      *MirrorField
	Member     *UnionMember // a field inside an anonymous union
	Func       *Func
	Param      *Param
	OneOf      []uint64
	Enum       *Enum
	Mask       uint64 // flags, bits: the allowed bits
	MaskIsSet  bool
	FlagsEnum  *Enum  // flags: the flag set
	Has        uint64 // has: the bits required
	NotNeg     bool
	Via        *MirrorField // a nested struct field (dc_init_attr) whose member Field is
	Zero       bool
	NotNull    bool
	Max        *uint64
	MultipleOf uint64
	NotAllNull []*MirrorField
	When       *Cond
}

// API is the part of the package generated from the functions, structs and
// rules of the spec.
type API struct {
	Funcs     []*Func
	NumFuncs  int // the number of Func values: every function of the spec, available or not
	Mirrors   []*Mirror
	Rules     []*Rule
	Uncovered []string // mlx5dv functions and structs of the header no descriptor covers

	// ChainRule[c][f] is the rule a failure of chain check c in function
	// f reports: the rule of that check that names f, or the first rule of
	// the check.
	ChainRule [][]*Rule
}

var spaceRE = regexp.MustCompile(`\s+`)

// normType makes C type spellings comparable: single spaces, none around
// '*', '[' or ']'.
func normType(s string) string {
	s = strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
	for _, t := range []string{"*", "[", "]"} {
		s = strings.ReplaceAll(s, " "+t, t)
		s = strings.ReplaceAll(s, t+" ", t)
	}
	return s
}

func (b *builder) api() {
	a := &API{}
	b.p.API = a
	v := b.c.Version

	funcs := map[string]*Func{}
	a.NumFuncs = len(b.s.Functions)
	for id, sf := range b.s.Functions {
		cf := b.c.Func(sf.Name)
		if !b.gated(sf.Pos, "function "+sf.Name, sf.Gate, cf != nil) {
			continue
		}
		if cf == nil {
			b.errorf(sf.Pos, "function %s: not in %s (rdma-core %s)", sf.Name, b.c.Header, orUnknown(v))
			continue
		}
		f := &Func{ID: id, Name: sf.Name, GoName: "Fn" + Camel(sf.Name), Spec: sf, C: cf, Kind: sf.Kind,
			QPTypes: sf.QPTypes, Takes: sf.Takes, Needs: sf.Requires, Group: sf.Group}
		b.checkPrototype(sf, cf, f)
		if sf.SendOp != "" {
			f.SendOp = b.constant(sf.Pos, sf.SendOp, "send_op of "+sf.Name)
		}
		if sf.MlxSendOp != "" {
			f.MlxOp = b.constant(sf.Pos, sf.MlxSendOp, "mlx5_send_op of "+sf.Name)
		}
		for _, w := range sf.WRFlags {
			if k := b.constant(sf.Pos, w, "wr_flags of "+sf.Name); k != nil {
				f.WRFlags = append(f.WRFlags, k)
			}
		}
		if b.declare(sf.Pos, f.GoName, "function "+sf.Name) {
			funcs[sf.Name] = f
			a.Funcs = append(a.Funcs, f)
		}
	}
	for _, f := range a.Funcs {
		for _, o := range f.Spec.Of {
			if g := funcs[o]; g != nil {
				f.Of = append(f.Of, g)
			}
		}
	}

	mirrors := map[string]*Mirror{}
	var gated []*spec.Struct
	for _, ss := range b.s.Structs {
		r := b.c.Struct(ss.Name)
		if !b.gated(ss.Pos, "struct "+ss.Name, ss.Gate, r != nil && !r.Incomplete) {
			continue
		}
		if r == nil || r.Incomplete {
			b.errorf(ss.Pos, "struct %s: not defined in %s (rdma-core %s)", ss.Name, b.c.Header, orUnknown(v))
			continue
		}
		m := &Mirror{CName: ss.Name, GoName: Camel(ss.Name), Spec: ss, C: r}
		if b.declare(ss.Pos, m.GoName, "struct "+ss.Name) {
			mirrors[ss.Name] = m
			gated = append(gated, ss)
			a.Mirrors = append(a.Mirrors, m)
		}
	}
	for _, m := range a.Mirrors {
		b.mirrorFields(m, mirrors)
	}

	ids := map[string]bool{}
	for _, sr := range b.s.Rules {
		if !b.ruleAvailable(sr) {
			continue
		}
		r := &Rule{ID: sr.ID, GoName: "err" + Camel(strings.ReplaceAll(sr.ID, ".", "_")), Spec: sr, Errno: sr.Errno}
		ids[sr.ID] = true
		for _, fn := range sr.Funcs {
			// A function the header lacks is reported, or left out by
			// its gate, where it is described.
			if f := funcs[fn]; f != nil {
				r.Funcs = append(r.Funcs, f)
			}
		}
		if c := sr.Check; c != nil {
			if c.Chain != "" {
				i := indexOf(ChainChecks, c.Chain)
				if i < 0 {
					b.errorf(c.Pos, "rule %s: unknown chain check %q (known: %s)", sr.ID, c.Chain, strings.Join(ChainChecks, ", "))
					continue
				}
				r.Chain = i + 1
			} else {
				r.Arg = b.argCheck(sr, c, mirrors, funcs)
				if r.Arg == nil {
					continue
				}
				if r.Arg.Mirror != nil {
					r.Arg.Mirror.Rules = append(r.Arg.Mirror.Rules, r)
				} else {
					r.Arg.Func.Rules = append(r.Arg.Func.Rules, r)
				}
			}
		}
		if len(r.Funcs) == 0 && (r.Arg != nil || r.Chain != 0) {
			b.errorf(sr.Pos, "rule %s applies to no available function", sr.ID)
		}
		a.Rules = append(a.Rules, r)
	}
	// Every chain check the state machine performs needs a rule, so that
	// its error names a man page; it runs on work requests only, so a
	// spec without builders and setters needs none.
	// The receive checks (runtime/rq) run on the receive verbs, so only a
	// spec that describes one needs their rules.
	wr, recv := false, false
	for _, f := range a.Funcs {
		wr = wr || f.Kind == spec.KindBuilder || f.Kind == spec.KindSetter
		recv = recv || f.Name == "ibv_post_recv" || f.Name == "ibv_post_srq_recv"
	}
	for i, name := range ChainChecks {
		found := false
		for _, r := range a.Rules {
			found = found || r.Chain == i+1
		}
		need := wr
		if slices.Contains(ReceiveChecks, name) {
			need = recv
		}
		if !found && need && len(b.s.Rules) > 0 {
			b.errorf(spec.Pos{File: "spec", Line: 1, Col: 1}, "no rule enforces chain check %s", name)
		}
	}

	a.ChainRule = make([][]*Rule, len(ChainChecks))
	for i := range ChainChecks {
		a.ChainRule[i] = make([]*Rule, a.NumFuncs)
		var first *Rule
		for _, r := range a.Rules {
			if r.Chain != i+1 {
				continue
			}
			if first == nil {
				first = r
			}
			for _, f := range r.Funcs {
				if prev := a.ChainRule[i][f.ID]; prev != nil {
					b.errorf(r.Spec.Pos, "rule %s: function %s already reports chain check %s as rule %s (%s); name each function in one rule per check", r.ID, f.Name, ChainChecks[i], prev.ID, prev.Spec.Pos)
					continue
				}
				a.ChainRule[i][f.ID] = r
			}
		}
		for j := range a.ChainRule[i] {
			if a.ChainRule[i][j] == nil {
				a.ChainRule[i][j] = first
			}
		}
	}

	// What the header offers that no descriptor covers.
	for _, f := range b.c.Funcs {
		if f.Pos.File == segmentFile && strings.HasPrefix(f.Name, "mlx5dv_") && funcs[f.Name] == nil && specFunc(b.s, f.Name) == nil {
			a.Uncovered = append(a.Uncovered, f.Name+"()")
		}
	}
	for _, r := range b.c.Records {
		if r.Pos.File == segmentFile && strings.HasPrefix(r.Tag, "mlx5dv_") && mirrors[r.Tag] == nil && specStruct(b.s, r.Tag) == nil {
			a.Uncovered = append(a.Uncovered, "struct "+r.Tag)
		}
	}
	sort.Strings(a.Uncovered)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func specFunc(s *spec.Spec, name string) *spec.Function {
	for _, f := range s.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func specStruct(s *spec.Spec, name string) *spec.Struct {
	for _, f := range s.Structs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// constant resolves a constant named in the spec.
func (b *builder) constant(pos spec.Pos, name, what string) *Const {
	k := b.consts[name]
	if k == nil {
		if c := b.c.Constant(name); c != nil {
			// A constant of the header the package does not generate
			// (from an enum of verbs.h that is not typed, say).
			return &Const{Name: name, Value: c.ConstValue(), Src: Source{Header: c.Position()}}
		}
		b.errorf(pos, "%s: no constant %s in %s (rdma-core %s)", what, name, b.c.Header, orUnknown(b.c.Version))
	}
	return k
}

// value resolves a number or a constant name.
func (b *builder) value(pos spec.Pos, s, what string) (uint64, bool) {
	if n, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
		return n, true
	}
	if n, err := strconv.ParseInt(s, 0, 64); err == nil {
		return uint64(n), true
	}
	switch s {
	case "UINT64_MAX":
		return ^uint64(0), true
	case "UINT32_MAX":
		return 0xffffffff, true
	case "UINT16_MAX":
		return 0xffff, true
	}
	if k := b.constant(pos, s, what); k != nil {
		return k.Value.Bits, true
	}
	return 0, false
}

// checkPrototype compares the spec's prototype with the header's.
func (b *builder) checkPrototype(sf *spec.Function, cf *cheader.Func, f *Func) {
	res := "void"
	if r := cf.Type.Result; r != nil && r.Kind != cheader.Void {
		res = r.Spelling()
	} else if r != nil && r.Kind == cheader.Void && r.Name != "" {
		res = r.Name
	}
	want := sf.Result
	if want == "" {
		want = "void"
	}
	if normType(want) != normType(res) {
		b.errorf(sf.Pos, "function %s: result %q, but %s has %q (rdma-core %s)", sf.Name, want, b.c.Header, res, orUnknown(b.c.Version))
	}
	if len(sf.Params) != len(cf.Type.Params) {
		b.errorf(sf.Pos, "function %s: %d parameters, but the header's prototype has %d", sf.Name, len(sf.Params), len(cf.Type.Params))
		return
	}
	for i, sp := range sf.Params {
		cp := cf.Type.Params[i]
		if cp.Name != "" && cp.Name != sp.Name {
			b.errorf(sp.Pos, "function %s: parameter %d is %s in the header, not %s", sf.Name, i+1, cp.Name, sp.Name)
		}
		if normType(sp.Type) != normType(cp.Type.Spelling()) {
			b.errorf(sp.Pos, "function %s: parameter %s has type %q in the header, not %q", sf.Name, sp.Name, cp.Type.Spelling(), sp.Type)
		}
		p := &Param{Name: sp.Name, GoName: goIdent(sp.Name), C: cp.Type}
		if sp.Enum != "" || sp.Flags != "" {
			p.Enum = b.enumByTag(sp.Pos, sp.Enum+sp.Flags, "parameter "+sp.Name+" of "+sf.Name)
		}
		f.Params = append(f.Params, p)
	}
}

// enumByTag finds the Go enum generated for a C enum tag.
func (b *builder) enumByTag(pos spec.Pos, tag, what string) *Enum {
	ce := b.c.Enum(tag)
	if ce == nil {
		b.errorf(pos, "%s: no enum %s in %s (rdma-core %s)", what, tag, b.c.Header, orUnknown(b.c.Version))
		return nil
	}
	e := b.enumByC[ce]
	if e == nil {
		b.errorf(pos, "%s: enum %s is not generated (list it in spec/enums)", what, tag)
	}
	return e
}

// goIdent turns a C parameter name into a Go parameter name.
func goIdent(s string) string {
	c := Camel(s)
	if c == "" {
		return "_"
	}
	c = strings.ToLower(c[:1]) + c[1:]
	switch c {
	case "type", "func", "range", "map", "len", "string", "go", "select", "default", "case", "var", "const", "chan":
		c += "_"
	}
	return c
}

// mirrorFields lays out a mirror from its C record and checks the spec's
// field list against it.
func (b *builder) mirrorFields(m *Mirror, mirrors map[string]*Mirror) {
	ss := m.Spec
	what := "struct " + m.CName
	// The spec lists leaves: direct members, anonymous union members by
	// their names, named union members as union.member.
	var leaves []leaf
	for _, f := range m.C.Fields {
		if f.Bitfield {
			b.errorf(ss.Pos, "%s: bitfield %s cannot be mirrored", what, f.Name)
			return
		}
		if f.Type.Kind == cheader.Union && f.Type.Record.Tag == "" {
			for _, u := range f.Type.Record.Fields {
				n := u.Name
				if f.Name != "" {
					n = f.Name + "." + u.Name
				}
				leaves = append(leaves, leaf{n, u.Type, u})
			}
			continue
		}
		leaves = append(leaves, leaf{f.Name, f.Type, f})
	}
	var listed []*spec.StructField
	for _, sf := range ss.Fields {
		if b.gated(sf.Pos, what+": field "+sf.Name, sf.Gate, hasLeaf(leaves, sf.Name)) {
			listed = append(listed, sf)
		}
	}
	specOf := map[string]*spec.StructField{}
	for i, l := range leaves {
		if i >= len(listed) {
			b.errorf(ss.Pos, "%s: the header has field %s (%s), which the spec does not list (rdma-core %s)", what, l.name, l.t.Spelling(), orUnknown(b.c.Version))
			continue
		}
		sf := listed[i]
		if sf.Name != l.name {
			b.errorf(sf.Pos, "%s: field %d is %s in the header, not %s", what, i+1, l.name, sf.Name)
			continue
		}
		if normType(sf.Type) != normType(l.t.Spelling()) {
			b.errorf(sf.Pos, "%s: field %s has type %q in the header, not %q", what, sf.Name, l.t.Spelling(), sf.Type)
		}
		specOf[sf.Name] = sf
	}
	for _, sf := range listed[min(len(leaves), len(listed)):] {
		b.errorf(sf.Pos, "%s: no field %s in the header (rdma-core %s)", what, sf.Name, orUnknown(b.c.Version))
	}

	for _, f := range m.C.Fields {
		mf := &MirrorField{CName: f.Name, GoName: Camel(f.Name), Offset: f.Offset(), Size: f.Type.Size}
		t := f.Type
		switch {
		case t.Kind == cheader.Union && t.Record.Tag == "":
			allPtr := true
			for _, u := range t.Record.Fields {
				allPtr = allPtr && u.Type.Kind == cheader.Pointer
			}
			mf.Kind = MUnion
			if allPtr {
				mf.Kind = MPtrUnion
			}
			if f.Name == "" {
				mf.GoName = "union" + strconv.FormatInt(f.Offset(), 10)
			}
			for _, u := range t.Record.Fields {
				n := u.Name
				if f.Name != "" {
					n = f.Name + "." + u.Name
				}
				um := &UnionMember{CName: n, GoName: Camel(n), Offset: u.Offset()}
				b.mirrorKind(u.Type, mirrors, &um.Kind, &um.Int, &um.Target, nil, what+"."+n)
				if sf := specOf[n]; sf != nil && sf.When != nil {
					um.When = b.cond(sf.When, m, what)
				}
				mf.Members = append(mf.Members, um)
			}
		default:
			var l int64
			b.mirrorKind(t, mirrors, &mf.Kind, &mf.Int, &mf.Target, &l, what+"."+f.Name)
			mf.Len = l
			if sf := specOf[f.Name]; sf != nil {
				mf.Doc = strings.TrimSpace(sf.Doc)
				if (sf.Enum != "" || sf.Flags != "") && mf.Kind == MInt {
					mf.Enum = b.enumByTag(sf.Pos, sf.Enum+sf.Flags, what+"."+f.Name)
					mf.Names = mf.Enum
					if mf.Enum != nil && mf.Enum.Underlying.Bits != mf.Int.Bits {
						mf.Enum = nil // a uint64 field holding a 32-bit flag set keeps its C type
					}
				} else if t.Kind == cheader.Enumeration {
					mf.Enum = b.enumByC[t.Enum]
				}
				if sf.When != nil {
					mf.When = b.cond(sf.When, m, what)
				}
			} else if t.Kind == cheader.Enumeration {
				mf.Enum = b.enumByC[t.Enum]
			}
		}
		m.Fields = append(m.Fields, mf)
	}
}

// leaf is a field as the spec lists it: a direct member, or a member of a
// union.
type leaf struct {
	name string
	t    *cheader.Type
	fld  *cheader.Field
}

func hasLeaf(leaves []leaf, name string) bool {
	for _, l := range leaves {
		if l.name == name {
			return true
		}
	}
	return false
}

// mirrorKind decides how a C type is mirrored.
func (b *builder) mirrorKind(t *cheader.Type, mirrors map[string]*Mirror, kind *MirrorKind, it *IntType, target **Mirror, n *int64, what string) {
	switch t.Kind {
	case cheader.Bool:
		*kind = MBool
	case cheader.Pointer:
		*kind = MRawPtr
		if e := t.Elem; e != nil && (e.Kind == cheader.Struct || e.Kind == cheader.Union) {
			if m := mirrors[e.Record.Tag]; m != nil {
				*kind, *target = MPointer, m
			}
		}
	case cheader.Array:
		if x, ok := intType(t.Elem); ok && t.Len > 0 && x.Bits > 8 {
			*kind, *it = MArray, x
			if n != nil {
				*n = t.Len
			}
			return
		}
		*kind = MBytes
		if n != nil {
			*n = t.Size
		}
	case cheader.Struct, cheader.Union:
		if m := mirrors[t.Record.Tag]; m != nil && t.Record.Tag != "" {
			*kind, *target = MNested, m
			return
		}
		*kind = MBytes
		if n != nil {
			*n = t.Size
		}
	default:
		x, ok := intType(t)
		if !ok {
			b.errorf(spec.Pos{}, "%s: type %s cannot be mirrored", what, t.Spelling())
			return
		}
		*kind, *it = MInt, x
	}
}

// cond resolves a when: condition on a mirror's field.
func (b *builder) cond(c *spec.Cond, m *Mirror, what string) *Cond {
	out := &Cond{NotNull: c.NotNull}
	for _, f := range m.Fields {
		if f.CName == c.Field {
			out.Field = f
		}
	}
	if out.Field == nil {
		// Fields are built in order; a condition may name a later one.
		for _, f := range m.C.Fields {
			if f.Name == c.Field {
				out.Field = &MirrorField{CName: f.Name, GoName: Camel(f.Name), Offset: f.Offset()}
			}
		}
	}
	if out.Field == nil {
		b.errorf(c.Pos, "%s: when: no field %s", what, c.Field)
		return nil
	}
	for _, s := range c.OneOf {
		if v, ok := b.value(c.Pos, s, what+" when"); ok {
			out.OneOf = append(out.OneOf, v)
		}
	}
	for _, s := range c.Bits {
		if v, ok := b.value(c.Pos, s, what+" when"); ok {
			out.Bits |= v
		}
	}
	for _, s := range c.Clear {
		if v, ok := b.value(c.Pos, s, what+" when"); ok {
			out.Clear |= v
		}
	}
	if len(out.OneOf) == 0 && out.Bits == 0 && out.Clear == 0 && !out.NotNull {
		b.errorf(c.Pos, "%s: when needs one_of, bits, clear or not_null", what)
	}
	return out
}

// argCheck resolves the predicate of an argument rule.
func (b *builder) argCheck(r *spec.Rule, c *spec.Check, mirrors map[string]*Mirror, funcs map[string]*Func) *ArgCheck {
	what := "rule " + r.ID
	a := &ArgCheck{}
	bits := 64
	if c.Struct != "" {
		m := mirrors[c.Struct]
		if m == nil {
			b.errorf(c.Pos, "%s: struct %s is not available", what, c.Struct)
			return nil
		}
		a.Mirror = m
		for _, n := range c.NotAllNull {
			f := fieldNamed(m, n)
			if f == nil || (f.Kind != MPointer && f.Kind != MRawPtr) {
				b.errorf(c.Pos, "%s: not_all_null: %s is not a pointer field of struct %s", what, n, m.CName)
				return nil
			}
			a.NotAllNull = append(a.NotAllNull, f)
		}
		if c.Field != "" {
			a.Field = fieldNamed(m, c.Field)
			if a.Field == nil {
				for _, f := range m.Fields {
					for _, u := range f.Members {
						if u.CName == c.Field {
							a.Field, a.Member = f, u
						}
					}
				}
			}
			if a.Field == nil {
				// A member of a nested struct: dc_init_attr.dc_type.
				if pre, rest, ok := strings.Cut(c.Field, "."); ok {
					if via := fieldNamed(m, pre); via != nil && via.Kind == MNested && via.Target != nil {
						if f := fieldNamed(via.Target, rest); f != nil && f.Kind == MInt {
							a.Via, a.Field = via, f
						}
					}
				}
			}
			if a.Field == nil {
				b.errorf(c.Pos, "%s: struct %s has no field %s", what, m.CName, c.Field)
				return nil
			}
			switch {
			case a.Member != nil && a.Member.Kind == MInt:
				bits = a.Member.Int.Bits
			case a.Member != nil:
				if !c.NotNull {
					b.errorf(c.Pos, "%s: only not_null applies to union member %s", what, c.Field)
					return nil
				}
			case a.Field.Kind == MInt:
				bits = a.Field.Int.Bits
			case a.Field.Kind == MBool:
				bits = 1
			case a.Field.Kind == MPointer || a.Field.Kind == MRawPtr || a.Field.Kind == MPtrUnion:
				if !c.NotNull {
					b.errorf(c.Pos, "%s: only not_null applies to pointer field %s", what, c.Field)
					return nil
				}
			default:
				b.errorf(c.Pos, "%s: field %s is not an integer or a pointer", what, c.Field)
				return nil
			}
		}
		if c.When != nil {
			a.When = b.cond(c.When, m, what)
		}
	} else {
		f := funcs[c.Func]
		if f == nil {
			b.errorf(c.Pos, "%s: function %s is not available", what, c.Func)
			return nil
		}
		a.Func = f
		for _, p := range f.Params {
			if p.Name == c.Param {
				a.Param = p
			}
		}
		if a.Param == nil {
			b.errorf(c.Pos, "%s: function %s has no parameter %s", what, f.Name, c.Param)
			return nil
		}
		if x, ok := intType(a.Param.C); ok {
			bits = x.Bits
		} else if a.Param.C.Kind != cheader.Pointer || !c.NotNull {
			b.errorf(c.Pos, "%s: parameter %s is not an integer", what, c.Param)
			return nil
		}
		if c.When != nil {
			b.errorf(c.When.Pos, "%s: when applies to struct fields", what)
		}
	}
	fits := func(v uint64) bool { return bits >= 64 || v>>uint(bits) == 0 }
	for _, s := range c.OneOf {
		v, ok := b.value(c.Pos, s, what)
		if ok && !fits(v) {
			b.errorf(c.Pos, "%s: %s does not fit the %d-bit value", what, s, bits)
		}
		a.OneOf = append(a.OneOf, v)
	}
	if c.Enum != "" {
		a.Enum = b.enumByTag(c.Pos, c.Enum, what)
	}
	if c.Flags != "" {
		if e := b.enumByTag(c.Pos, c.Flags, what); e != nil {
			a.MaskIsSet, a.FlagsEnum = true, e
			for _, k := range e.Members {
				a.Mask |= k.Value.Bits
			}
		}
	}
	for _, s := range c.Bits {
		if v, ok := b.value(c.Pos, s, what); ok {
			a.MaskIsSet = true
			a.Mask |= v
		}
	}
	for _, s := range c.Has {
		if v, ok := b.value(c.Pos, s, what); ok {
			a.Has |= v
		}
	}
	a.Zero, a.NotNull, a.NotNeg = c.Zero, c.NotNull, c.NotNeg
	if a.NotNeg {
		signed := a.Param != nil && a.Param.C.Kind.IsSigned() || a.Member == nil && a.Field != nil && a.Field.Kind == MInt && a.Field.Int.Signed
		if !signed {
			b.errorf(c.Pos, "%s: not_negative needs a signed integer", what)
		}
	}
	if c.Max != "" {
		if v, ok := b.value(c.Pos, c.Max, what); ok {
			a.Max = &v
		}
	}
	if c.MultipleOf != "" {
		if v, ok := b.value(c.Pos, c.MultipleOf, what); ok && v > 0 {
			a.MultipleOf = v
		} else {
			b.errorf(c.Pos, "%s: multiple_of must be positive", what)
		}
	}
	return a
}

func fieldNamed(m *Mirror, name string) *MirrorField {
	for _, f := range m.Fields {
		if f.CName == name {
			return f
		}
	}
	return nil
}
