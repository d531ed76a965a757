package spec

import "go.yaml.in/yaml/v3"

// The API descriptors: functions, structs and rules of the mlx5dv man pages.
// spec/README.md documents every key.

// Return conventions.
const (
	ReturnsPointer  = "pointer-errno"   // a pointer; NULL with errno set on failure
	ReturnsErrno    = "errno"           // 0 or a positive errno value
	ReturnsNegErrno = "negative-errno"  // a count, or a negative errno value
	ReturnsMinusOne = "minus-one-errno" // 0 (or a count); -1 with errno set on failure
	ReturnsDeferred = "deferred"        // void; an error is latched and ibv_wr_complete reports it
	ReturnsVoid     = "void"            // cannot fail
	ReturnsValue    = "value"           // a value that is not an error indication
)

// Function describes one C function of the API.
type Function struct {
	Pos     Pos      `yaml:"-"`
	Name    string   `yaml:"name,required"`
	Kind    string   `yaml:"kind,required"` // one of vocab.FuncKinds
	Man     string   `yaml:"man"`
	Returns string   `yaml:"returns,required"`
	Result  string   `yaml:"result"` // C result type as the header writes it; "" = void
	Params  []*Param `yaml:"params"`
	Doc     string   `yaml:"doc"`
	Gate    `yaml:",inline"`

	// Inline: the function C callers reach (Macro's target, or the
	// function itself) is a static inline definition of the header, with
	// no symbol in the library; bindings call it through a C shim.
	Inline bool `yaml:"inline"`
	// Macro: the header defines the name as a function-like macro that C
	// calls go through. Its value is the function whose prototype such a
	// call has: the function itself when the macro keeps the prototype
	// (ibv_reg_mr), or the function it forwards to when that differs
	// (___ibv_query_port). Params and result follow that prototype.
	Macro string `yaml:"macro"`

	// Work request builders and setters.
	QPTypes   []string `yaml:"qp_types"`     // QP types that offer it: RC, UC, UD, XRC_SEND, RAW_PACKET, DCI
	SendOp    string   `yaml:"send_op"`      // IBV_QP_EX_WITH_* bit the QP needs in send_ops_flags
	MlxSendOp string   `yaml:"mlx5_send_op"` // MLX5DV_QP_EX_WITH_* bit the QP needs in the mlx5dv send_ops_flags
	WRFlags   []string `yaml:"wr_flags"`     // builder: ibv_send_flags bits wr_flags must carry
	Takes     []string `yaml:"takes"`        // builder: setter groups that may follow it
	Requires  []string `yaml:"requires"`     // builder: setter groups every such work request must get
	Group     string   `yaml:"group"`        // setter: its group
	Of        []string `yaml:"of"`           // setter: builders it may follow (default: every builder that takes its group)
}

// Param is one parameter of a function.
type Param struct {
	Pos   Pos    `yaml:"-"`
	Name  string `yaml:"name,required"`
	Type  string `yaml:"type,required"` // C type as in the header's prototype
	Enum  string `yaml:"enum"`          // value enum (tag) the value takes
	Flags string `yaml:"flags"`         // flag set (tag) the value is an OR of
	Doc   string `yaml:"doc"`
}

// Struct describes a C struct of the API; a Go mirror with the exact C
// layout and a validator for its rules are generated from it.
type Struct struct {
	Pos    Pos            `yaml:"-"`
	Name   string         `yaml:"name,required"` // struct tag
	Man    string         `yaml:"man"`
	Doc    string         `yaml:"doc"`
	Fields []*StructField `yaml:"fields"` // every field; required unless Opaque
	Gate   `yaml:",inline"`

	// Opaque, one line, says why the struct gets no mirror (a table of
	// function pointers, a flexible array member): Go holds it only as an
	// opaque handle. It lists no fields, and no rule checks its fields, but
	// it counts as described, so the header has nothing left unsaid.
	Opaque string `yaml:"opaque"`
}

// StructField is one field; members of an anonymous union are listed by
// their own names, members of a named union as union.member.
type StructField struct {
	Pos   Pos    `yaml:"-"`
	Name  string `yaml:"name,required"`
	Type  string `yaml:"type,required"`
	Enum  string `yaml:"enum"`
	Flags string `yaml:"flags"`
	When  *Cond  `yaml:"when"` // a union member: when it is the meaningful one
	Doc   string `yaml:"doc"`
	Gate  `yaml:",inline"`
}

// Rule kinds.
const (
	RuleArgument = "argument" // a value passed in: checked by a generated validator
	RuleChain    = "chain"    // the order of calls in a work request chain
	RuleQP       = "qp"       // what the QP was created with (type, send ops, sizes)
	RuleDevice   = "device"   // a device capability or limit
	RuleObject   = "object"   // what an object (mkey, DEK) was created with
	RuleUse      = "use"      // how the result may be used later; not checkable when posting
	RuleInfo     = "info"     // describes behaviour; nothing to reject
)

