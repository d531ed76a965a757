// Package cref calls the static inline helpers of the installed
// infiniband/mlx5dv.h through cgo, so that tests can compare the generated
// Go encoders with rdma-core's own C byte for byte. It needs cgo and
// libibverbs-dev's headers (no library is linked: the helpers are inline).
package cref

/*
#cgo CFLAGS: -O2
#cgo amd64 CFLAGS: -mssse3
#include <string.h>
#include <infiniband/mlx5dv.h>

static void set_ctrl(void *b, uint16_t pi, uint8_t opcode, uint8_t opmod, uint32_t qpn,
		     uint8_t fm_ce_se, uint8_t ds, uint8_t signature, uint32_t imm) {
	mlx5dv_set_ctrl_seg(b, pi, opcode, opmod, qpn, fm_ce_se, ds, signature, imm);
}
static void set_data(void *b, uint32_t length, uint32_t lkey, uint64_t addr) {
	mlx5dv_set_data_seg(b, length, lkey, (uintptr_t)addr);
}
static void set_dgram(void *b, uint64_t key, uint32_t dqp_dct, uint8_t ext, uint8_t stat_rate_sl,
		      uint8_t fl_mlid, uint16_t rlid, void *rmac, uint8_t tclass, uint8_t hop_limit,
		      uint32_t grh_gid_fl, void *rgid) {
	mlx5dv_set_dgram_seg(b, key, dqp_dct, ext, stat_rate_sl, fl_mlid, rlid, rmac, tclass,
			     hop_limit, grh_gid_fl, rgid);
}
static void set_eth(void *b, uint8_t cs_flags, uint16_t mss, uint16_t inline_hdr_sz, void *hdr) {
	mlx5dv_set_eth_seg(b, cs_flags, mss, inline_hdr_sz, hdr);
}
#if defined(__SSE3__) && defined(__SSSE3__)
#define HAVE_X86 1
static void x86_set_ctrl(void *b, uint16_t pi, uint8_t opcode, uint8_t opmod, uint32_t qpn,
			 uint8_t fm_ce_se, uint8_t ds, uint8_t signature, uint32_t imm) {
	mlx5dv_x86_set_ctrl_seg(b, pi, opcode, opmod, qpn, fm_ce_se, ds, signature, imm);
}
static void x86_set_data(void *b, uint32_t length, uint32_t lkey, uint64_t addr) {
	mlx5dv_x86_set_data_seg(b, length, lkey, (uintptr_t)addr);
}
#else
#define HAVE_X86 0
static void x86_set_ctrl(void *b, uint16_t pi, uint8_t opcode, uint8_t opmod, uint32_t qpn,
			 uint8_t fm_ce_se, uint8_t ds, uint8_t signature, uint32_t imm) {}
static void x86_set_data(void *b, uint32_t length, uint32_t lkey, uint64_t addr) {}
#endif
static int have_x86(void) { return HAVE_X86; }

// build_rdma_write writes n RDMA_WRITE WQEs (ctrl + raddr + one data
// segment) into a ring of wqebbs 64-byte WQEBBs with the header's helpers,
// starting at producer index pi; it returns the next producer index. Like a
// stream of real writes, WQE i moves len bytes from addr + i*len to
// raddr + i*len, so no store is loop-invariant.
static uint32_t build_rdma_write(void *ring, uint32_t wqebbs, uint64_t n, uint32_t pi, uint32_t qpn,
				 uint64_t raddr, uint32_t rkey, uint32_t lkey, uint64_t addr, uint32_t len) {
	uint32_t mask = wqebbs - 1;
	for (uint64_t i = 0; i < n; i++) {
		char *wqe = (char *)ring + ((pi & mask) << MLX5_SEND_WQE_SHIFT);
		struct mlx5_wqe_raddr_seg *r = (void *)(wqe + sizeof(struct mlx5_wqe_ctrl_seg));
		mlx5dv_set_ctrl_seg((void *)wqe, pi, MLX5_OPCODE_RDMA_WRITE, 0, qpn,
				    MLX5_WQE_CTRL_CQ_UPDATE, 3, 0, 0);
		r->raddr = htobe64(raddr + i * len);
		r->rkey = htobe32(rkey);
		r->reserved = 0;
		mlx5dv_set_data_seg((void *)(r + 1), len, lkey, (uintptr_t)(addr + i * len));
		pi++;
	}
	return pi;
}

// post_rdma_write posts n unsignaled RDMA_WRITE WQEs as build_rdma_write
// builds them, updating the doorbell record every batch WQEs (after a
// barrier, as libmlx5 does): the C baseline of a send path.
static uint32_t post_rdma_write(void *ring, uint32_t wqebbs, void *dbr, uint64_t n, uint32_t batch,
				uint32_t pi, uint32_t qpn, uint64_t raddr, uint32_t rkey, uint32_t lkey,
				uint64_t addr, uint32_t len) {
	uint32_t mask = wqebbs - 1;
	volatile uint32_t *db = (volatile uint32_t *)dbr + 1;
	for (uint64_t i = 0; i < n; i++) {
		char *wqe = (char *)ring + ((pi & mask) << MLX5_SEND_WQE_SHIFT);
		struct mlx5_wqe_raddr_seg *r = (void *)(wqe + sizeof(struct mlx5_wqe_ctrl_seg));
		mlx5dv_set_ctrl_seg((void *)wqe, pi, MLX5_OPCODE_RDMA_WRITE, 0, qpn, 0, 3, 0, 0);
		r->raddr = htobe64(raddr + i * len);
		r->rkey = htobe32(rkey);
		r->reserved = 0;
		mlx5dv_set_data_seg((void *)(r + 1), len, lkey, (uintptr_t)(addr + i * len));
		pi++;
		if ((i + 1) % batch == 0) {
			__asm__ volatile("" ::: "memory"); // udma_to_device_barrier on x86
			*db = htobe32(pi & 0xffff);
		}
	}
	return pi;
}

// The fences rdma-core's post_send_db uses (util/udma_barrier.h), per
// architecture: udma_to_device_barrier before the doorbell record,
// mmio_wc_start before the doorbell register, mmio_flush_writes after.
#if defined(__x86_64__) || defined(__i386__)
#define CREF_TO_DEVICE() __asm__ volatile("" ::: "memory")
#define CREF_WC_START() __asm__ volatile("sfence" ::: "memory")
#define CREF_FLUSH() __asm__ volatile("sfence" ::: "memory")
#elif defined(__aarch64__)
#define CREF_TO_DEVICE() __asm__ volatile("dmb oshst" ::: "memory")
#define CREF_WC_START() __asm__ volatile("dsb st" ::: "memory")
#define CREF_FLUSH() __asm__ volatile("dsb st" ::: "memory")
#else
#define CREF_TO_DEVICE() __sync_synchronize()
#define CREF_WC_START() __sync_synchronize()
#define CREF_FLUSH() __sync_synchronize()
#endif

// post_rdma_write_db_each posts n unsignaled RDMA_WRITE WQEs as
// post_rdma_write builds them, one work request per batch: after each,
// the doorbell record, then the 8-byte doorbell (the ctrl segment's first
// 8 bytes) to the current half of the register bf (halves of bf_size
// bytes, alternating), with post_send_db's fences. It returns the next
// producer index; *bf_off is the half the next doorbell goes to.
static uint32_t post_rdma_write_db_each(void *ring, uint32_t wqebbs, void *dbr, void *bf, uint32_t bf_size,
					uint32_t *bf_off, uint64_t n, uint32_t pi, uint32_t qpn, uint64_t raddr,
					uint32_t rkey, uint32_t lkey, uint64_t addr, uint32_t len) {
	uint32_t mask = wqebbs - 1, off = *bf_off;
	volatile uint32_t *db = (volatile uint32_t *)dbr + 1;
	for (uint64_t i = 0; i < n; i++) {
		char *wqe = (char *)ring + ((pi & mask) << MLX5_SEND_WQE_SHIFT);
		struct mlx5_wqe_raddr_seg *r = (void *)(wqe + sizeof(struct mlx5_wqe_ctrl_seg));
		mlx5dv_set_ctrl_seg((void *)wqe, pi, MLX5_OPCODE_RDMA_WRITE, 0, qpn, 0, 3, 0, 0);
		r->raddr = htobe64(raddr + i * len);
		r->rkey = htobe32(rkey);
		r->reserved = 0;
		mlx5dv_set_data_seg((void *)(r + 1), len, lkey, (uintptr_t)(addr + i * len));
		pi++;
		CREF_TO_DEVICE();
		*db = htobe32(pi & 0xffff);
		CREF_WC_START();
		*(volatile uint64_t *)((char *)bf + off) = *(uint64_t *)wqe;
		CREF_FLUSH();
		off ^= bf_size;
	}
	*bf_off = off;
	return pi;
}
*/
import "C"

