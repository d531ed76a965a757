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
