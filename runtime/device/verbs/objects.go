//go:build cgo

package verbs

import (
	"errors"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

type vpd struct {
	c  *vctx
	pd *mlx.IBVPD
}

func (c *vctx) AllocPD() (device.BackendPD, error) {
	pd, err := mv.AllocPD(c.ctx)
	if err != nil {
		return nil, err
	}
	return &vpd{c: c, pd: pd}, nil
}

// Opaque: the memcpy engine's metadata needs libmlx5's opaque MR of the
// PD, which its public API does not expose; memcpy work requests are not
// offered through this backend.
func (p *vpd) Opaque() sq.PD { return sq.PD{} }

func (p *vpd) Close() error { return mv.DeallocPD(p.pd) }

// The registration calls of MRs and umems: variables so that a test
// without hardware can stand in for libibverbs (life_test.go checks that
// a registered buffer stays reachable).
var (
	regMR     = mv.RegMR
	deregMR   = mv.DeregMR
	umemReg   = mv.DevxUmemReg
	umemDereg = mv.DevxUmemDereg
)

// vmr is a registered MR. It holds buf until it is deregistered: the
// device reads and writes that memory by address, which the collector
// does not see, so were buf Go memory (against cgo's rules, which forbid
// C keeping a Go pointer, but a mistake that must not turn into the
// device writing freed memory) nothing else might keep it alive.
type vmr struct {
	mr  *mlx.MR
	buf []byte
}

// RegMR registers buf at its own address. buf is mmapped memory (a
// runtime/dma buffer) or C memory: the kernel pins its pages, and cgo's
// rules allow passing it since it holds no Go pointers.
func (p *vpd) RegMR(buf []byte, access mlx.AccessFlags) (device.BackendMR, error) {
	mr, err := regMR(p.pd, unsafe.Pointer(unsafe.SliceData(buf)), uint64(len(buf)), access)
	if err != nil {
		return nil, err
	}
	return &vmr{mr: mr, buf: buf}, nil
}

func (m *vmr) Keys() (uint32, uint32) { return m.mr.LKey, m.mr.RKey }

// Close deregisters the MR, and only then lets buf go (a failed
// deregistration leaves the device with the memory, so buf stays held).
func (m *vmr) Close() error {
	if err := deregMR(m.mr); err != nil {
		return err
	}
	m.buf = nil
	return nil
}

type vmkey struct{ mk *mlx.Mkey }

func (p *vpd) CreateMkey(flags mlx.MkeyInitAttrFlags, maxEntries int) (device.BackendMkey, error) {
	mk, err := mv.CreateMkey(&mlx.MkeyInitAttr{PD: p.pd, CreateFlags: flags, MaxEntries: uint16(maxEntries)})
	if err != nil {
		return nil, err
	}
	return vmkey{mk}, nil
}

func (m vmkey) LKey() uint32 { return m.mk.LKey }

// errHidden is the answer of the two methods runtime/device does not call
// on this backend: it creates signature (and crypto) mkeys and DEKs by
// DEVX command itself (this backend is a device.DevxBackend and a
// device.PDNumberer), because libmlx5 keeps a signature mkey's PSV
// indexes (struct mlx5_sig_ctx) and a DEK's DEVX object id private.
// They are here for the device.BackendPD interface, and say so rather
// than guess.
var errHidden = errors.New("verbs: libmlx5 keeps a signature mkey's PSV indexes and a DEK's object id private; runtime/device creates both by DEVX command (PD.CreateMkey, PD.CreateDEK)")

func (m vmkey) PSVs() (uint32, uint32, error) { return 0, 0, errHidden }
func (m vmkey) Close() error                  { return mv.DestroyMkey(m.mk) }

func (p *vpd) CreateDEK(device.DEKConfig) (device.BackendDEK, error) { return nil, errHidden }

// vumem is a registered devx umem; it holds buf until deregistered, as
// vmr does.
type vumem struct {
	u   *mlx.DevxUmem
	buf []byte
}

// RegUmem registers buf as a devx umem (mlx5dv_devx_umem_reg); the
// context must have been opened with DEVX.
func (c *vctx) RegUmem(buf []byte, access mlx.AccessFlags) (device.BackendUmem, error) {
	if !c.devx {
		return nil, errors.New("verbs: RegUmem: the device was opened without MLX5DV_CONTEXT_FLAGS_DEVX (the kernel refused DEVX)")
	}
	u, err := umemReg(c.ctx, unsafe.Pointer(unsafe.SliceData(buf)), uint64(len(buf)), access)
	if err != nil {
		return nil, err
	}
	return &vumem{u: u, buf: buf}, nil
}

func (u *vumem) ID() uint32 { return u.u.UmemID }

// Close deregisters the umem (mlx5dv_devx_umem_dereg), then lets buf go.
func (u *vumem) Close() error {
	if err := umemDereg(u.u); err != nil {
		return err
	}
	u.buf = nil
	return nil
}
