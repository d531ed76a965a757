package model

import (
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// Every Go name of the generated package is derived here, from the C
// names (Camel) or from another Go name (the methods below), so that a
// change of naming is made in one place.

// Camel turns a C identifier or member path into a Go exported name:
// mlx5_wqe_ctrl_seg -> Mlx5WqeCtrlSeg, key.dc_key -> KeyDcKey.
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

// TypeName is the Go type of a C enum, struct or union tag (or typedef):
// mlx5_wqe_ctrl_seg -> Mlx5WqeCtrlSeg. The spec may give another (go:).
func TypeName(tag string) string { return Camel(tag) }

// MemberName is the Go name of a member (its accessor, or its field in a
// mirror) from its C member path, or of a part of a field: key.dc_key ->
// KeyDcKey.
func MemberName(path string) string { return Camel(path) }

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

// FuncName is the Func constant of a C function.
func FuncName(c string) string { return "Fn" + Camel(c) }

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
func (f *Func) Validator() string { return "ValidateArgs" + Camel(f.Name) }

// ChainName is the ChainCheck constant of a chain check.
func ChainName(check string) string { return "Chain" + Camel(check) }

// GroupName is the SetterGroup constant of a setter group.
func GroupName(group string) string { return "Group" + Camel(group) }

// KindName is the constant holding a function kind.
func KindName(kind string) string { return "Kind" + Camel(kind) }

// qpTypeNames are the QPType constants of the QP types.
var qpTypeNames = map[string]string{
	"RC": "QPRC", "UC": "QPUC", "UD": "QPUD", "XRC_SEND": "QPXRCSend", "RAW_PACKET": "QPRawPacket", "DCI": "QPDCI",
}

// QPTypeName is the QPType constant of a QP type of vocab.QPTypes.
func QPTypeName(q string) string { return qpTypeNames[q] }

// builtinIdents are the names the generated package declares by itself
// (format.go, ruleerror.go, split.go and the API tables) besides the Kind
// constants: a spec item may not take them.
var builtinIdents = []string{"Split", "SplitOptions", "WQESegment", "InlineData", "RawBytes", "SegmentView",
	"BE16", "BE32", "BE64", "ToBE16", "ToBE32", "ToBE64", "RuleError", "setRuleError", "cloneRuleError",
	"Rules", "Func", "FuncInfo", "Funcs", "ChainCheck", "ChainError", "NumChainChecks", "NumFuncs",
	"QPType", "SetterGroup", "NewMirror", "ArgValidators", "RuleInfo",
	"Test", "TestNone", "TestMax", "TestMin", "TestBits", "TestNeedBits", "TestOneOf", "TestZero",
	"TestNotNull", "TestMultipleOf", "TestNotNegative", "TestEqual", "TestMissing"}

// SegmentMethods are the methods every segment type has; fields and parts
// must not take their names.
var SegmentMethods = []string{"String", "Fields", "SetFields", "CName"}

// Reserved lists every name the generated package declares by itself.
func Reserved() []string {
	names := append([]string(nil), builtinIdents...)
	for _, k := range vocab.FuncKinds {
		names = append(names, KindName(k))
	}
	return names
}
