// Package barrier holds the memory barriers the send path needs between
// writing a WQE, updating the doorbell record and writing the BlueFlame
// register, named after rdma-core's util/udma_barrier.h so that the code
// reads like libmlx5's. Go's own memory model covers goroutines, not a
// device reading memory by DMA or write-combining MMIO, so the fences that
// Go cannot express are tiny assembly stubs.
package barrier
