package device

import (
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/devxcmd"
)

// Signature and crypto mkeys, and DEKs, are created by the API itself
// with DEVX commands when the backend runs them (DevxBackend) and knows
// the PD's number (PDNumberer): CREATE_PSV twice and CREATE_MKEY for a
// mkey, CREATE_GENERAL_OBJECT for a DEK, each exactly as libmlx5 builds
// it (runtime/internal/devxcmd). libmlx5 creates the same objects with
// the same commands but keeps a signature mkey's PSV indexes and a DEK's
// object id private, and the SET_PSV and crypto BSF runtime/sq writes
// need both. The same code runs on every DEVX backend, so the simulator
// receives every byte hardware would.
//
// The device's capabilities (HCACaps) are checked first, so a missing
// feature is an error naming it rather than a device's status.
//
// Plain indirect mkeys (no BSF) still go to the backend's CreateMkey
// (mlx5dv_create_mkey on hardware): nothing of theirs is hidden.

// devxPD returns the DEVX backend and the PD's number when the API
// creates objects of pd by command; ok false when the backend cannot.
func (pd *PD) devxPD() (d DevxBackend, pdn uint32, ok bool, err error) {
	d, isDevx := pd.c.b.(DevxBackend)
	if _, numbered := pd.b.(PDNumberer); !isDevx || !numbered {
		return nil, 0, false, nil
	}
	pdn, err = pd.PDN()
	return d, pdn, err == nil, err
}

