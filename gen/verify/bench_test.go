package verify

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mlx5gen/mlx5gen/gen/verify/cref"
	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

const (
	benchWQEBBs = 256
	benchQPN    = 0x1234
	benchRaddr  = 0x0102030405060708
	benchRKey   = 0x11223344
	benchLKey   = 0x55667788
	benchAddr   = 0x1111222233334444
	benchLen    = 4096
)

// mmapRing maps a ring of benchWQEBBs WQEBBs outside the Go heap, as a
// send queue is.
func mmapRing(b *testing.B) unsafe.Pointer {
	mem, err := unix.Mmap(-1, 0, benchWQEBBs*mlx5dv.MLX5_SEND_WQE_BB, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Munmap(mem) })
	return unsafe.Pointer(&mem[0])
}

// wqeArgs are the values cref.BuildRDMAWrite takes as parameters; the
// ones its C loop has as constants (opcode, opmod, fm_ce_se, ds, signature,
// imm) are constants here too.
type wqeArgs struct {
	qpn        uint32
	raddr      uint64
	rkey, lkey uint32
	addr       uint64
	length     uint32
	wqebbs     uint32
}

var benchArgs = wqeArgs{benchQPN, benchRaddr, benchRKey, benchLKey, benchAddr, benchLen, benchWQEBBs}

// buildRDMAWriteGo is the C loop of cref.BuildRDMAWrite written with the
// generated encoders: WQE i moves length bytes from addr + i*length to
// raddr + i*length. Written the way gcc compiles the C loop, which Go's
// compiler does not do by itself: the loop-invariant words are converted
// to the device's byte order once, zeros are stored as zeros, the remote
// address is kept as a distance from the local one, and addresses are
// computed from the producer index rather than carried from the previous
// iteration (Go's register allocator would carry them through the stack);
// and two adjacent 32-bit fields that fill a 64-bit word are set in one
// store (the generated pair setters), which the C helpers do not do.
func buildRDMAWriteGo(ring unsafe.Pointer, n int, pi uint32, args *wqeArgs) uint32 {
	qpnDs := args.qpn<<8 | 3
	rkeyRsvd := mlx5dv.ToBE64(uint64(args.rkey) << 32)
	lengthLKey := mlx5dv.ToBE64(uint64(args.length)<<32 | uint64(args.lkey))
	delta, step := args.raddr-args.addr, uint64(args.length)
	// WQE i's address is addr + i*step: base + pi*step, with base taken
	// back to producer index 0 (wrapping; the benchmark's producer index
	// never wraps), one register less in the loop.
	base := args.addr - uint64(pi)*step
	mask, end := args.wqebbs-1, pi+uint32(n)
	for ; pi != end; pi++ {
		a := base + uint64(pi)*step
		wqe := (*[mlx5dv.MLX5_SEND_WQE_BB]byte)(unsafe.Add(ring, uintptr(pi&mask)<<mlx5dv.MLX5_SEND_WQE_SHIFT))
		ctrl := (*mlx5dv.WQECtrlSeg)(wqe[0:16])
		// Two adjacent 32-bit fields in one store where they fill a
		// 64-bit word (the pair setters).
		ctrl.SetOpmodIdxOpcodeQPNDS(uint32(uint16(pi))<<8|uint32(mlx5dv.MLX5_OPCODE_RDMA_WRITE), qpnDs)
		ctrl.SetFmCeSe(mlx5dv.MLX5_WQE_CTRL_CQ_UPDATE)
		ctrl.SetSignature(0)
		ctrl.SetImmBE(0)
		r := (*mlx5dv.WQERaddrSeg)(wqe[16:32])
		r.SetRaddr(a + delta)
		r.SetRKeyReservedBE(rkeyRsvd)
		d := (*mlx5dv.WQEDataSeg)(wqe[32:48])
		d.SetByteCountLKeyBE(lengthLKey)
		d.SetAddr(a)
	}
	return pi
}

// TestBuildLoopsAgree makes sure the two benchmark loops write the same
// bytes, so the benchmark compares equal work.
func TestBuildLoopsAgree(t *testing.T) {
	mem := make([][]byte, 2)
	for i := range mem {
		m, err := unix.Mmap(-1, 0, benchWQEBBs*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(m)
		mem[i] = m
	}
	pc := cref.BuildRDMAWrite(unsafe.Pointer(&mem[0][0]), benchWQEBBs, 300, 0xfff0, benchQPN, benchRaddr, benchRKey, benchLKey, benchAddr, benchLen)
	pg := buildRDMAWriteGo(unsafe.Pointer(&mem[1][0]), 300, 0xfff0, &benchArgs)
	if pc != pg || string(mem[0]) != string(mem[1]) {
		t.Fatalf("the C and Go loops differ (pi %d vs %d)", pc, pg)
	}
}

// BenchmarkRDMAWriteWQE builds RDMA_WRITE WQEs (ctrl + raddr + one data
// segment) into a 256-WQEBB mmapped ring: C runs the whole loop in one cgo
// call with the header's helpers, Go uses the generated encoders. ns/op is
// per WQE.
func BenchmarkRDMAWriteWQE(b *testing.B) {
	b.Run("C", func(b *testing.B) {
		ring := mmapRing(b)
		b.ReportAllocs()
		b.ResetTimer()
		cref.BuildRDMAWrite(ring, benchWQEBBs, uint64(b.N), 0, benchQPN, benchRaddr, benchRKey, benchLKey, benchAddr, benchLen)
	})
	b.Run("Go", func(b *testing.B) {
		ring := mmapRing(b)
		b.ReportAllocs()
		b.ResetTimer()
		buildRDMAWriteGo(ring, b.N, 0, &benchArgs)
	})
}
