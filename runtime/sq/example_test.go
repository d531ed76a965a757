package sq_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"syscall"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// Example posts one signaled RDMA write through the send-queue writer and
// reads the WQE back. qmem.Plain is ordinary memory standing in for a QP's
// send queue, so this runs without an RDMA device.
func Example() {
	mem, err := qmem.Plain(8, 0, 0) // 8 WQEBBs, no CQ, a doorbell register without BlueFlame
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{
		Mem: mem,
		QPN: 0x1234,
		QP: sq.QP{ // what the QP was created with
			Type:       mlx5dv.QPRC,
			SendOps:    mlx5dv.IBV_QP_EX_WITH_RDMA_WRITE,
			MaxSendSGE: 1,
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	q.SetWRID(7)
	q.SetWRFlags(mlx5dv.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil { // ibv_wr_start
		log.Fatal(err)
	}
	if err := q.RDMAWrite(0x11223344, 0x0102030405060708); err != nil { // ibv_wr_rdma_write(rkey, raddr)
		log.Fatal(err)
	}
	if err := q.SetSGE(0x55667788, 0x1112131415161718, 0x1000); err != nil { // ibv_wr_set_sge(lkey, addr, length)
		log.Fatal(err)
	}
	if err := q.Complete(); err != nil { // ibv_wr_complete: doorbell record, then the doorbell
		log.Fatal(err)
	}

	segs, err := mlx5dv.Split(mem.SQ[:mlx5dv.MLX5_SEND_WQE_BB], mlx5dv.SplitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range segs {
		fmt.Printf("byte %2d: %v\n", s.Offset, s.View)
	}
	fmt.Println("doorbell record, send counter:", binary.BigEndian.Uint32(mem.DBR[4:8]))

	// A call that breaks a man-page rule writes nothing and fails the batch.
	q.Start()
	err = q.SetSGE(0x55667788, 0x1112131415161718, 0x1000) // a setter with no builder before it
	var re *mlx5dv.RuleError
	if errors.As(err, &re) {
		fmt.Println(re.Func, re.Rule, re.Man, errors.Is(err, syscall.EINVAL))
	}
	fmt.Println("batch failed:", q.Complete() != nil)

	// Output:
	// byte  0: mlx5_wqe_ctrl_seg{opmod_idx_opcode: 0x8 (opcode: MLX5_OPCODE_RDMA_WRITE, wqe_index: 0x0, opmod: 0x0), qpn_ds: 0x123403 (ds: 0x3, qpn: 0x1234), signature: 0x0, dci_stream_channel_id: 0x0, fm_ce_se: MLX5_WQE_CTRL_CQ_UPDATE (se: 0x0, ce: 0x2, fence: 0x0), imm: 0x0}
	// byte 16: mlx5_wqe_raddr_seg{raddr: 0x102030405060708, rkey: 0x11223344, reserved: 0x0}
	// byte 32: mlx5_wqe_data_seg{byte_count: 0x1000, lkey: 0x55667788, addr: 0x1112131415161718}
	// doorbell record, send counter: 1
	// ibv_wr_set_sge ibv_wr.builder_then_setters ibv_wr_post(3) true
	// batch failed: true
}

// ExampleSQ_PostRDMAWriteSGE posts RDMA writes one doorbell each, the
// latency path: each call is Start, RDMAWriteSGE and Complete, with their
// answers and bytes. A length the rules refuse posts nothing.
func ExampleSQ_PostRDMAWriteSGE() {
	mem, err := qmem.Plain(8, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{Mem: mem, QPN: 0x1234,
		QP: sq.QP{Type: mlx5dv.QPRC, SendOps: mlx5dv.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		log.Fatal(err)
	}
	for i := range uint64(3) {
		q.SetWRID(i)
		if err := q.PostRDMAWriteSGE(0x11223344, 0x10000+i*64, 0x55667788, 0x20000+i*64, 64); err != nil {
			log.Fatal(err)
		}
		fmt.Println("doorbell record:", binary.BigEndian.Uint32(mem.DBR[4:8]), "rung:", q.Last.Rung)
	}
	err = q.PostRDMAWriteSGE(0x11223344, 0x10000, 0x55667788, 0x20000, 1<<31)
	var re *mlx5dv.RuleError
	if errors.As(err, &re) {
		fmt.Println(re.Rule, "posted:", q.Head(), "rung:", q.Last.Rung)
	}
	// Output:
	// doorbell record: 1 rung: true
	// doorbell record: 2 rung: true
	// doorbell record: 3 rung: true
	// ibv_wr.sge_length posted: 3 rung: false
}

// ExampleSQ_PostConfigureMkey reconfigures a signature mkey for each I/O
// with a doorbell of its own, a storage target's path: the template holds
// the access flags and the T10-DIF wire domain, checked once; each call is
// Start, ConfigureMkey and Complete. A fresh signature mkey's first
// configuration also tells the device its error count (the calls one by
// one, inside the same call). A list longer than the mkey's entries posts
// nothing.
func ExampleSQ_PostConfigureMkey() {
	mem, err := qmem.Plain(16, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{Mem: mem, QPN: 0x1234,
		QP: sq.QP{Type: mlx5dv.QPRC, MlxSendOps: mlx5dv.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE, MaxInlineData: 316}})
	if err != nil {
		log.Fatal(err)
	}
	dif := mlx5dv.SigT10DIF{BGType: mlx5dv.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 0x1234, RefTag: 0x5678}
	wire := mlx5dv.SigBlockDomain{SigType: mlx5dv.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx5dv.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(&dif)
	t, err := sq.NewMkeyTemplate(mlx5dv.IBV_ACCESS_LOCAL_WRITE|mlx5dv.IBV_ACCESS_REMOTE_READ, &mlx5dv.SigBlockAttr{Wire: &wire, CheckMask: 0xff})
	if err != nil {
		log.Fatal(err)
	}
	mk := sq.NewMkey(0x4500, mlx5dv.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx5dv.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	q.SetWRFlags(mlx5dv.IBV_SEND_INLINE | mlx5dv.IBV_SEND_SIGNALED)
	for i := range uint64(3) {
		sges := []mlx5dv.SGE{{Addr: 0x100000 + i*8192, Length: 4096, LKey: 7}, {Addr: 0x300000 + i*8192, Length: 4096, LKey: 7}}
		if err := q.PostConfigureMkey(mk, t, sges); err != nil {
			log.Fatal(err)
		}
		fmt.Println("work requests posted:", q.Head(), "mkey length:", mk.Length)
		q.Completed(q.Outstanding()) // the poller's part
	}
	err = q.PostConfigureMkey(mk, t, make([]mlx5dv.SGE, 5))
	var re *mlx5dv.RuleError
	if errors.As(err, &re) {
		fmt.Println(re.Rule, "posted:", q.Head())
	}
	// Output:
	// work requests posted: 2 mkey length: 8192
	// work requests posted: 4 mkey length: 8192
	// work requests posted: 6 mkey length: 8192
	// create_mkey.max_entries posted: 6
}