// devxCreate runs a create command whose output is outLen bytes; a
// failed command is a *DevxError naming what.
func devxCreate(d DevxBackend, what string, in []byte, outLen int) (BackendDevxObj, []byte, error) {
	out := make([]byte, outLen)
	b, err := d.DevxObjCreate(in, out)
	if err = devxResult("DevxObjCreate", in, out, err); err != nil {
		if b != nil {
			b.Close()
		}
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if b == nil {
		return nil, nil, fmt.Errorf("%s: the backend returned no object and no error", what)
	}
	return b, out, nil
}

// checkMkeyCaps refuses a signature or crypto mkey the device cannot
// make, as mlx5dv_create_mkey does (EOPNOTSUPP), naming the capability.
func checkMkeyCaps(h HCACaps, flags mlx.MkeyInitAttrFlags) error {
	if flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0 && !h.BlockSignature {
		return lacks("MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE", "no block signature offload (QUERY_HCA_CAP: sho and sigerr_domain_and_sig_type not both set)")
	}
	if flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO != 0 && !h.AESXTS() {
		return lacks("MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO", "no AES-XTS engine (QUERY_HCA_CAP: aes_xts_single_block_le_tweak and aes_xts_multi_block_be_tweak clear)")
	}
	return nil
}

// devxMkey is a mkey the API created by command, with its PSVs.
type devxMkey struct {
	mkey      BackendDevxObj
	psv       []BackendDevxObj // memory, wire: a signature mkey's only
	key       uint32
	mem, wire uint32
}

// createDevxMkey creates a signature mkey's memory and wire PSVs (one
// CREATE_PSV each, as libmlx5 does), then the mkey.
func createDevxMkey(d DevxBackend, pdn uint32, flags mlx.MkeyInitAttrFlags, maxEntries int) (*devxMkey, error) {
	m := &devxMkey{}
	spec := devxcmd.Mkey{PDN: pdn, MaxEntries: maxEntries,
		Signature:        flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0,
		Crypto:           flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO != 0,
		RemoteInvalidate: flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE != 0}
	if spec.Signature {
		for _, name := range []string{"memory PSV", "wire PSV"} {
			idx, err := m.addPSV(d, pdn, name)
			if err != nil {
				return nil, errors.Join(err, m.closePSVs())
			}
			if name == "memory PSV" {
				m.mem = idx
			} else {
				m.wire = idx
			}
		}
	}
	in, err := devxcmd.CreateMkey(spec)
	if err != nil {
		return nil, errors.Join(err, m.closePSVs())
	}
	b, out, err := devxCreate(d, "CREATE_MKEY", in, devxcmd.CreateMkeyOutLen)
	if err != nil {
		return nil, errors.Join(err, m.closePSVs())
	}
	idx, err := devxcmd.MkeyIndex(out)
	if err != nil {
		return nil, errors.Join(err, b.Close(), m.closePSVs())
	}
	m.mkey, m.key = b, devxcmd.MkeyKey(idx)
	return m, nil
}

// addPSV creates one PSV and returns its index.
func (m *devxMkey) addPSV(d DevxBackend, pdn uint32, name string) (uint32, error) {
	in, err := devxcmd.CreatePSV(pdn)
	if err != nil {
		return 0, err
	}
	b, out, err := devxCreate(d, name+": CREATE_PSV", in, devxcmd.CreatePSVOutLen)
	if err != nil {
		return 0, err
	}
	m.psv = append(m.psv, b)
	idx, err := devxcmd.PSVIndex(out)
	return idx, err
}

func (m *devxMkey) LKey() uint32 { return m.key }

func (m *devxMkey) PSVs() (uint32, uint32, error) {
	if len(m.psv) != 2 {
		return 0, 0, errors.New("the mkey was created without MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE: it has no PSVs")
	}
	return m.mem, m.wire, nil
}

// Close destroys the mkey, then its PSVs, newest first: the reverse of
// creation, so no PSV goes while the mkey whose BSF names it is there
// (libmlx5's mlx5dv_destroy_mkey destroys the PSVs first; the device
// accepts either order, and this one needs no assumption about it). A
// mkey the device would not destroy keeps its PSVs.
func (m *devxMkey) Close() error {
	if err := m.mkey.Close(); err != nil {
		return fmt.Errorf("mkey %#x: %w; its PSVs stay", m.key, err)
	}
	return m.closePSVs()
}

// closePSVs destroys the PSVs created so far, newest first.
func (m *devxMkey) closePSVs() error {
	var errs []error
	for i := len(m.psv) - 1; i >= 0; i-- {
		if err := m.psv[i].Close(); err != nil {
			errs = append(errs, fmt.Errorf("PSV: %w", err))
		}
	}
	m.psv = nil
	return errors.Join(errs...)
}

// checkDEKCaps refuses a DEK the device cannot make, as
// mlx5dv_dek_create does, naming the capability.
func checkDEKCaps(h HCACaps) error {
	switch {
	case !h.AESXTS():
		return lacks("DEK", "no AES-XTS engine (QUERY_HCA_CAP: aes_xts_single_block_le_tweak and aes_xts_multi_block_be_tweak clear)")
	case !h.DEKObjects:
		return lacks("DEK", "no DEK general objects (QUERY_HCA_CAP: general_obj_types lacks bit MLX5_OBJ_TYPE_DEK, 0xc)")
	case h.WrappedImportOnly:
		return lacks("plaintext DEK", "the device takes keys wrapped under a crypto login only (crypto_caps.wrapped_import_method has AES); this API loads plaintext keys and offers no crypto login (mlx5dv_crypto_login(3))")
	}
	return nil
}

// devxDEK is a DEK the API created by command.
type devxDEK struct {
	obj BackendDevxObj
	id  uint32
}

// createDevxDEK creates the DEK of cfg (validated) on the PD pdn.
func createDevxDEK(d DevxBackend, pdn uint32, cfg *DEKConfig) (*devxDEK, error) {
	a := cfg.InitAttr()
	in, err := devxcmd.CreateDEK(devxcmd.DEK{PDN: pdn, Size256: cfg.KeySize == mlx.MLX5DV_CRYPTO_KEY_SIZE_256,
		HasKeytag: cfg.HasKeytag, Opaque: cfg.Opaque, Key: a.Key})
	if err != nil {
		return nil, err
	}
	b, out, err := devxCreate(d, "CREATE_GENERAL_OBJECT (DEK)", in, devxcmd.CreateDEKOutLen)
	if err != nil {
		return nil, err
	}
	id, err := devxcmd.ObjID(out)
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return &devxDEK{obj: b, id: id}, nil
}

func (k *devxDEK) ObjectID() uint32 { return k.id }
func (k *devxDEK) Close() error     { return k.obj.Close() }
