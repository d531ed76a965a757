//go:build amd64 || arm64

package barrier

// UDMAToDeviceBarrier orders the CPU's stores to DMA memory (the WQE)
// before the stores that follow (the doorbell record), as seen by the
// device. rdma-core: udma_to_device_barrier.
func UDMAToDeviceBarrier()

// MMIOWCStart is called before writing a write-combining MMIO region (the
// BlueFlame register). rdma-core: mmio_wc_start.
func MMIOWCStart()

// MMIOFlushWrites flushes write-combining stores to the device.
// rdma-core: mmio_flush_writes.
func MMIOFlushWrites()
