package rq_test

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// A QP's receive queue on queue memory: the receive counter is bytes 0..3
// of the QP's doorbell record. (runtime/qmem has no receive ring yet;
// a device's is the QP buffer's receive part, mlx5dv_qp.rq.buf.)
func Example() {
	mem, err := qmem.Plain(64, 64, 0)
	if err != nil {
		panic(err)
	}
	defer mem.Close()
	q, err := rq.New(rq.Config{
		Mem:    rq.Memory{Ring: make([]byte, 4*32), DBR: (*[4]byte)(mem.DBR[0:4])},
		Stride: 32, // mlx5dv_qp.rq.stride: two data segments per WQE
	})
	if err != nil {
		panic(err)
	}
	buf := rq.SGE{Addr: 0x7f0000001000, Length: 4096, LKey: 0x1234}
	n, err := q.PostList([]rq.RecvWR{{WRID: 1, SGEs: []rq.SGE{buf}}, {WRID: 2, SGEs: []rq.SGE{buf, buf, buf}}})
	fmt.Println(n, errors.Is(err, syscall.EINVAL))
	fmt.Printf("receive counter % x\n", mem.DBR[0:4])
	id, _ := q.Retire() // the CQ poller, for the receive completion
	fmt.Println("completed wr_id", id)
	// Output:
	// 1 true
	// receive counter 00 00 00 01
	// completed wr_id 1
}
