package model

import "github.com/mlx5gen/mlx5gen/gen/spec"

// The vocabularies a spec's words are checked against, each in the order
// of the constants the generated package declares for it. The spec
// (gen/spec) only checks that the words are there; the model checks that
// they are known, and the emitters number them from these lists.

// ChainChecks are the checks of the work-request state machine
// (runtime/wrcheck) that rules name with check: {chain: name}.
var ChainChecks = []string{
	"in_batch", "qp_type", "send_op", "wr_flags", "setter_after_builder", "setter_once",
	"layout_once", "num_setters", "requires_data", "requires_dc_addr", "sge_count",
	"inline_size", "layout_entries", "mkey_entries", "mkey_signature", "mkey_crypto",
	"mkey_tag", "mkey_state", "mkey_crypto_state", "memcpy_zero", "memcpy_max",
	"dc_streams", "dc_stream_id", "copy_mask_structure", "crypto_order", "length_4g",
	"single_block", "bsf_room", "sq_room", "raw_wqe_size",
}

// SetterGroups are the groups of setters: a builder takes some groups
// (takes, requires), a setter belongs to one (group).
var SetterGroups = []string{"data", "dc_addr", "access", "layout", "signature", "crypto", "ud_addr", "xrc_srqn"}

// QPType is a QP type a work request function may name (qp_types), with
// the Go constant of its bit.
type QPType struct {
	Name   string // as the spec writes it: RC
	GoName string // QPRC
}

// QPTypes are the QP types, in bit order.
var QPTypes = []QPType{
	{"RC", "QPRC"}, {"UC", "QPUC"}, {"UD", "QPUD"}, {"XRC_SEND", "QPXRCSend"},
	{"RAW_PACKET", "QPRawPacket"}, {"DCI", "QPDCI"},
}

// qpTypeName returns the Go constant of a QP type, "" for an unknown one.
func qpTypeName(name string) string {
	for _, q := range QPTypes {
		if q.Name == name {
			return q.GoName
		}
	}
	return ""
}

// FuncKinds are the kinds of function the spec knows (its schema), in the
// order of the generated Kind constants.
var FuncKinds = []string{spec.KindVerb, spec.KindBuilder, spec.KindSetter, spec.KindHelper}

// builtinIdents are the names the generated package declares by itself
// (format.go, ruleerror.go, split.go and the API tables): a spec item may
// not take them.
var builtinIdents = []string{"Split", "SplitOptions", "WQESegment", "InlineData", "RawBytes", "SegmentView",
	"BE16", "BE32", "BE64", "ToBE16", "ToBE32", "ToBE64", "RuleError", "setRuleError", "cloneRuleError",
	"Rules", "Func", "FuncInfo", "Funcs", "ChainCheck", "ChainError", "NumChainChecks", "NumFuncs",
	"QPType", "SetterGroup", "NewMirror", "ArgValidators", "RuleInfo",
	"Test", "TestNone", "TestMax", "TestMin", "TestBits", "TestNeedBits", "TestOneOf", "TestZero",
	"TestNotNull", "TestMultipleOf", "TestNotNegative", "TestEqual", "TestMissing"}

// reserved lists every name the generated package declares by itself.
func reserved() []string {
	names := append([]string(nil), builtinIdents...)
	for _, k := range FuncKinds {
		names = append(names, KindName(k))
	}
	return names
}
