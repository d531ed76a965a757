package dma_test

import (
	"fmt"
	"log"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

// Example maps a region, hands out buffers from it and registers one as
// a memory region of a (simulated) device: a Buffer's Addr is what an SGE
// names, with the MR's lkey, and its Bytes are the same memory, which
// the garbage collector never moves.
func Example() {
	region, err := dma.Map(dma.Options{Size: 1 << 20, Lock: dma.LockBestEffort})
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	// Pinned() says whether mlock succeeded; LockBestEffort keeps the
	// region when RLIMIT_MEMLOCK (ulimit -l) is too low for it.
	_ = region.Pinned()

	ctx, err := device.Open("sim:example-dma")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	a, err := region.Alloc(3000, 64) // rounded up to a power-of-two block
	if err != nil {
		log.Fatal(err)
	}
	b, err := region.Alloc(64<<10, 4096)
	if err != nil {
		log.Fatal(err)
	}
	mr, err := pd.RegMR(b.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE)
	if err != nil {
		log.Fatal(err)
	}
	sge := mlx.SGE{Addr: b.Addr, Length: uint32(len(b.Bytes)), LKey: mr.LKey}
	fmt.Println("a:", len(a.Bytes), "bytes, 64-byte aligned:", a.Addr%64 == 0)
	fmt.Println("b: the MR's address:", sge.Addr == mr.Addr,
		"same memory as its Bytes:", uintptr(unsafe.Pointer(&b.Bytes[0])) == uintptr(b.Addr))
	fmt.Println("outstanding:", region.Outstanding())
	if err := region.Free(a); err != nil {
		log.Fatal(err)
	}
	fmt.Println("outstanding:", region.Outstanding())
	// Output:
	// a: 3000 bytes, 64-byte aligned: true
	// b: the MR's address: true same memory as its Bytes: true
	// outstanding: 2
	// outstanding: 1
}