// Rule is one statement of a man page, in our words, and how it is
// enforced.
type Rule struct {
	Pos     Pos      `yaml:"-"`
	ID      string   `yaml:"id,required"`
	Man     string   `yaml:"man"`
	Section string   `yaml:"section,required"`
	Says    string   `yaml:"says,required"`
	Applies string   `yaml:"applies"` // the rule as the check applies it, when stricter than says
	Kind    string   `yaml:"kind,required"`
	Errno   string   `yaml:"errno"`   // EINVAL, ENOMEM, EOPNOTSUPP, EBADF
	Funcs   []string `yaml:"funcs"`   // the functions it applies to
	Check   *Check   `yaml:"check"`   // how it is enforced; nil for use and info rules
	Libmlx5 string   `yaml:"libmlx5"` // how libmlx5 differs, when it does

	// DeviceAPI says why no call of the device API (runtime/device) can
	// break this argument rule: its Go configuration cannot express the C
	// value. A pointer, so that an empty note is told from none.
	DeviceAPI *string `yaml:"device_api"`

	// Libmlx5Accepts: libmlx5 accepts a work request that breaks this
	// enforced rule (posts it, or completes the batch with 0) and we
	// reject it. Replay holds a vector in which libmlx5 accepted such a
	// batch to this rejection.
	Libmlx5Accepts bool `yaml:"libmlx5_accepts"`
	// Follows is the rdma-core release whose changed behaviour we follow
	// (libmlx5 before it did otherwise). Replay compares a vector's
	// result_at_newest_commit, recorded with that release or a later one,
	// for a case that calls one of the rule's funcs.
	Follows string   `yaml:"follows"`
	Vectors []string `yaml:"vectors"` // rejects.json cases it explains
	Tests   *Tests   `yaml:"tests"`   // examples that break and keep it
	Gate    `yaml:",inline"`

	// IfDeclared makes the rule follow the header: it is generated when the
	// header declares this name (a function, constant, struct, enum or
	// typedef), like a gated function, and its gate is cross-checked.
	IfDeclared string `yaml:"if_declared"`
}

// Check says how a rule is enforced: a predicate on a struct field or a
// parameter (generated into a validator), or a named check of the
// work-request chain state machine (runtime/internal/wrcheck).
type Check struct {
	Pos    Pos    `yaml:"-"`
	Struct string `yaml:"struct"` // the struct whose validator checks it
	Field  string `yaml:"field"`  // its field (dotted for named unions)
	Func   string `yaml:"func"`   // or: the function whose argument validator checks it
	Param  string `yaml:"param"`  // and its parameter

	OneOf      []string `yaml:"one_of"`       // the value is one of these (numbers or constant names)
	Enum       string   `yaml:"enum"`         // the value is a member of this enum (tag)
	Flags      string   `yaml:"flags"`        // the value has only bits of this flag set (tag)
	Bits       []string `yaml:"bits"`         // the value has only these bits (constant names)
	Has        []string `yaml:"has"`          // the value has all these bits (constant names)
	NotNeg     bool     `yaml:"not_negative"` // the signed value is not negative
	Zero       bool     `yaml:"zero"`         // the value is 0
	NotNull    bool     `yaml:"not_null"`     // the pointer is not NULL
	Max        string   `yaml:"max"`          // the value is at most this
	MultipleOf string   `yaml:"multiple_of"`  // the value is a multiple of this
	NotAllNull []string `yaml:"not_all_null"` // these pointer fields are not all NULL
	When       *Cond    `yaml:"when"`         // the check applies only when this holds

	Chain string `yaml:"chain"` // a check of the state machine, by name
}

// Cond restricts a field check to some values of another field.
type Cond struct {
	Pos     Pos      `yaml:"-"`
	Field   string   `yaml:"field,required"`
	OneOf   []string `yaml:"one_of"`   // the field is one of these
	Bits    []string `yaml:"bits"`     // the field has all these bits
	Clear   []string `yaml:"clear"`    // the field has none of these bits
	NotNull bool     `yaml:"not_null"` // the pointer field is not NULL
}

// Tests are a rule's examples: Good keeps the rule, Bad breaks it. For an
// argument rule each is a struct value (field: value, pointers as nested
// mappings) or the parameters of the function; for a chain rule, a QP and a
// list of calls (see spec/README.md). They are kept as YAML and read by the
// tests.
type Tests struct {
	Pos  Pos       `yaml:"-"`
	QP   yaml.Node `yaml:"qp"`
	Good yaml.Node `yaml:"good"`
	Bad  yaml.Node `yaml:"bad"`
}
