package model

import (
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// Every Go name of the generated package is derived here, from the C
// names (Camel) or from another Go name (the methods below), so that a
// change of naming is made in one place.

// Camel turns a C identifier into a Go exported name letter by letter,
// for the names of the checker's tables (Fn, Chain, Group, Kind
// constants, validators) that keep the C words as they are:
// mlx5dv_wr_set_dc_addr -> Mlx5dvWrSetDcAddr.
func Camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '_' || r == '.':
			up = true
		case up && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String()
}

// initialisms are the words written in capitals in a Go name (Go's own
// list, as golint kept it, and the RDMA and mlx5 ones): qpn -> QPN. A word
// of letters and digits is written in capitals when its letters are here
// (cqe64 -> CQE64). Adding a word here renames every identifier holding it.
var initialisms = wordSet(
	// Go's
	"api ascii cpu css dns eof guid html http https id ip json lhs qps ram rhs rpc sla smtp sql ssh tcp tls ttl udp ui uid uuid uri url utf8 vm xml xss",
	// RDMA verbs and mlx5
	"ah aso av bf bg bsf cq cqe cqn crc ct db dbr dc dci dct dek dm dma dr ds esp gid grh ib ibv iv klm l3 l4 lid mac mmo mprq mr mtu mw pd psv qp qpn rdma rq rqn rss sge sl sq sqn srq srqn sw t10dif tir tis tm tso uapi uar umr vfio vlan wc wq wqe wqebb wr xrc xts aes ud rc uc",
)

// mixedWords are the words written in mixed case: the keys of an MR or
// mkey read as the runtime names them (MR.LKey, RKey), so the generated
// mirrors and accessors spell them the same way (SGE.LKey, SetLKey).
var mixedWords = map[string]string{"lkey": "LKey", "rkey": "RKey", "lkeys": "LKeys", "rkeys": "RKeys"}

// typePrefixes are the prefixes a C type tag loses in its Go name, the
// strongest first: when two tags differ only by their prefix
// (mlx5dv_qp_create_send_ops_flags, ibv_qp_create_send_ops_flags), the
// strongest takes the short name and the others keep their prefix word
// (IBVQPCreateSendOpsFlags).
var typePrefixes = []struct{ c, word string }{
	{"mlx5dv_", "MLX5DV"}, {"mlx5_", "MLX5"}, {"ibv_", "IBV"},
}

// typeOverrides names the types no rule names well: C tag -> Go name.
var typeOverrides = map[string]string{
	"ibv_qp_type": "IBVQPType", // QPType is the checker's QP type (a QP type of vocab.QPTypes)
}

func wordSet(lists ...string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = true
		}
	}
	return m
}

// GoCase turns a C identifier or member path into a Go exported name,
// word by word, the initialisms in capitals: key.dc_key -> KeyDCKey,
// mlx5_cqe64 -> MLX5CQE64 (the prefix is kept; see Namer).
func GoCase(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '.' }) {
		b.WriteString(goWord(w))
	}
	return b.String()
}

// goWord writes one word of a C name in Go.
func goWord(w string) string {
	if w == "mlx5" || w == "mlx5dv" {
		return strings.ToUpper(w)
	}
	if m, ok := mixedWords[w]; ok {
		return m
	}
	letters := strings.TrimRight(w, "0123456789")
	if initialisms[w] || initialisms[letters] {
		return strings.ToUpper(w)
	}
	if w[0] >= 'a' && w[0] <= 'z' {
		return string(w[0]-'a'+'A') + w[1:]
	}
	return w
}

// Namer names C identifiers that carry a prefix (mlx5dv_, mlx5_, ibv_):
// the types of C tags, and the functions. It knows every identifier of its
// kind in the headers, so that dropping a prefix never gives two of them
// one name.
type Namer struct {
	best map[string]int // name without prefix -> index of the strongest prefix that has it
}

// NewNamer makes the namer of the tags (or the functions) of a header.
func NewNamer(tags []string) *Namer {
	n := &Namer{best: map[string]int{}}
	for _, t := range tags {
		if i, rest := splitPrefix(t); i >= 0 {
			if prev, ok := n.best[rest]; !ok || i < prev {
				n.best[rest] = i
			}
		}
	}
	return n
}

// splitPrefix is the index in typePrefixes of tag's prefix (-1 for none)
// and the rest of the tag.
func splitPrefix(tag string) (int, string) {
	for i, p := range typePrefixes {
		if rest, ok := strings.CutPrefix(tag, p.c); ok && rest != "" {
			return i, rest
		}
	}
	return -1, tag
}

// Name is the Go type of a C enum, struct or union tag (or typedef):
// mlx5_wqe_ctrl_seg -> WQECtrlSeg, mlx5dv_qp_init_attr -> QPInitAttr,
// ibv_qp_create_send_ops_flags -> IBVQPCreateSendOpsFlags (mlx5dv has
// it too). The spec may give another (go:). A nil namer knows no tag.
func (n *Namer) Name(tag string) string {
	if o, ok := typeOverrides[tag]; ok {
		return o
	}
	i, rest := splitPrefix(tag)
	if i < 0 {
		return GoCase(tag)
	}
	name := GoCase(rest)
	if n != nil {
		if best, ok := n.best[rest]; ok && best < i {
			name = typePrefixes[i].word + name
		}
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = typePrefixes[i].word + name
	}
	return name
}

