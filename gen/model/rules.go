package model

// Rule is a rule of the spec, resolved.
type Rule struct {
	ID      string
	GoName  string // errSigCrcSeed
	Man     string // the man page that states it
	Section string // the section of the man page
	Says    string // the statement, in our words
	Applies string // the rule as its check applies it, when stricter than Says
	Kind    string // argument, chain, qp, device, object, use, info
	Errno   string
	Libmlx5 string   // how libmlx5 differs, if it does
	Follows string   // the rdma-core release whose changed behaviour we follow
	Vectors []string // the rejects.json cases it explains
	// Libmlx5Accepts: libmlx5 accepts what this rule rejects.
	Libmlx5Accepts bool
	FuncNames      []string  // the C functions it names, available or not
	Funcs          []*Func   // the available ones
	Arg            *ArgCheck // argument rules
	Chain          int       // index in vocab.ChainChecks + 1; 0 for none
	Src            Source
	SpecFile       string // its descriptor, relative to the spec directory
	// DeviceAPI says why no call of the device API (runtime/device) can
	// break this argument rule (spec: device_api); "" when one can.
	DeviceAPI string
}

// Applied is the rule as its check applies it: Applies, else Says.
func (r *Rule) Applied() string {
	if r.Applies != "" {
		return r.Applies
	}
	return r.Says
}

// ArgCheck is a predicate on a mirror field or a parameter.
type ArgCheck struct {
	Mirror     *Mirror
	Field      *MirrorField
	FieldName  string       // the field as the rule names it (dotted for a union member or a nested struct)
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