import "unsafe"

// HaveX86 reports whether the SSE variants (mlx5dv_x86_set_*) were compiled.
func HaveX86() bool { return C.have_x86() != 0 }

// SetCtrlSeg is mlx5dv_set_ctrl_seg on b.
func SetCtrlSeg(b *[16]byte, pi uint16, opcode, opmod uint8, qpn uint32, fmCeSe, ds, signature uint8, imm uint32) {
	C.set_ctrl(unsafe.Pointer(b), C.uint16_t(pi), C.uint8_t(opcode), C.uint8_t(opmod), C.uint32_t(qpn),
		C.uint8_t(fmCeSe), C.uint8_t(ds), C.uint8_t(signature), C.uint32_t(imm))
}

// X86SetCtrlSeg is mlx5dv_x86_set_ctrl_seg on b (a no-op without SSE).
func X86SetCtrlSeg(b *[16]byte, pi uint16, opcode, opmod uint8, qpn uint32, fmCeSe, ds, signature uint8, imm uint32) {
	C.x86_set_ctrl(unsafe.Pointer(b), C.uint16_t(pi), C.uint8_t(opcode), C.uint8_t(opmod), C.uint32_t(qpn),
		C.uint8_t(fmCeSe), C.uint8_t(ds), C.uint8_t(signature), C.uint32_t(imm))
}

