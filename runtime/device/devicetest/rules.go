package devicetest

import (
	"errors"
	"sort"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// EntryPoints maps every method of the device API that creates,
// registers or modifies an object ("PD.CreateQP") to the C functions it
// stands for: it runs their generated validators before the backend sees
// the call. runtime/device's TestEntryPointsMapped fails for a method
// missing here, and for an argument rule of these functions that has
// neither a case in RuleCases nor a device_api note in its descriptor
// (spec/api; mlx5rules.RuleInfo.DeviceAPI) saying why no Go value can
// break it.
var EntryPoints = map[string][]string{
	"Context.AllocPD":           {"ibv_alloc_pd"},
	"Context.CreateCompChannel": {"ibv_create_comp_channel"},
	"Context.CreateCQ":          {"ibv_create_cq_ex", "mlx5dv_create_cq"},
	"Context.RegUmem":           {"mlx5dv_devx_umem_reg"},
	"PD.RegMR":                  {"ibv_reg_mr"},
	"PD.CreateQP":               {"mlx5dv_create_qp"},
	"PD.CreateSRQ":              {"ibv_create_srq"},
	"PD.CreateMkey":             {"mlx5dv_create_mkey"},
	"PD.CreateDEK":              {"mlx5dv_dek_create"},
	"QP.Modify":                 {"ibv_modify_qp"},
	"Context.CreateFlowMatcher": {"mlx5dv_create_flow_matcher"},
	"FlowMatcher.CreateFlow":    {"mlx5dv_create_flow"},
	// The DEVX rules are use and info rules: the command bytes are the
	// device's, and the API checks the buffer sizes itself.
	"DevxObj.Modify": {"mlx5dv_devx_obj_modify"},
}

// RuleCase calls an entry point with a value that keeps (bad false) or
// breaks (bad true) one rule.
type RuleCase func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error

// RuleCases are the argument rules of the entry points' C functions a
// call of the Go API can break, each with a call that keeps it and one
// that breaks it.
var RuleCases = map[string]RuleCase{
	"create_qp.create_flags": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		return createQP(t, c, pd, func(cfg *device.QPConfig) {
			cfg.CreateFlags = pick(bad, 0x100, mlx.MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE)
		})
	},
	"create_qp.send_ops_flags": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		return createQP(t, c, pd, func(cfg *device.QPConfig) {
			cfg.MlxSendOps = pick(bad, 0x20, mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE)
		})
	},
	"create_qp.dci_streams.dci_only": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		srq, err := pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer srq.Close()
		cq := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
		defer cq.Close()
		cfg := device.QPConfig{Kind: device.DCT, SendCQ: cq, SRQ: srq, DCAccessKey: 0x1234}
		if bad {
			cfg.LogNumConcurent = 1
		}
		return createQPClose(pd, cfg)
	},
	"dv_create_cq.cqe_size": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		q, err := c.CreateCQ(device.CQConfig{CQEs: 4, CQESize: pick(bad, 96, 64)})
		if err == nil {
			err = q.Close()
		}
		return err
	},
	"reg_mr.access": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		mr, err := pd.RegMR(Buffer(t, 64), pick[mlx.AccessFlags](bad, 0xffffffff, mlx.IBV_ACCESS_LOCAL_WRITE))
		if err == nil {
			err = mr.Close()
		}
		return err
	},
	"umem.access": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		u, err := c.RegUmem(Buffer(t, 4096), pick[mlx.AccessFlags](bad, 1<<12, mlx.IBV_ACCESS_LOCAL_WRITE))
		if err == nil {
			err = u.Close() // before its buffer's region closes
		}
		return err
	},
	"create_mkey.create_flags": func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
		if bad {
			flags |= 0x40
		}
		mk, err := pd.CreateMkey(flags, 4)
		if err == nil {
			err = mk.Close()
		}
		return err
	},
	"dek.key_size":       dekCase(func(cfg *device.DEKConfig) { cfg.KeySize = 7 }),
	"dek.key_purpose":    dekCase(func(cfg *device.DEKConfig) { cfg.Purpose = 7 }),
	"modify_qp.qp_state": modifyCase(func(s *mlx.QPState, a *device.QPAttr) { *s = 99 }),
	"modify_qp.access_flags": modifyCase(func(s *mlx.QPState, a *device.QPAttr) {
		a.Access |= 1 << 12
	}),
}

func pick[T any](bad bool, b, good T) T {
	if bad {
		return b
	}
	return good
}

// createQP creates (and closes) an RC QP changed by set.
func createQP(t *testing.T, c *device.Context, pd *device.PD, set func(*device.QPConfig)) error {
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	defer q.Close()
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}
	set(&cfg)
	return createQPClose(pd, cfg)
}

func createQPClose(pd *device.PD, cfg device.QPConfig) error {
	qp, err := pd.CreateQP(cfg)
	if err == nil {
		err = qp.Close()
	}
	return err
}

// dekCase creates a 128-bit key, with the bad change applied when bad.
func dekCase(change func(*device.DEKConfig)) RuleCase {
	return func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		cfg := device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_128, Key: make([]byte, 32)}
		if bad {
			change(&cfg)
		}
		d, err := pd.CreateDEK(cfg)
		if err == nil {
			err = d.Close()
		}
		return err
	}
}

// modifyCase moves a new RC QP from RESET to INIT with the bad change
// applied when bad.
func modifyCase(change func(*mlx.QPState, *device.QPAttr)) RuleCase {
	return func(t *testing.T, c *device.Context, pd *device.PD, bad bool) error {
		q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
		defer q.Close()
		qp := Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}))
		defer qp.Close()
		state, attr := mlx.IBV_QPS_INIT, device.QPAttr{Access: device.DefaultAccess}
		if bad {
			change(&state, &attr)
		}
		return qp.Modify(state, attr)
	}
}

// testRules runs every rule case through the API: the good call does not
// break the rule (a backend may still refuse it for a capability it
// lacks), the bad one fails with the rule's *mlx5dv.RuleError, wrapping
// its errno, before the backend sees it.
func testRules(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	ids := make([]string, 0, len(RuleCases))
	for id := range RuleCases {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			var re *mlx.RuleError
			if err := RuleCases[id](t, c, pd, false); errors.As(err, &re) && re.Rule == id {
				t.Errorf("good: %v", err)
			}
			err := RuleCases[id](t, c, pd, true)
			switch {
			case !errors.As(err, &re):
				t.Fatalf("bad: %v, want a *mlx5dv.RuleError of rule %s", err, id)
			case re.Rule != id:
				t.Errorf("bad: rule %s (%v), want %s", re.Rule, err, id)
			case !errors.Is(err, re.Errno) || re.Errno == 0:
				t.Errorf("bad: %v does not wrap its errno %v", err, re.Errno)
			}
		})
	}
}
