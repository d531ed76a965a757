package device_test

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// The fake steers nothing, but keeps what it was asked to create, so the
// tests see what the API hands a backend and in which order it closes.
type fakeMatcher struct {
	c     *fakeCtx
	cfg   device.FlowMatcherConfig
	flows int
}

type fakeFlow struct {
	m       *fakeMatcher
	id      int
	value   []byte
	actions []device.BackendFlowAction
}

func (c *fakeCtx) CreateFlowMatcher(cfg device.FlowMatcherConfig) (device.BackendFlowMatcher, error) {
	return &fakeMatcher{c: c, cfg: cfg}, nil
}

func (m *fakeMatcher) CreateFlow(value []byte, actions []device.BackendFlowAction) (device.BackendFlow, error) {
	m.flows++
	return &fakeFlow{m: m, id: m.flows, value: value, actions: actions}, nil
}

func (m *fakeMatcher) Close() error { return m.c.closed("matcher") }
func (f *fakeFlow) Close() error    { return f.m.c.closed(fmt.Sprintf("flow %d", f.id)) }

// TestFlowSteering: a matcher and its rules reach the backend as
// configured (the matcher's struct mlx5dv_flow_matcher_attr from
// MatcherAttr; a rule's QP as the backend's QP); a rule delivering to a
// QP closes before the QP, and the matcher's rules before the matcher.
func TestFlowSteering(t *testing.T) {
	c := openFake(t)
	fc := lastFake()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	cq := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	qp := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: cq, MaxSendWR: 2, MaxSendSGE: 1}))
	mask := []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}
	m := devicetest.Must[*device.FlowMatcher](t, "CreateFlowMatcher")(c.CreateFlowMatcher(device.FlowMatcherConfig{
		TableType: mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_RX, Priority: 3, CriteriaEnable: 1, Mask: mask}))
	mask[0] = 0 // the API keeps its own copy
	toQP := devicetest.Must[*device.Flow](t, "CreateFlow")(m.CreateFlow(make([]byte, 8),
		device.FlowAction{Kind: device.FlowToQP, QP: qp}, device.FlowAction{Kind: device.FlowTag, Tag: 9}))
	devicetest.Must[*device.Flow](t, "CreateFlow")(m.CreateFlow(make([]byte, 8), device.FlowAction{Kind: device.FlowDrop}))
	if err := qp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := toQP.Close(); err != nil {
		t.Fatalf("Close of a rule its QP's Close destroyed: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"flow 1", "QP 0x" + hex(qp.QPN()), "flow 2", "matcher"}
	if !slices.Equal(fc.log, want) {
		t.Fatalf("closed %q, want %q", fc.log, want)
	}
	cfg := device.FlowMatcherConfig{TableType: mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_RX, Priority: 3, CriteriaEnable: 1}
	if a := cfg.MatcherAttr(); a.CompMask != uint64(mlx.MLX5DV_FLOW_MATCHER_MASK_FT_TYPE) || a.FtType != cfg.TableType ||
		a.Priority != 3 || a.MatchCriteriaEnable != 1 || a.Flags != 0 {
		t.Fatalf("MatcherAttr %+v", a)
	}
	if a := (&device.FlowMatcherConfig{Egress: true}).MatcherAttr(); a.Flags != 4 || a.CompMask != 0 {
		t.Fatalf("an egress NIC_RX matcher: %+v, want flags IBV_FLOW_ATTR_FLAGS_EGRESS and no comp_mask", a)
	}
}

// TestFlowSteeringRefused: each configuration no backend could create is
// a *ConfigError naming the field (EINVAL), before the backend sees it.
func TestFlowSteeringRefused(t *testing.T) {
	c := openFake(t)
	other := openFake(t)
	opd := devicetest.Must[*device.PD](t, "AllocPD")(other.AllocPD())
	ocq := devicetest.Must[*device.CQ](t, "CreateCQ")(other.CreateCQ(device.CQConfig{CQEs: 4}))
	oqp := devicetest.Must[*device.QP](t, "CreateQP")(opd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: ocq, MaxSendWR: 2, MaxSendSGE: 1}))
	eight := make([]byte, 8)
	for _, tc := range []struct {
		field string
		cfg   device.FlowMatcherConfig
	}{
		{"FlowMatcherConfig.TableType", device.FlowMatcherConfig{TableType: 5, Mask: eight}},
		{"FlowMatcherConfig.Egress", device.FlowMatcherConfig{TableType: mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_FDB, Egress: true, Mask: eight}},
		{"FlowMatcherConfig.Mask", device.FlowMatcherConfig{}},
		{"FlowMatcherConfig.Mask", device.FlowMatcherConfig{Mask: make([]byte, 12)}},
	} {
		_, err := c.CreateFlowMatcher(tc.cfg)
		var ce *device.ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%+v: %v, want a ConfigError of %s", tc.cfg, err, tc.field)
		}
	}
	m := devicetest.Must[*device.FlowMatcher](t, "CreateFlowMatcher")(c.CreateFlowMatcher(device.FlowMatcherConfig{Mask: eight}))
	for _, tc := range []struct {
		field   string
		value   []byte
		actions []device.FlowAction
	}{
		{"value", make([]byte, 16), []device.FlowAction{{Kind: device.FlowDrop}}},
		{"actions", eight, nil},
		{"actions[0].QP", eight, []device.FlowAction{{Kind: device.FlowToQP}}},
		{"actions[1].QP", eight, []device.FlowAction{{Kind: device.FlowDrop}, {Kind: device.FlowToQP, QP: oqp}}},
		{"actions[0].Kind", eight, []device.FlowAction{{Kind: 9}}},
	} {
		_, err := m.CreateFlow(tc.value, tc.actions...)
		var ce *device.ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("CreateFlow %s: %v, want a ConfigError of %s", tc.field, err, tc.field)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateFlow(eight, device.FlowAction{Kind: device.FlowDrop}); !errors.Is(err, device.ErrClosed) {
		t.Fatalf("CreateFlow on a closed matcher: %v, want ErrClosed", err)
	}
}