// MemberName is the Go name of a member (its accessor, or its field in a
// mirror) from its C member path, or of a part of a field: key.dc_key ->
// KeyDCKey, dci_stream_channel_id -> DCIStreamChannelID.
func MemberName(path string) string { return GoCase(path) }

// IsIdent reports whether s is an exported Go identifier made of ASCII
// letters, digits and underscores.
func IsIdent(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ParamName turns a C parameter name into a Go parameter name.
func ParamName(s string) string {
	c := Camel(s)
	// A key word after the first is spelled as in the Go names
	// (invalidate_rkey -> invalidateRKey); Camel alone would give Rkey.
	if c == "" {
		return "_"
	}
	for w, m := range mixedWords {
		c = c[:1] + strings.ReplaceAll(c[1:], strings.ToUpper(w[:1])+w[1:], m)
	}
	c = strings.ToLower(c[:1]) + c[1:]
	switch c {
	case "type", "func", "range", "map", "len", "string", "go", "select", "default", "case", "var", "const", "chan":
		c += "_"
	}
	return c
}

// FuncName is the Func constant of a C function from the function's Go
// name (a Namer's, which drops the prefix): WRSetSGE -> FnWRSetSGE.
func FuncName(goName string) string { return "Fn" + goName }

// RuleVarName is the error variable of an argument rule.
func RuleVarName(id string) string { return "err" + Camel(strings.ReplaceAll(id, ".", "_")) }

// UnionName is the Go name of an anonymous union at a byte offset.
func UnionName(off int64) string { return "union" + strconv.FormatInt(off, 10) }

// SizeName is the constant holding the segment's size.
func (s *Segment) SizeName() string { return s.GoName + "Size" }

// FieldsName is the struct type holding every field of the segment.
func (s *Segment) FieldsName() string { return s.GoName + "Fields" }

// Setter is the name of the setter of an accessor.
func Setter(getter string) string { return "Set" + getter }

// WireName is the accessor of a big-endian field in the device's byte
// order.
func WireName(getter string) string { return getter + "BE" }

// NamesVar is the unexported table of an enum's members.
func (e *Enum) NamesVar() string { return strings.ToLower(e.GoName[:1]) + e.GoName[1:] + "Names" }

// NamesFunc is the function validators use to name an enum's values.
func (e *Enum) NamesFunc() string { return "names" + e.GoName }

// Validator is the name of the function checking the rules on the
// function's arguments.
func (f *Func) Validator() string { return "ValidateArgs" + strings.TrimPrefix(f.GoName, "Fn") }

// BindingName is the Go name of f's cgo binding (generated/mlx5verbs):
// its Func value's name without Fn (WRMkeyConfigure, OpenDevice).
func (f *Func) BindingName() string { return strings.TrimPrefix(f.GoName, "Fn") }

// ChainName is the ChainCheck constant of a chain check.
func ChainName(check string) string { return "Chain" + GoCase(check) }

// GroupName is the SetterGroup constant of a setter group.
func GroupName(group string) string { return "Group" + GoCase(group) }

// KindName is the constant holding a function kind.
func KindName(kind string) string { return "Kind" + Camel(kind) }

// qpTypeNames are the QPType constants of the QP types.
var qpTypeNames = map[string]string{
	"RC": "QPRC", "UC": "QPUC", "UD": "QPUD", "XRC_SEND": "QPXRCSend", "RAW_PACKET": "QPRawPacket", "DCI": "QPDCI",
}

// QPTypeName is the QPType constant of a QP type of vocab.QPTypes.
func QPTypeName(q string) string { return qpTypeNames[q] }

// builtinIdents are the names the generated package declares by itself
// (format.go, ruleerror.go, split.go, funcs.go, registry.go): a spec item
// may not take them. The checker's tables package (Funcs, Rules, the
// chain checks, the setter groups and function kinds) declares only
// names of gen/vocab, so nothing of the spec can collide there.
var builtinIdents = []string{"Split", "SplitOptions", "WQESegment", "InlineData", "RawBytes", "SegmentView",
	"BE16", "BE32", "BE64", "ToBE16", "ToBE32", "ToBE64", "RuleError", "setRuleError", "cloneRuleError",
	"Func", "NumFuncs", "QPType", "NewMirror", "ArgValidators", "MirrorLayout", "SegmentField", "FieldAt",
	"Test", "TestNone", "TestMax", "TestMin", "TestBits", "TestNeedBits", "TestOneOf", "TestZero",
	"TestNotNull", "TestMultipleOf", "TestNotNegative", "TestEqual", "TestMissing"}

// SegmentMethods are the methods every segment type has; fields and parts
// must not take their names.
var SegmentMethods = []string{"String", "Fields", "SetFields", "CName"}

// Reserved lists every name the generated package declares by itself.
func Reserved() []string {
	names := append([]string(nil), builtinIdents...)
	for _, q := range vocab.QPTypes {
		names = append(names, QPTypeName(q))
	}
	return names
}

// OpcodeType is the Go name spec/enums gives the MLX5_OPCODE_* enum, whose
// values name the WQE formats.
const OpcodeType = "Opcode"
