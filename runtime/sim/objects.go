package sim

import (
	"fmt"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// simPD is a protection domain, with the opaque MR memcpy's metadata
// names (the engine does not read it, as the device's own buffer).
type simPD struct {
	c      *simCtx
	pdn    uint32
	opaque *dma.Region
	okey   uint32
}

func (c *simCtx) AllocPD() (device.BackendPD, error) {
	pdn, err := c.d.AllocPD()
	if err != nil {
		return nil, err
	}
	r, err := dma.Map(dma.Options{Size: 4096, Lock: dma.LockBestEffort})
	if err != nil {
		c.d.DeallocPD(pdn)
		return nil, err
	}
	b, _ := r.Alloc(64, 64)
	key, err := c.d.RegMR(pdn, b.Bytes, b.Addr, mlx.IBV_ACCESS_LOCAL_WRITE)
	if err != nil {
		r.Close()
		c.d.DeallocPD(pdn)
		return nil, err
	}
	return &simPD{c: c, pdn: pdn, opaque: r, okey: key}, nil
}

func (p *simPD) Opaque() sq.PD { return sq.PD{OpaqueLKey: p.okey, OpaqueAddr: p.opaque.Addr()} }

func (p *simPD) Close() error {
	p.c.d.DeregMR(p.okey)
	p.opaque.Close()
	return p.c.d.DeallocPD(p.pdn)
}

type simMR struct {
	d   *engine.Device
	key uint32
}

func (p *simPD) RegMR(buf []byte, access mlx.AccessFlags) (device.BackendMR, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("sim: reg_mr: an empty buffer")
	}
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	key, err := p.c.d.RegMR(p.pdn, buf, addr, access)
	if err != nil {
		return nil, err
	}
	return &simMR{d: p.c.d, key: key}, nil
}

func (m *simMR) Keys() (uint32, uint32) { return m.key, m.key }
func (m *simMR) Close() error           { return m.d.DeregMR(m.key) }

// simMkey is an indirect mkey of the device's mkey table.
type simMkey struct {
	d   *engine.Device
	key uint32
}

func (p *simPD) CreateMkey(flags mlx.MkeyInitAttrFlags, maxEntries int) (device.BackendMkey, error) {
	f := p.c.d.Fabric()
	f.Lock()
	defer f.Unlock()
	key, err := p.c.d.Mkeys().Create(p.pdn, flags, maxEntries)
	if err != nil {
		return nil, err
	}
	return &simMkey{d: p.c.d, key: key}, nil
}

func (m *simMkey) LKey() uint32 { return m.key }

// PSVs returns the memory and wire PSV indexes of a signature mkey (what
// sq.Mkey's MemPSV and WirePSV need for SET_PSV work requests).
func (m *simMkey) PSVs() (mem, wire uint32, err error) {
	f := m.d.Fabric()
	f.Lock()
	defer f.Unlock()
	return m.d.Mkeys().PSVs(m.key)
}

func (m *simMkey) Close() error {
	f := m.d.Fabric()
	f.Lock()
	defer f.Unlock()
	return m.d.Mkeys().Destroy(m.key)
}

// simDEK is a data encryption key of the device's mkey table.
type simDEK struct {
	d  *engine.Device
	id uint32
}

// CreateDEK loads a plaintext AES-XTS key, with its keytag if it has one
// (the opaque bytes are metadata the engine does not read).
func (p *simPD) CreateDEK(attr device.DEKConfig) (device.BackendDEK, error) {
	var tag []byte
	if attr.HasKeytag {
		tag = attr.Keytag[:]
	}
	f := p.c.d.Fabric()
	f.Lock()
	defer f.Unlock()
	id, err := p.c.d.Mkeys().CreateDEK(attr.Key, tag)
	if err != nil {
		return nil, err
	}
	return &simDEK{d: p.c.d, id: id}, nil
}

func (k *simDEK) ObjectID() uint32 { return k.id }

func (k *simDEK) Close() error {
	f := k.d.Fabric()
	f.Lock()
	defer f.Unlock()
	return k.d.Mkeys().DestroyDEK(k.id)
}
