package device

import (
	"errors"
	"fmt"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Flow steering (mlx5dv_create_flow_matcher(3), mlx5dv_create_flow(3)):
// a matcher says which fields of a packet its rules compare (a mask in
// the device's fte_match_param format) in which flow table; a rule under
// it gives the values of those fields and what happens to a packet that
// matches (delivered to a QP, dropped, tagged, or left to the default
// miss). The hardware backend creates them with libmlx5; a backend that
// steers no packets (the simulator, whose fabric carries RDMA operations,
// not packets) refuses them with an error matching ErrNoFlowSteering.

// ErrNoFlowSteering: the backend creates no flow matchers or rules. It
// matches errors.ErrUnsupported.
var ErrNoFlowSteering = fmt.Errorf("the backend steers no packets (mlx5dv_create_flow_matcher): %w", errors.ErrUnsupported)

// FlowMatcherConfig is a matcher (struct mlx5dv_flow_matcher_attr).
type FlowMatcherConfig struct {
	// TableType is the flow table the matcher's rules go to
	// (MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX, the default, NIC_TX, FDB,
	// RDMA_RX or RDMA_TX); any but NIC_RX is passed as ft_type with
	// MLX5DV_FLOW_MATCHER_MASK_FT_TYPE.
	TableType mlx.IBUAPIFlowTableType
	// Egress makes a NIC_RX matcher one of egress rules instead
	// (IBV_FLOW_ATTR_FLAGS_EGRESS); it does not combine with TableType.
	Egress   bool
	Priority uint16
	// CriteriaEnable says which parts of Mask are in use
	// (match_criteria_enable, the device's format).
	CriteriaEnable uint8
	// Mask is match_buf of struct mlx5dv_flow_match_parameters: a
	// non-empty whole number of 8-byte words in the device's format.
	Mask []byte
}

// FlowActionKind is what a rule does with a matching packet
// (enum mlx5dv_flow_action_type).
type FlowActionKind int

const (
	FlowToQP        FlowActionKind = iota + 1 // MLX5DV_FLOW_ACTION_DEST_IBV_QP: deliver to FlowAction.QP
	FlowDrop                                  // MLX5DV_FLOW_ACTION_DROP
	FlowTag                                   // MLX5DV_FLOW_ACTION_TAG: FlowAction.Tag in the completion
	FlowDefaultMiss                           // MLX5DV_FLOW_ACTION_DEFAULT_MISS
)

// FlowAction is one action of a rule (struct mlx5dv_flow_action_attr).
type FlowAction struct {
	Kind FlowActionKind
	QP   *QP    // FlowToQP: a QP of the rule's context
	Tag  uint32 // FlowTag
}

// FlowMatcher is a flow matcher; its rules close with it.
type FlowMatcher struct {
	c    *Context
	b    BackendFlowMatcher
	n    *node
	mask int // the mask's length: a rule's values have as many bytes
}

// Flow is a steering rule (struct ibv_flow).
type Flow struct {
	c *Context
	n *node
}

// FlowBackend is an optional interface of a BackendContext that creates
// flow matchers (mlx5dv_create_flow_matcher).
type FlowBackend interface {
	CreateFlowMatcher(cfg FlowMatcherConfig) (BackendFlowMatcher, error)
}

// BackendFlowMatcher is a flow matcher; CreateFlow is mlx5dv_create_flow
// with actions whose QPs are the backend's.
type BackendFlowMatcher interface {
	CreateFlow(value []byte, actions []BackendFlowAction) (BackendFlow, error)
	Close() error
}

// BackendFlowAction is a FlowAction with the backend's QP.
type BackendFlowAction struct {
	Kind FlowActionKind
	QP   BackendQP
	Tag  uint32
}

// BackendFlow is a steering rule (ibv_destroy_flow on Close).
type BackendFlow interface {
	Close() error
}

// ibvFlowAttrFlagsEgress is IBV_FLOW_ATTR_FLAGS_EGRESS of enum
// ibv_flow_flags (verbs.h), which the generated package does not carry
// (the header it is generated from is mlx5dv.h); the generated validator
// of flags allows exactly this bit.
const ibvFlowAttrFlagsEgress = 1 << 2

// checkFlowMatcher refuses what no backend could create, naming the field.
func checkFlowMatcher(cfg *FlowMatcherConfig) error {
	switch {
	case cfg.TableType > mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_TX:
		return cfgErr("FlowMatcherConfig.TableType", cfg.TableType, "one of enum mlx5_ib_uapi_flow_table_type")
	case cfg.Egress && cfg.TableType != mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX:
		return cfgErr("FlowMatcherConfig.Egress", true, "only with the default TableType (NIC_RX); name NIC_TX instead")
	case len(cfg.Mask) == 0 || len(cfg.Mask)%8 != 0:
		return cfgErr("FlowMatcherConfig.Mask", fmt.Sprintf("of %d bytes", len(cfg.Mask)), "a non-empty whole number of 8-byte words (match_buf is uint64_t[])")
	}
	return nil
}

// MatcherAttr is the struct mlx5dv_flow_matcher_attr cfg stands for,
// without match_mask (the backend points it at its copy of Mask).
func (cfg *FlowMatcherConfig) MatcherAttr() mlx.FlowMatcherAttr {
	a := mlx.FlowMatcherAttr{Type: mlx.IBV_FLOW_ATTR_NORMAL, Priority: cfg.Priority, MatchCriteriaEnable: cfg.CriteriaEnable}
	if cfg.Egress {
		a.Flags = ibvFlowAttrFlagsEgress
	}
	if cfg.TableType != mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX {
		a.CompMask, a.FtType = uint64(mlx.MLX5DV_FLOW_MATCHER_MASK_FT_TYPE), cfg.TableType
	}
	return a
}

// CreateFlowMatcher creates a flow matcher (mlx5dv_create_flow_matcher).
// The configuration is checked first (a *ConfigError naming the field,
// then the rules of struct mlx5dv_flow_matcher_attr); a backend without
// flow steering fails with an error matching ErrNoFlowSteering.
func (c *Context) CreateFlowMatcher(cfg FlowMatcherConfig) (*FlowMatcher, error) {
	if err := checkFlowMatcher(&cfg); err != nil {
		return nil, fmt.Errorf("device: CreateFlowMatcher: %w", err)
	}
	attr := cfg.MatcherAttr()
	attr.MatchMask = unsafe.Pointer(&cfg.Mask[0]) // the backend points it at its own copy
	if err := attr.Validate(); err != nil {
		return nil, fmt.Errorf("device: CreateFlowMatcher: %w", err)
	}
	fb, ok := c.b.(FlowBackend)
	if !ok {
		return nil, fmt.Errorf("device: CreateFlowMatcher: %w", ErrNoFlowSteering)
	}
	cfg.Mask = append([]byte(nil), cfg.Mask...)
	m := &FlowMatcher{c: c, mask: len(cfg.Mask)}
	n, err := c.create("CreateFlowMatcher", []*node{c.root}, func() (string, func() error, error) {
		b, err := fb.CreateFlowMatcher(cfg)
		if err != nil {
			return "", nil, err
		}
		m.b = b
		return fmt.Sprintf("flow matcher (priority %d)", cfg.Priority), b.Close, nil
	})
	if err != nil {
		return nil, err
	}
	m.n = n
	return m, nil
}

// CreateFlow creates a steering rule under m (mlx5dv_create_flow): value
// holds the values of the mask's fields (as many bytes as the mask), and
// actions say what happens to a matching packet. A rule that delivers to
// a QP closes before that QP does.
func (m *FlowMatcher) CreateFlow(value []byte, actions ...FlowAction) (*Flow, error) {
	if len(value) != m.mask {
		return nil, fmt.Errorf("device: CreateFlow: %w", cfgErr("value", fmt.Sprintf("of %d bytes", len(value)), "as many bytes as the matcher's Mask (%d)", m.mask))
	}
	if len(actions) == 0 {
		return nil, fmt.Errorf("device: CreateFlow: %w", cfgErr("actions", nil, "at least one action"))
	}
	parents := []*node{m.n}
	bas := make([]BackendFlowAction, len(actions))
	for i, a := range actions {
		field := fmt.Sprintf("actions[%d]", i)
		switch a.Kind {
		case FlowToQP:
			if a.QP == nil || a.QP.c != m.c {
				return nil, fmt.Errorf("device: CreateFlow: %w", cfgErr(field+".QP", nil, "a QP of the matcher's context"))
			}
			parents = append(parents, a.QP.n)
			bas[i].QP = a.QP.b
		case FlowDrop, FlowTag, FlowDefaultMiss:
		default:
			return nil, fmt.Errorf("device: CreateFlow: %w", cfgErr(field+".Kind", int(a.Kind), "FlowToQP, FlowDrop, FlowTag or FlowDefaultMiss"))
		}
		bas[i].Kind, bas[i].Tag = a.Kind, a.Tag
	}
	value = append([]byte(nil), value...)
	f := &Flow{c: m.c}
	n, err := m.c.create("CreateFlow", parents, func() (string, func() error, error) {
		b, err := m.b.CreateFlow(value, bas)
		if err != nil {
			return "", nil, err
		}
		return "flow rule", b.Close, nil
	})
	if err != nil {
		return nil, err
	}
	f.n = n
	return f, nil
}

// Close destroys the matcher's rules, then the matcher.
func (m *FlowMatcher) Close() error {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	return closeNode(m.n)
}

// Close destroys the rule (ibv_destroy_flow).
func (f *Flow) Close() error {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return closeNode(f.n)
}
