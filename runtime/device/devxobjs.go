package device

import (
	"errors"
	"fmt"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/devxcmd"
)

// On a backend with DEVX (DevxBackend, and PDs that report their number),
// the API makes mkeys, their PSVs and DEKs itself, with the commands
// libmlx5 sends for mlx5dv_create_mkey and mlx5dv_dek_create
// (runtime/internal/devxcmd): libmlx5 keeps a signature mkey's PSV
// indexes and a DEK's object id private, and the send queue writer needs
// both (sq.Mkey.MemPSV and WirePSV for SET_PSV, sq.DEK.ObjectID for the
// crypto BSF). Every DEVX backend takes the same bytes: the hardware
// through mlx5dv_devx_obj_create, the simulator by executing them, so CI
// runs every byte a device receives. A backend without DEVX creates them
// its own way (BackendPD.CreateMkey, CreateDEK).

// devxFor returns the DEVX backend and the PD number to create objects
// with, or ok false when pd's backend has no DEVX.
func (pd *PD) devxFor() (d DevxBackend, pdn uint32, ok bool, err error) {
	d, ok1 := pd.c.b.(DevxBackend)
	n, ok2 := pd.b.(PDNumberer)
	if !ok1 || !ok2 {
		return nil, 0, false, nil
	}
	pdn, err = n.PDN()
	return d, pdn, err == nil, err
}

// devxCreate runs one create command and returns its object.
func devxCreate(d DevxBackend, op string, c devxcmd.Cmd, err error) (BackendDevxObj, error) {
	if err != nil {
		return nil, err
	}
	b, err := d.DevxObjCreate(c.In, c.Out)
	if err = devxResult(op, c.In, c.Out, err); err != nil {
		if b != nil {
			b.Close()
		}
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%s: the backend returned no object and no error", op)
	}
	return b, nil
}

// devxMkey is an mkey made by CREATE_MKEY, with the two PSVs CREATE_PSV
// made for it when it has a signature.
type devxMkey struct {
	key       uint32
	obj       BackendDevxObj
	psvs      []BackendDevxObj // memory, wire
	mem, wire uint32
}

func (m *devxMkey) LKey() uint32 { return m.key }

func (m *devxMkey) PSVs() (uint32, uint32, error) {
	if len(m.psvs) != 2 {
		return 0, 0, errors.New("the mkey has no signature PSVs")
	}
	return m.mem, m.wire, nil
}

// Close destroys the mkey, then its PSVs, as mlx5dv_destroy_mkey does.
func (m *devxMkey) Close() error {
	if err := m.obj.Close(); err != nil {
		return err
	}
	var errs []error
	for _, p := range m.psvs {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// createMkey makes the backend mkey of CreateMkey: by DEVX commands when
// the backend has DEVX, else by the backend.
func (pd *PD) createMkey(flags mlx.MkeyInitAttrFlags, maxEntries int) (BackendMkey, error) {
	d, pdn, ok, err := pd.devxFor()
	if err != nil {
		return nil, err
	}
	if !ok {
		return pd.b.CreateMkey(flags, maxEntries)
	}
	const op = "CreateMkey"
	m := &devxMkey{}
	if flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0 {
		for range 2 {
			c, err := devxcmd.CreatePSV(pdn)
			p, err := devxCreate(d, op, c, err)
			if err == nil {
				m.psvs = append(m.psvs, p)
				var ix uint32
				if ix, err = devxcmd.PSVIndex(c.Out); err == nil {
					m.mem, m.wire = m.wire, ix
				}
			}
			if err != nil {
				closeAll(m.psvs)
				return nil, fmt.Errorf("CREATE_PSV: %w", err)
			}
		}
	}
	c, err := devxcmd.CreateMkey(pdn, flags, maxEntries)
	if m.obj, err = devxCreate(d, op, c, err); err == nil {
		m.key, err = devxcmd.MkeyKey(c.Out)
	}
	if err != nil {
		if m.obj != nil {
			m.obj.Close()
		}
		closeAll(m.psvs)
		return nil, fmt.Errorf("CREATE_MKEY: %w", err)
	}
	return m, nil
}

func closeAll(objs []BackendDevxObj) {
	for _, o := range objs {
		o.Close()
	}
}

// devxDEK is a DEK made by CREATE_GENERAL_OBJECT.
type devxDEK struct {
	id  uint32
	obj BackendDevxObj
}

func (k *devxDEK) ObjectID() uint32 { return k.id }
func (k *devxDEK) Close() error     { return k.obj.Close() }

// createDEK makes the backend DEK of CreateDEK: a plaintext key import by
// DEVX when the backend has DEVX, else by the backend. A wrapped import
// (crypto login) is refused before: DEKConfig has no way to ask for one.
func (pd *PD) createDEK(cfg *DEKConfig) (BackendDEK, error) {
	d, pdn, ok, err := pd.devxFor()
	if err != nil {
		return nil, err
	}
	if !ok {
		return pd.b.CreateDEK(*cfg)
	}
	a := cfg.InitAttr()
	c, err := devxcmd.CreateDEK(pdn, &a)
	obj, err := devxCreate(d, "CreateDEK", c, err)
	if err != nil {
		return nil, fmt.Errorf("CREATE_GENERAL_OBJECT (DEK): %w", err)
	}
	id, err := devxcmd.ObjID(c.Out)
	if err != nil {
		obj.Close()
		return nil, err
	}
	return &devxDEK{id: id, obj: obj}, nil
}

// offloadCaps refuses, at create time, a signature or crypto object on a
// device whose capabilities (Caps, from mlx5dv_query_device on hardware)
// lack the offload, as libmlx5 does with EOPNOTSUPP.
func (c *Context) offloadCaps(flags mlx.MkeyInitAttrFlags) error {
	caps := c.info.Caps
	switch {
	case flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0 && !caps.Signature:
		return fmt.Errorf("%q reports no signature offload (Caps.Signature, MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD): %w", c.name, syscall.EOPNOTSUPP)
	case flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO != 0 && !caps.Crypto:
		return fmt.Errorf("%q reports no crypto offload (Caps.Crypto, MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD): %w", c.name, syscall.EOPNOTSUPP)
	}
	return nil
}
