//go:build cgo

package verbs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// noDeviceError is ibv_get_device_list's failure when there is no
// device: it matches device.ErrNoDevice and, through Unwrap,
// mlx5verbs.ErrNoDevice and the errno; its text (the binding's) says why.
type noDeviceError struct{ err error }

func (e *noDeviceError) Error() string        { return e.err.Error() }
func (e *noDeviceError) Unwrap() error        { return e.err }
func (e *noDeviceError) Is(target error) bool { return target == device.ErrNoDevice }

// devices lists the machine's RDMA devices by name; the caller frees
// the list.
func devices() (list *mv.Device, devs []mv.Device, err error) {
	var n int32
	list, err = mv.GetDeviceList(&n)
	if err != nil {
		if errors.Is(err, mv.ErrNoDevice) {
			return nil, nil, &noDeviceError{err}
		}
		return nil, nil, err
	}
	if n == 0 {
		mv.FreeDeviceList(list)
		return nil, nil, &noDeviceError{errors.New("ibv_get_device_list: no RDMA device: the list is empty (no device under /sys/class/infiniband)")}
	}
	return list, unsafe.Slice(list, n), nil
}

func (backend) Open(name string) (device.BackendContext, error) {
	list, devs, err := devices()
	if err != nil {
		return nil, err
	}
	defer mv.FreeDeviceList(list)
	var names []string
	for _, d := range devs {
		dn, err := mv.GetDeviceName(d)
		if err != nil {
			return nil, err
		}
		names = append(names, dn)
		if name == "" || dn == name {
			return open(d, dn)
		}
	}
	return nil, fmt.Errorf("%w called %q: the devices are %q", device.ErrNoDevice, name, names)
}

func (backend) List() ([]device.Info, error) {
	list, devs, err := devices()
	if err != nil {
		return nil, err
	}
	defer mv.FreeDeviceList(list)
	var out []device.Info
	for _, d := range devs {
		dn, err := mv.GetDeviceName(d)
		if err != nil {
			return nil, err
		}
		c, err := open(d, dn)
		if err != nil {
			out = append(out, device.Info{Name: dn, GUID: mv.GetDeviceGUID(d), Err: err})
			continue
		}
		out = append(out, c.info)
		c.Close()
	}
	return out, nil
}

// vctx is an open device.
type vctx struct {
	ctx  mv.IBVContext
	info device.Info
	devx bool // opened with MLX5DV_CONTEXT_FLAGS_DEVX (umem needs it)

	mu     sync.Mutex
	cqs    map[unsafe.Pointer]uint32 // ibv_cq * → CQN, for events
	closed bool
}

// open opens d with mlx5dv_open_device (DEVX first, for umem; plain
// otherwise) and reads its capabilities.
func open(d mv.Device, name string) (*vctx, error) {
	if mv.IsSupported(d) == 0 {
		return nil, fmt.Errorf("verbs: %s is not an mlx5 device (mlx5dv_is_supported)", name)
	}
	c := &vctx{cqs: map[unsafe.Pointer]uint32{}}
	ctx, err := mv.OpenDevice(d, &mlx.ContextAttr{Flags: mlx.MLX5DV_CONTEXT_FLAGS_DEVX})
	c.devx = err == nil
	if err != nil {
		if ctx, err = mv.OpenDevice(d, &mlx.ContextAttr{}); err != nil {
			return nil, err
		}
	}
	c.ctx = ctx
	if c.info, err = query(ctx, name, mv.GetDeviceGUID(d)); err != nil {
		mv.CloseDevice(ctx)
		return nil, err
	}
	return c, nil
}

