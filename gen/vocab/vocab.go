// Package vocab holds the words of the spec that the generated package
// numbers or types by: function kinds, QP types, setter groups, the checks
// of the work-request state machine, and the field types of a private
// segment. gen/spec checks a descriptor's words against
// these lists and gen/resolve the rules' chain checks; the emitters number
// the generated constants in the order of the lists. A word is added here
// and nowhere else.
package vocab

// Function kinds (a function descriptor's kind).
const (
	KindVerb    = "verb"    // an ordinary call with a synchronous result
	KindBuilder = "builder" // opens one work request inside ibv_wr_start..complete
	KindSetter  = "setter"  // adds to the work request the last builder opened
	KindHelper  = "helper"  // conversions and chain control
)

// FuncKinds are the function kinds, in the order of the generated Kind
// constants.
var FuncKinds = []string{KindVerb, KindBuilder, KindSetter, KindHelper}

// QPTypes are the QP types a work request function may name (qp_types),
// in the bit order of the generated QPType.
var QPTypes = []string{"RC", "UC", "UD", "XRC_SEND", "RAW_PACKET", "DCI"}

// SetterGroups are the groups of setters: a builder takes some groups
// (takes, requires), a setter belongs to one (group). In the bit order of
// the generated SetterGroup.
var SetterGroups = []string{"data", "dc_addr", "access", "layout", "signature", "crypto", "ud_addr", "xrc_srqn"}

// ChainChecks are the checks of the work-request state machine
// (runtime/internal/wrcheck) that rules name with check: {chain: name}, in the
// order of the generated ChainCheck constants.
var ChainChecks = []string{
	"in_batch", "qp_type", "send_op", "wr_flags", "setter_after_builder", "setter_once",
	"layout_once", "num_setters", "requires_data", "requires_dc_addr", "sge_count",
	"inline_size", "layout_entries", "mkey_entries", "mkey_signature", "mkey_crypto",
	"mkey_tag", "mkey_state", "mkey_crypto_state", "memcpy_zero", "memcpy_max",
	"dc_streams", "dc_stream_id", "copy_mask_structure", "crypto_order", "length_4g",
	"single_block", "bsf_room", "sq_room", "raw_wqe_size", "sge_length", "msg_size",
	"send_flags", "rq_room", "rq_sge_count", "rq_sge_length", "klm_length",
}

// ReceiveChecks are the checks of ChainChecks that the receive-queue
// writer (runtime/rq) makes on ibv_post_recv and ibv_post_srq_recv: the
// room in the queue, the SGE count and the SGE lengths.
var ReceiveChecks = []string{"rq_room", "rq_sge_count", "rq_sge_length"}

// Byte orders of a private segment's integer field types.
const (
	BigEndian    = "big"
	LittleEndian = "little"
	HostOrder    = "host" // what the header declares without __be/__le
)

// IntField is an integer type of a private segment's field.
type IntField struct {
	Bits  int
	Order string // BigEndian, LittleEndian or HostOrder
}

// IntFields are the integer types a private segment's field may have
// (type:); the other types are "bytes" and "segment".
var IntFields = map[string]IntField{
	"u8": {8, BigEndian}, "be16": {16, BigEndian}, "be32": {32, BigEndian}, "be64": {64, BigEndian},
	"le16": {16, LittleEndian}, "le32": {32, LittleEndian}, "le64": {64, LittleEndian},
	"u16": {16, HostOrder}, "u32": {32, HostOrder}, "u64": {64, HostOrder},
}
