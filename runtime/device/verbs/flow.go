//go:build cgo

package verbs

import (
	"fmt"
	"runtime"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// Flow steering with libmlx5's mlx5dv_create_flow_matcher and
// mlx5dv_create_flow (device.FlowBackend). libmlx5 copies the mask, the
// values and the actions into its command, so they live only for the
// call.

// matchParams lays out struct mlx5dv_flow_match_parameters for b: a
// size_t match_sz, then match_buf (b is a whole number of 8-byte words:
// the device API checked it).
func matchParams(b []byte) []uint64 {
	p := make([]uint64, 1+len(b)/8)
	p[0] = uint64(len(b))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&p[1])), len(b)), b)
	return p
}

type vmatcher struct{ m mv.FlowMatcher }

func (c *vctx) CreateFlowMatcher(cfg device.FlowMatcherConfig) (device.BackendFlowMatcher, error) {
	mask := matchParams(cfg.Mask)
	attr := cfg.MatcherAttr()
	// attr is Go memory that C reads a pointer out of: the mask it points
	// to must stay where it is for the call.
	var pin runtime.Pinner
	pin.Pin(&mask[0])
	defer pin.Unpin()
	attr.MatchMask = unsafe.Pointer(&mask[0])
	m, err := mv.CreateFlowMatcher(c.ctx, &attr)
	if err != nil {
		return nil, err
	}
	return &vmatcher{m}, nil
}

func (m *vmatcher) Close() error { return mv.DestroyFlowMatcher(m.m) }

// flowActionTypes are the action types of the device API's kinds.
var flowActionTypes = map[device.FlowActionKind]mlx.FlowActionType{
	device.FlowToQP:        mlx.MLX5DV_FLOW_ACTION_DEST_IBV_QP,
	device.FlowDrop:        mlx.MLX5DV_FLOW_ACTION_DROP,
	device.FlowTag:         mlx.MLX5DV_FLOW_ACTION_TAG,
	device.FlowDefaultMiss: mlx.MLX5DV_FLOW_ACTION_DEFAULT_MISS,
}

// flowActions lays out the actions as struct mlx5dv_flow_action_attr:
// the union after type holds the struct ibv_qp * or the tag.
func flowActions(actions []device.BackendFlowAction) ([]mlx.FlowActionAttr, error) {
	out := make([]mlx.FlowActionAttr, len(actions))
	for i, a := range actions {
		t, ok := flowActionTypes[a.Kind]
		if !ok {
			return nil, fmt.Errorf("verbs: flow action %d: kind %d has no mlx5dv_flow_action_type", i, a.Kind)
		}
		out[i].Type = t
		switch a.Kind {
		case device.FlowToQP:
			q, ok := a.QP.(*vqp)
			if !ok {
				return nil, fmt.Errorf("verbs: flow action %d: the QP is not this backend's", i)
			}
			*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(&out[i]), unsafe.Sizeof(uint64(0)))) = q.qp.Ptr()
		case device.FlowTag:
			out[i].SetTagValue(a.Tag)
		}
	}
	return out, nil
}

type vflow struct{ f mv.Flow }

func (m *vmatcher) CreateFlow(value []byte, actions []device.BackendFlowAction) (device.BackendFlow, error) {
	acts, err := flowActions(actions)
	if err != nil {
		return nil, err
	}
	v := matchParams(value)
	f, err := mv.CreateFlow(m.m, mv.FlowMatchParametersFrom(unsafe.Pointer(&v[0])), uint64(len(acts)), &acts[0])
	if err != nil {
		return nil, err
	}
	return &vflow{f}, nil
}

func (f *vflow) Close() error { return mv.DestroyFlow(f.f) }

var _ device.FlowBackend = (*vctx)(nil)
