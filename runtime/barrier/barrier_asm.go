//go:build amd64 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x

package barrier

const supported = true

// UDMAToDeviceBarrier orders the CPU's stores to DMA memory (the WQE)
// before the stores that follow (the doorbell record), as seen by the
// device. rdma-core: udma_to_device_barrier.
func UDMAToDeviceBarrier()

// UDMAFromDeviceBarrier orders the CPU's loads of DMA memory: after it
// sees a valid CQE owner bit, the loads that follow see the rest of what
// the device wrote before. rdma-core: udma_from_device_barrier.
func UDMAFromDeviceBarrier()

// MMIOWCStart is called before writing a write-combining MMIO region (the
// BlueFlame register). rdma-core: mmio_wc_start.
func MMIOWCStart()

// MMIOFlushWrites flushes write-combining stores to the device.
// rdma-core: mmio_flush_writes.
func MMIOFlushWrites()