// query reads ibv_query_device_ex and mlx5dv_query_device into Info.
func query(ctx mv.IBVContext, name string, guid uint64) (device.Info, error) {
	var ex mlx.DeviceAttrEx
	if err := mv.QueryDeviceEx(ctx, nil, &ex); err != nil {
		return device.Info{}, err
	}
	dv := mlx.Context{CompMask: uint64(mlx.MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD | mlx.MLX5DV_CONTEXT_MASK_DCI_STREAMS |
		mlx.MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH | mlx.MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD)}
	if err := mv.QueryDevice(ctx, &dv); err != nil {
		return device.Info{}, err
	}
	a := ex.OrigAttr
	caps := device.Caps{MaxQPWR: int(a.MaxQPWR), MaxSGE: int(a.MaxSGE), MaxCQE: int(a.MaxCQE),
		MaxSRQWR: int(a.MaxSRQWR), MaxSRQSGE: int(a.MaxSRQSGE),
		CQE128: true, DC: true}
	if mlx.ContextFlags(dv.Flags)&mlx.MLX5DV_CONTEXT_FLAGS_CQE_V1 != 0 {
		caps.CQEVersion = 1
	}
	decodeCaps(&caps, &dv)
	return device.Info{Name: name, GUID: guid, Caps: caps}, nil
}

// decodeCaps reads the mlx5dv_context parts the device filled (its
// comp_mask says which): struct mlx5dv_sig_caps, mlx5dv_dci_streams_caps
// and mlx5dv_crypto_caps, through their generated mirrors.
func decodeCaps(caps *device.Caps, dv *mlx.Context) {
	mask := mlx.ContextCompMask(dv.CompMask)
	if mask&mlx.MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD != 0 {
		s := dv.SigCaps
		caps.SigBlock = mlx.BlockSizeCaps(s.BlockSize)
		caps.SigProt = mlx.SigProtCaps(s.BlockProt)
		caps.SigT10BG = mlx.SigT10DIFBGCaps(s.T10DIFBG)
		caps.SigCRC = mlx.SigCRCTypeCaps(s.CRCType)
		caps.Signature = caps.SigProt != 0
	}
	if mask&mlx.MLX5DV_CONTEXT_MASK_DCI_STREAMS != 0 {
		caps.MaxLogNumConcurent = int(dv.DCIStreamsCaps.MaxLogNumConcurent)
		caps.MaxLogNumErrored = int(dv.DCIStreamsCaps.MaxLogNumErrored)
		caps.DCIStreams = caps.MaxLogNumConcurent > 0
	}
	if mask&mlx.MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH != 0 {
		caps.MaxMemcpy = dv.MaxWRMemcpyLength
	}
	if mask&mlx.MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD != 0 {
		engines := mlx.CryptoEnginesCaps(dv.CryptoCaps.CryptoEngines)
		flags := mlx.CryptoCapsFlags(dv.CryptoCaps.Flags)
		caps.Crypto = flags&mlx.MLX5DV_CRYPTO_CAPS_CRYPTO != 0
		caps.CryptoSingleBlock = engines&mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_SINGLE_BLOCK != 0
		caps.CryptoMultiBlock = engines&mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK != 0
	}
}

func (c *vctx) Info() device.Info { return c.info }

// Port reads port 1 and its GID at index 0.
func (c *vctx) Port() (device.Port, error) {
	var a mlx.PortAttr
	if err := mv.IBVQueryPort(c.ctx, 1, &a); err != nil {
		return device.Port{}, err
	}
	p := device.Port{State: a.State, MTU: a.ActiveMTU, LID: a.LID, Ethernet: a.LinkLayer == linkLayerEthernet, MaxMsgSize: a.MaxMsgSz}
	if _, err := mv.QueryGID(c.ctx, 1, 0, unsafe.Pointer(&p.GID)); err != nil {
		return device.Port{}, err
	}
	return p, nil
}

// linkLayerEthernet is IBV_LINK_LAYER_ETHERNET (verbs.h).
const linkLayerEthernet = 2

func (c *vctx) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	_, err := mv.CloseDevice(c.ctx)
	return err
}

func (c *vctx) AsyncEvent(ctx context.Context) (device.AsyncEvent, error) {
	return c.asyncEvent(ctx)
}
