// Command sendrecv sends messages with SEND and SEND with immediate data
// from a client QP to a server QP, which receives them into the buffers
// of the receive work requests it posted, in order: the two-sided
// operations, where the receiver says where data lands.
//
//	go run ./examples/sendrecv [-device NAME] [-peer NAME]
//
// By default the two QPs are on two simulated devices ("sim:client" and
// "sim:server") joined by the simulator's fabric; give mlx5 devices
// ("mlx5_0"; -peer defaults to -device) to run the same program on
// hardware.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	_ "github.com/mlx5gen/mlx5gen/runtime/device/verbs" // the hardware backend
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

const slot = 64 // bytes per receive buffer

// messages are what the client sends; a non-zero imm goes as immediate
// data (ibv_wr_send_imm).
var messages = []struct {
	text string
	imm  uint32
}{
	{"hello", 0},
	{"two-sided", 0},
	{"with immediate data", 42},
}

func main() {
	dev := flag.String("device", "sim:client", `the client's device: "sim:NAME" (simulator) or "mlx5_0" (hardware)`)
	peer := flag.String("peer", "", "the server's device (default: sim:server with a simulated -device, else -device)")
	flag.Parse()
	if *peer == "" {
		*peer = *dev
		if *dev == "sim:client" {
			*peer = "sim:server"
		}
	}
	got, err := run(*dev, *peer)
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range got {
		fmt.Println(line)
	}
}

// side is one end: a device, a buffer registered on it, a CQ and a QP.
type side struct {
	ctx *device.Context
	mr  *device.MR
	cq  *device.CQ
	qp  *device.QP
}

func open(name string, buf []byte) (*side, error) {
	ctx, err := device.Open(name)
	if err != nil {
		return nil, err
	}
	s := &side{ctx: ctx}
	pd, err := ctx.AllocPD()
	if err == nil {
		// A receive buffer needs local write access only: the device
		// writes it on the receiver's behalf, no remote key involved.
		s.mr, err = pd.RegMR(buf, mlx.IBV_ACCESS_LOCAL_WRITE)
	}
	if err == nil {
		s.cq, err = ctx.CreateCQ(device.CQConfig{CQEs: 16})
	}
	if err == nil {
		s.qp, err = pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: s.cq, MaxSendWR: 8, MaxSendSGE: 1,
			MaxRecvWR: 8, MaxRecvSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_SEND_WITH_IMM})
	}
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return s, nil
}

// run connects a client QP on devName to a server QP on peerName, posts
// the server's receives, sends every message and returns what the server
// received, one line per receive completion.
func run(devName, peerName string) ([]string, error) {
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		return nil, err
	}
	defer region.Close()
	cbuf, err1 := region.Alloc(4096, 64)
	sbuf, err2 := region.Alloc(4096, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	client, err := open(devName, cbuf.Bytes)
	if err != nil {
		return nil, err
	}
	defer client.ctx.Close()
	server, err := open(peerName, sbuf.Bytes)
	if err != nil {
		return nil, err
	}
	defer server.ctx.Close()
	ec, err1 := client.qp.Endpoint()
	es, err2 := server.qp.Endpoint()
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if err := errors.Join(client.qp.Connect(es), server.qp.Connect(ec)); err != nil {
		return nil, err
	}
	// A SEND consumes the receiver's next receive work request, so the
	// server posts one per message before the client sends: a SEND that
	// finds none waits (RNR) and, past its retries, fails.
	for i := range messages {
		sge := rq.SGE{Addr: server.mr.Addr + uint64(i*slot), Length: slot, LKey: server.mr.LKey}
		if err := server.qp.RQ().Post(uint64(i), []rq.SGE{sge}); err != nil {
			return nil, err
		}
	}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []string
	for i, m := range messages {
		if err := client.send(wait, uint64(i), i*slot, m.text, m.imm); err != nil {
			return nil, err
		}
		line, err := server.receive(wait)
		if err != nil {
			return nil, err
		}
		got = append(got, line)
	}
	return got, nil
}

// send posts one signaled SEND (with immediate data if imm is not 0) of
// text, copied to offset off of the client's buffer, and waits for its
// completion.
func (s *side) send(wait context.Context, id uint64, off int, text string, imm uint32) error {
	n := copy(s.mr.Bytes()[off:], text)
	q := s.qp.SQ()
	q.SetWRID(id)
	q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		return err
	}
	// The first builder or setter that fails fails the batch: later calls
	// return the same error, and Complete reports it once and posts
	// nothing, so only Start's and Complete's errors need checking.
	if imm != 0 {
		q.SendImm(mlx.ToBE32(imm)) // ibv_wr_send_imm takes htobe32(imm)
	} else {
		q.Send()
	}
	q.SetSGE(s.mr.LKey, s.mr.Addr+uint64(off), uint32(n))
	if err := q.Complete(); err != nil {
		return err
	}
	_, err := s.poll(wait)
	return err
}

// receive waits for the server's next receive completion and describes
// it.
func (s *side) receive(wait context.Context) (string, error) {
	wc, err := s.poll(wait)
	if err != nil {
		return "", err
	}
	if wc.Opcode != mlx.IBV_WC_RECV {
		return "", fmt.Errorf("wr_id %d: %v, want IBV_WC_RECV", wc.WRID, wc.Opcode)
	}
	data := s.mr.Bytes()[int(wc.WRID)*slot:][:wc.ByteLen]
	line := fmt.Sprintf("receive %d: %d bytes %q", wc.WRID, wc.ByteLen, data)
	if wc.Flags&mlx.IBV_WC_WITH_IMM != 0 {
		line += fmt.Sprintf(", immediate data %d", wc.Imm) // as the sender gave it to htobe32
	}
	return line, nil
}

// poll waits for the side's next completion, until wait ends.
func (s *side) poll(wait context.Context) (cq.WC, error) {
	wc := make([]cq.WC, 1)
	if _, err := s.cq.PollWait(wait, wc); err != nil {
		return cq.WC{}, err
	}
	return wc[0], wc[0].Status.Err()
}
