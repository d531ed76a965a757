// Package sim is the simulated backend of runtime/device: importing it
// registers the prefix "sim:", so that device.Open("sim:NAME") opens the
// simulated mlx5 device NAME (runtime/sim/engine), created on first use on
// the process's fabric, where every simulated device reaches every other
// by LID or GID (with DefaultCaps; NewDevice makes one with other
// capabilities beforehand). A program runs unchanged on it: its queues are real
// memory that runtime/sq, runtime/rq and runtime/cq write and read, and
// the engine executes what the doorbells announce.
//
// The engine runs when the program polls (device.CQ.Poll and Progress
// step the fabric once, on the poller's goroutine, so tests are
// deterministic), while a completion channel waits, and, if the program
// asks, on a goroutine of its own (Fabric().Start).
package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
)

// Prefix is the device-name prefix of the simulated backend.
const Prefix = "sim:"

// DefaultName is the device "sim:" alone opens.
const DefaultName = "sim0"

func init() { device.Register(Prefix, backend{}) }

var fabric struct {
	once sync.Once
	f    *engine.Fabric
}

// Fabric returns the process's simulated fabric: Start runs its engine on
// a goroutine, Step and Drain run it on the caller's.
func Fabric() *engine.Fabric {
	fabric.once.Do(func() { fabric.f = engine.NewFabric() })
	return fabric.f
}

type backend struct{}

// Open opens the simulated device the name after "sim:" names (DefaultName
// when empty), creating it on the fabric the first time.
func (backend) Open(name string) (device.BackendContext, error) {
	dev, err := deviceFor(name)
	if err != nil {
		return nil, err
	}
	return &simCtx{name: Prefix + dev.Name(), d: dev}, nil
}

// DefaultCaps are the capabilities of a device Open creates: the engine's
// defaults with the multi-block AES-XTS engine, which ConnectX-7 class
// devices report alongside the single-block one [ledger: crypto-engine].
func DefaultCaps() engine.Caps {
	c := engine.DefaultCaps
	c.CryptoMultiBlock = true
	return c
}

// NewDevice creates the simulated device NAME ("sim:NAME" or NAME) with
// caps on the process's fabric, for a program that wants other
// capabilities than DefaultCaps (a single-block AES-XTS engine, say);
// device.Open("sim:NAME") then opens it. A device of that name must not
// exist yet.
func NewDevice(name string, caps engine.Caps) (*engine.Device, error) {
	n, err := deviceName(name)
	if err != nil {
		return nil, err
	}
	d, err := Fabric().NewDeviceCaps(n, caps)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return d, nil
}

func deviceName(name string) (string, error) {
	n := strings.TrimPrefix(name, Prefix)
	if n == "" {
		n = DefaultName
	}
	if strings.ContainsAny(n, " \t\n/") {
		return "", fmt.Errorf("sim: %q: a simulated device name has no spaces or slashes", name)
	}
	return n, nil
}

func deviceFor(name string) (*engine.Device, error) {
	n, err := deviceName(name)
	if err != nil {
		return nil, err
	}
	f := Fabric()
	if d := f.Device(n); d != nil {
		return d, nil
	}
	d, err := f.NewDeviceCaps(n, DefaultCaps())
	if err != nil {
		if d := f.Device(n); d != nil { // another goroutine made it first
			return d, nil
		}
		return nil, fmt.Errorf("sim: %w", err)
	}
	return d, nil
}

// List describes the simulated devices opened so far, or, before any, the
// one "sim:" would open (without making it).
func (backend) List() ([]device.Info, error) {
	var out []device.Info
	for _, d := range Fabric().Devices() {
		out = append(out, info(Prefix+d.Name(), d.Caps(), d.LID()))
	}
	if len(out) == 0 {
		out = append(out, info(Prefix+DefaultName, DefaultCaps(), 0))
	}
	return out, nil
}

func info(name string, c engine.Caps, lid uint16) device.Info {
	return device.Info{Name: name, GUID: 0x5eed000000000000 | uint64(lid), Caps: device.Caps{
		MaxQPWR: c.MaxQPWR, MaxSGE: c.MaxSGE, MaxCQE: c.MaxCQE, MaxInlineData: c.MaxInlineData,
		MaxSRQWR: c.MaxSRQWR, MaxSRQSGE: c.MaxSGE, // CreateSRQ refuses more
		CQE128: true, CQEVersion: 0, DC: true,
		Signature: true,
		SigProt:   mlx.MLX5DV_SIG_PROT_CAP_T10DIF | mlx.MLX5DV_SIG_PROT_CAP_CRC,
		SigT10BG:  mlx.MLX5DV_SIG_T10DIF_BG_CAP_CRC | mlx.MLX5DV_SIG_T10DIF_BG_CAP_CSUM,
		SigCRC:    mlx.MLX5DV_SIG_CRC_TYPE_CAP_CRC32 | mlx.MLX5DV_SIG_CRC_TYPE_CAP_CRC32C | mlx.MLX5DV_SIG_CRC_TYPE_CAP_CRC64_XP10,
		SigBlock: mlx.MLX5DV_BLOCK_SIZE_CAP_512 | mlx.MLX5DV_BLOCK_SIZE_CAP_520 | mlx.MLX5DV_BLOCK_SIZE_CAP_4048 |
			mlx.MLX5DV_BLOCK_SIZE_CAP_4096 | mlx.MLX5DV_BLOCK_SIZE_CAP_4160,
		// Every engine takes one data unit per mkey; the multi-block one
		// more (rdma-core tests/test_mlx5_crypto.py asserts a device
		// with MULTI_BLOCK reports SINGLE_BLOCK too).
		Crypto: true, CryptoSingleBlock: true, CryptoMultiBlock: c.CryptoMultiBlock,
		DCIStreams: true, MaxLogNumConcurent: log2(c.MaxDCIStreams), MaxLogNumErrored: log2(c.MaxErrStreams),
		MaxMemcpy: c.MaxMemcpy, MkeyTag: true,
	}}
}

func log2(n int) int {
	l := 0
	for 1<<(l+1) <= n {
		l++
	}
	return l
}

// simCtx is an open simulated device.
type simCtx struct {
	name string
	d    *engine.Device
	mu   sync.Mutex
	ids  uint32
}

func (c *simCtx) Info() device.Info { return info(c.name, c.d.Caps(), c.d.LID()) }

func (c *simCtx) Port() (device.Port, error) {
	return device.Port{State: mlx.IBV_PORT_ACTIVE, MTU: mlx.IBV_MTU_4096, LID: c.d.LID(), GID: c.d.GID(),
		MaxMsgSize: c.d.Caps().MaxMsgSize}, nil
}

func (c *simCtx) Close() error { return nil }

func (c *simCtx) AsyncEvent(ctx context.Context) (device.AsyncEvent, error) {
	ev, err := c.d.NextEvent(ctx)
	if err != nil {
		return device.AsyncEvent{}, err
	}
	return device.AsyncEvent{Type: ev.Type, QPN: ev.QPN, CQN: ev.CQN, SRQN: ev.SRQN, Port: 1}, nil
}

// umem is a devx umem: the engine has no use for it but its id.
type umem struct{ id uint32 }

func (u umem) ID() uint32   { return u.id }
func (u umem) Close() error { return nil }

func (c *simCtx) RegUmem(buf []byte, _ mlx.AccessFlags) (device.BackendUmem, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("sim: reg_umem: an empty buffer")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids++
	return umem{id: c.ids}, nil
}
