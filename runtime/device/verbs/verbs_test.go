//go:build cgo

package verbs

import (
	"flag"
	"os"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// sysDevices lists /sys/class/infiniband (nil when it is missing).
func sysDevices() []os.DirEntry {
	es, _ := os.ReadDir("/sys/class/infiniband")
	return es
}

// deviceName is the device the hardware tests open: -device mlx5_0 (""
// for the first; scripts/hwcheck.sh passes its own -device).
var deviceName = flag.String("device", "", "the mlx5 device the hardware tests open (default: the first one)")

// hardware returns the opener of the device the hardware tests use, or
// skips t (saying why) when there is none.
func hardware(t *testing.T) devicetest.Opener {
	if c, err := device.Open(*deviceName); err != nil {
		t.Skipf("needs an mlx5 RDMA device (and its port up): %v", err)
	} else {
		c.Close()
	}
	return func(t *testing.T) *device.Context {
		c, err := device.Open(*deviceName)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// TestConformance runs runtime/device's conformance suite on the mlx5
// device.
func TestConformance(t *testing.T) { devicetest.Run(t, hardware(t)) }

// TestSeeds runs the seed man pages' examples (devicetest.RunSeeds) on the
// mlx5 device: signature blocks, mkey layouts and a DCI write.
func TestSeeds(t *testing.T) { devicetest.RunSeeds(t, hardware(t)) }

// TestModifyAttr: each transition carries the mask ibv_modify_qp(3)
// requires for the QP's kind.
func TestModifyAttr(t *testing.T) {
	remote := device.Endpoint{QPN: 0x42, PSN: 0x777, LID: 9}
	a := device.QPAttr{Access: mlx.IBV_ACCESS_REMOTE_WRITE, MTU: mlx.IBV_MTU_1024, Remote: remote, SQPSN: 5, RdAtomic: 1}
	for _, tc := range []struct {
		kind  device.QPKind
		state mlx.QPState
		mask  mlx.QPAttrMask
	}{
		{device.RC, mlx.IBV_QPS_INIT, mlx.IBV_QP_STATE | mlx.IBV_QP_PORT | mlx.IBV_QP_PKEY_INDEX | mlx.IBV_QP_ACCESS_FLAGS},
		{device.RC, mlx.IBV_QPS_RTR, mlx.IBV_QP_STATE | mlx.IBV_QP_PATH_MTU | mlx.IBV_QP_AV | mlx.IBV_QP_MIN_RNR_TIMER |
			mlx.IBV_QP_DEST_QPN | mlx.IBV_QP_RQ_PSN | mlx.IBV_QP_MAX_DEST_RD_ATOMIC},
		{device.RC, mlx.IBV_QPS_RTS, mlx.IBV_QP_STATE | mlx.IBV_QP_TIMEOUT | mlx.IBV_QP_RETRY_CNT | mlx.IBV_QP_RNR_RETRY |
			mlx.IBV_QP_SQ_PSN | mlx.IBV_QP_MAX_QP_RD_ATOMIC},
		{device.DCI, mlx.IBV_QPS_INIT, mlx.IBV_QP_STATE | mlx.IBV_QP_PORT | mlx.IBV_QP_PKEY_INDEX},
		{device.DCI, mlx.IBV_QPS_RTR, mlx.IBV_QP_STATE | mlx.IBV_QP_PATH_MTU},
		{device.DCT, mlx.IBV_QPS_RTR, mlx.IBV_QP_STATE | mlx.IBV_QP_PATH_MTU | mlx.IBV_QP_AV | mlx.IBV_QP_MIN_RNR_TIMER},
		{device.RC, mlx.IBV_QPS_ERR, mlx.IBV_QP_STATE},
	} {
		attr, mask := modifyAttr(tc.kind, tc.state, a)
		if mask != tc.mask || attr.QPState != tc.state {
			t.Errorf("%v -> %v: mask %v, want %v", tc.kind, tc.state, mask, tc.mask)
		}
		if err := attr.Validate(); err != nil {
			t.Errorf("%v -> %v: %v", tc.kind, tc.state, err)
		}
	}
	attr, _ := modifyAttr(device.RC, mlx.IBV_QPS_RTR, a)
	if attr.DestQPNum != 0x42 || attr.RQPsn != 0x777 || attr.AHAttr.Dlid != 9 || attr.AHAttr.IsGlobal != 0 {
		t.Errorf("RTR to %+v: %+v", remote, attr)
	}
	roce := device.Endpoint{QPN: 1, GID: [16]byte{0xfe, 0x80, 15: 1}, Ethernet: true}
	if h := ah(roce); h.IsGlobal != 1 || h.GRH.Dgid != roce.GID || h.GRH.HopLimit == 0 {
		t.Errorf("RoCE address %+v", h)
	}
}

// TestDecodeCaps reads mlx5dv_context's capability structs by the layout
// mlx5dv.h gives them.
func TestDecodeCaps(t *testing.T) {
	dv := mlx.Context{CompMask: uint64(mlx.MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD | mlx.MLX5DV_CONTEXT_MASK_DCI_STREAMS |
		mlx.MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH | mlx.MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD), MaxWRMemcpyLength: 1 << 20}
	// The bytes as a little-endian device writes the structs mlx5dv.h
	// declares, through the generated mirrors.
	copy(bytesOf(&dv.SigCaps), []byte{0x3, 0, 0, 0, 0, 0, 0, 0, 0x6, 0, 0, 0, 0x1, 0, 0x7, 0})
	copy(bytesOf(&dv.DCIStreamsCaps), []byte{4, 2})
	copy(bytesOf(&dv.CryptoCaps), []byte{0, 0, 0x6, 0, 0, 0, 0, 0, 0x1, 0, 0, 0})
	var c device.Caps
	decodeCaps(&c, &dv)
	want := device.Caps{Signature: true, SigBlock: 3, SigProt: 6, SigT10BG: 1, SigCRC: 7, DCIStreams: true,
		MaxLogNumConcurent: 4, MaxLogNumErrored: 2, MaxMemcpy: 1 << 20, Crypto: true, CryptoSingleBlock: true, CryptoMultiBlock: true}
	if c != want {
		t.Errorf("decoded %+v\nwant    %+v", c, want)
	}
	var none device.Caps
	decodeCaps(&none, &mlx.Context{SigCaps: dv.SigCaps})
	if none != (device.Caps{}) {
		t.Errorf("capabilities read outside comp_mask: %+v", none)
	}
}

// bytesOf is the memory of *p, for filling a mirror byte by byte.
func bytesOf[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}
