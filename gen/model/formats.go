package model

// StepKind is one element of a WQE format.
type StepKind uint8

const (
	StepSegment StepKind = iota // one fixed segment
	StepData                    // data segments or one inline segment, up to ds
	StepUMR                     // mkey context, translation and BSFs of a UMR
)

// Step is one element of a WQE format.
type Step struct {
	Kind    StepKind
	Segment *Segment
}

// Format is the layout of the WQEs of some opcodes after the control
// segment.
type Format struct {
	Name    string
	Opcodes []*Const
	Steps   []Step
	Doc     string
	Src     Source
}

// Splitter is what the generated Split uses besides the formats: the
// segments it walks every WQE with and, when a format has the body of a
// UMR (umr*), the segments that body holds (nil otherwise). gen/resolve
// checked that they have the accessors Split calls.
type Splitter struct {
	Ctrl, Inline              *Segment
	UMRCtrl, RepeatBlock, KLM *Segment
}

// RepeatBlockOp is what libmlx5 writes into the op word of an interleaved
// UMR translation (rdma-core providers/mlx5/qp.c), where a KLM list has an
// mkey: the WQE splitters tell the two apart by it. The public header has
// no name for it.
const RepeatBlockOp = 0x400