// SetDataSeg is mlx5dv_set_data_seg on b.
func SetDataSeg(b *[16]byte, length, lkey uint32, addr uint64) {
	C.set_data(unsafe.Pointer(b), C.uint32_t(length), C.uint32_t(lkey), C.uint64_t(addr))
}

// X86SetDataSeg is mlx5dv_x86_set_data_seg on b (a no-op without SSE).
func X86SetDataSeg(b *[16]byte, length, lkey uint32, addr uint64) {
	C.x86_set_data(unsafe.Pointer(b), C.uint32_t(length), C.uint32_t(lkey), C.uint64_t(addr))
}

// SetDgramSeg is mlx5dv_set_dgram_seg on b.
func SetDgramSeg(b *[48]byte, key uint64, dqpDct uint32, ext, statRateSl, flMlid uint8, rlid uint16,
	rmac *[6]byte, tclass, hopLimit uint8, grhGidFl uint32, rgid *[16]byte) {
	C.set_dgram(unsafe.Pointer(b), C.uint64_t(key), C.uint32_t(dqpDct), C.uint8_t(ext), C.uint8_t(statRateSl),
		C.uint8_t(flMlid), C.uint16_t(rlid), unsafe.Pointer(rmac), C.uint8_t(tclass), C.uint8_t(hopLimit),
		C.uint32_t(grhGidFl), unsafe.Pointer(rgid))
}

// SetEthSeg is mlx5dv_set_eth_seg on b; the inline header is copied from
// hdr[:inlineHdrSz] to b[14:], so b must have room for it.
func SetEthSeg(b []byte, csFlags uint8, mss, inlineHdrSz uint16, hdr []byte) {
	if len(b) < 14+int(inlineHdrSz) || len(hdr) < int(inlineHdrSz) || len(b) < 32 {
		panic("cref.SetEthSeg: buffer too small for the inline header")
	}
	var h unsafe.Pointer
	if len(hdr) > 0 {
		h = unsafe.Pointer(&hdr[0])
	}
	C.set_eth(unsafe.Pointer(&b[0]), C.uint8_t(csFlags), C.uint16_t(mss), C.uint16_t(inlineHdrSz), h)
}

// BuildRDMAWrite writes n RDMA_WRITE WQEs into ring (wqebbs WQEBBs, a power
// of two) in one C loop with the header's helpers, starting at producer
// index pi, and returns the next producer index. ring must not be Go
// memory the collector can move (use mmapped memory).
func BuildRDMAWrite(ring unsafe.Pointer, wqebbs uint32, n uint64, pi, qpn uint32, raddr uint64, rkey, lkey uint32, addr uint64, length uint32) uint32 {
	return uint32(C.build_rdma_write(ring, C.uint32_t(wqebbs), C.uint64_t(n), C.uint32_t(pi), C.uint32_t(qpn),
		C.uint64_t(raddr), C.uint32_t(rkey), C.uint32_t(lkey), C.uint64_t(addr), C.uint32_t(length)))
}

// PostRDMAWrite posts n unsignaled RDMA_WRITE WQEs into ring in one C loop
// with the header's helpers, writing the send doorbell record (dbr, 8
// bytes) every batch WQEs; it returns the next producer index.
func PostRDMAWrite(ring unsafe.Pointer, wqebbs uint32, dbr unsafe.Pointer, n uint64, batch uint32, pi, qpn uint32, raddr uint64, rkey, lkey uint32, addr uint64, length uint32) uint32 {
	return uint32(C.post_rdma_write(ring, C.uint32_t(wqebbs), dbr, C.uint64_t(n), C.uint32_t(batch), C.uint32_t(pi), C.uint32_t(qpn),
		C.uint64_t(raddr), C.uint32_t(rkey), C.uint32_t(lkey), C.uint64_t(addr), C.uint32_t(length)))
}

// PostRDMAWriteDoorbellEach posts n unsignaled RDMA_WRITE WQEs as
// PostRDMAWrite does, but one work request per batch: each writes the
// doorbell record and rings the doorbell (8 bytes to bf at *bfOff, then
// the other half of bfSize bytes) with rdma-core's fences of post_send_db.
// It returns the next producer index and updates *bfOff. bf must be
// mmapped memory of at least 2*bfSize bytes.
func PostRDMAWriteDoorbellEach(ring unsafe.Pointer, wqebbs uint32, dbr, bf unsafe.Pointer, bfSize uint32, bfOff *uint32, n uint64, pi, qpn uint32, raddr uint64, rkey, lkey uint32, addr uint64, length uint32) uint32 {
	off := C.uint32_t(*bfOff)
	pi = uint32(C.post_rdma_write_db_each(ring, C.uint32_t(wqebbs), dbr, bf, C.uint32_t(bfSize), &off, C.uint64_t(n),
		C.uint32_t(pi), C.uint32_t(qpn), C.uint64_t(raddr), C.uint32_t(rkey), C.uint32_t(lkey), C.uint64_t(addr), C.uint32_t(length)))
	*bfOff = uint32(off)
	return pi
}
