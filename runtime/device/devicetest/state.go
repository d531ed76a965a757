package devicetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// The QP state, query, recovery and CQ overrun cases of the suite (Run
// lists them).

// noRemoteWrite registers n zeroed bytes a peer may not write: an RDMA
// write to them fails at the requester with an error completion.
func noRemoteWrite(t *testing.T, pd *device.PD, n int) *device.MR {
	t.Helper()
	return Must[*device.MR](t, "RegMR without remote write")(pd.RegMR(Buffer(t, n), mlx.IBV_ACCESS_LOCAL_WRITE))
}

// failWrite posts an RDMA write from src to a region without remote
// write on p.A and polls its error completion.
func failWrite(t *testing.T, p Pair, src *device.MR, wrid uint64) {
	t.Helper()
	bad := noRemoteWrite(t, p.PD, 64)
	Write(t, p.A, wrid, src, bad, 64)
	if wc := PollOne(t, p.CQ); wc.WRID != wrid || wc.Status == cq.Success {
		t.Fatalf("write to an MR without remote write: completion %+v, want wr_id %d with an error status", wc, wrid)
	}
}

// testErrorState: after an error completion the QP is in IBV_QPS_ERR, as
// State and Query report it, and what is posted then is flushed.
func testErrorState(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	src, dst := MRPair(t, p.PD, 64)
	failWrite(t, p, src, 1)
	if s := p.A.State(); s != mlx.IBV_QPS_ERR {
		t.Fatalf("State after an error completion: %v, want IBV_QPS_ERR", s)
	}
	info, err := p.A.Query()
	if err != nil {
		t.Fatalf("Query after an error completion: %v", err)
	}
	if info.State != mlx.IBV_QPS_ERR {
		t.Fatalf("Query after an error completion: state %v, want IBV_QPS_ERR", info.State)
	}
	Write(t, p.A, 2, src, dst, 64)
	if wc := PollOne(t, p.CQ); wc.WRID != 2 || wc.Status != cq.WRFlushErr {
		t.Fatalf("a write posted on a QP in error: completion %+v (%v), want wr_id 2 flushed", wc, wc.Status.Err())
	}
	if err := p.A.Modify(mlx.IBV_QPS_RTS, device.QPAttr{}); err == nil || !strings.Contains(err.Error(), "IBV_QPS_ERR") {
		t.Fatalf("Modify ERR -> RTS: %v, want a refusal naming IBV_QPS_ERR", err)
	}
}

// testQuery: Query reports what Connect set, and RESET on a new QP.
func testQuery(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	ea := Must[device.Endpoint](t, "Endpoint A")(p.A.Endpoint())
	eb := Must[device.Endpoint](t, "Endpoint B")(p.B.Endpoint())
	port := Must[device.Port](t, "Port")(c.Port())
	mtu := port.MTU
	if mtu == 0 {
		mtu = mlx.IBV_MTU_1024
	}
	info := Must[device.QPInfo](t, "Query")(p.A.Query())
	a := info.Attr
	var bad []string
	check := func(what string, ok bool, got, want any) {
		if !ok {
			bad = append(bad, fmt.Sprintf("%s %v, want %v", what, got, want))
		}
	}
	check("state", info.State == mlx.IBV_QPS_RTS, info.State, mlx.IBV_QPS_RTS)
	check("Remote.QPN", a.Remote.QPN == eb.QPN, a.Remote.QPN, eb.QPN)
	check("Remote.PSN (rq_psn)", a.Remote.PSN == eb.PSN, a.Remote.PSN, eb.PSN)
	check("SQPSN", a.SQPSN == ea.PSN, a.SQPSN, ea.PSN)
	// The remote rights: mlx5 keeps no local-write bit in the QP context.
	const remote = mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_ATOMIC
	check("Access", a.Access&remote == remote, a.Access, device.DefaultAccess)
	check("MTU", a.MTU == mtu, a.MTU, mtu)
	check("MinRNR", a.MinRNR == 12, a.MinRNR, 12)
	check("Timeout", a.Timeout == 14, a.Timeout, 14)
	check("Retry", a.Retry == 7, a.Retry, 7)
	check("RNRRetry", a.RNRRetry == 7, a.RNRRetry, 7)
	check("RdAtomic", a.RdAtomic >= 1, a.RdAtomic, "at least 1")
	check("DestRdAtomic", info.DestRdAtomic >= 1, info.DestRdAtomic, "at least 1")
	if port.LID != 0 {
		check("Remote.LID", a.Remote.LID == eb.LID, a.Remote.LID, eb.LID)
	} else {
		check("Remote.GID", a.Remote.GID == eb.GID, a.Remote.GID, eb.GID)
	}
	cp := info.Caps
	check("Caps", cp.MaxSendWR >= 8 && cp.MaxRecvWR >= 8 && cp.MaxSendSGE >= 1 && cp.MaxRecvSGE >= 1, cp, "at least RCPair's 8, 8, 1, 1")
	if len(bad) > 0 {
		t.Fatalf("Query after Connect: %s", strings.Join(bad, "; "))
	}
	qp := Must[*device.QP](t, "CreateQP")(p.PD.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: p.CQ, MaxSendWR: 2, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}))
	if info, err := qp.Query(); err != nil || info.State != mlx.IBV_QPS_RESET {
		t.Fatalf("Query of a new QP: %v, state %v, want IBV_QPS_RESET", err, info.State)
	}
	if err := qp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := qp.Query(); !errors.Is(err, device.ErrClosed) {
		t.Fatalf("Query after Close: %v, want ErrClosed", err)
	}
}

// testRecovery: a QP the device moved to error is used again after
// RESET → INIT → RTR → RTS (both ends of the connection, as on a real
// link the peer's PSNs moved on); completions of before the reset left
// in the CQ are gone, and a new RDMA write completes and lands.
func testRecovery(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	src, dst := MRPair(t, p.PD, 64)
	failWrite(t, p, src, 1)
	Write(t, p.A, 2, src, dst, 64) // flushed, and left in the CQ
	for range 4 {
		p.CQ.Progress()
	}
	for _, q := range []*device.QP{p.A, p.B} {
		if err := q.Modify(mlx.IBV_QPS_RESET, device.QPAttr{}); err != nil {
			t.Fatalf("Modify -> RESET: %v", err)
		}
	}
	if s := p.A.State(); s != mlx.IBV_QPS_RESET {
		t.Fatalf("after Modify -> RESET: %v", s)
	}
	if o, cur := p.A.SQ().Outstanding(), p.A.SQ().CurPost(); o != 0 || cur != 0 {
		t.Fatalf("after RESET the send queue has %d work requests outstanding at producer index %d, want 0 and 0", o, cur)
	}
	ConnectPair(t, p.A, p.B)
	for i := range 3 { // more than the one slot the flushed write held
		clear(dst.Bytes())
		Write(t, p.A, uint64(10+i), src, dst, 64)
		wc := PollOne(t, p.CQ)
		if wc.WRID != uint64(10+i) || wc.Status != cq.Success {
			t.Fatalf("write %d after recovery: completion %+v (%v), want wr_id %d, IBV_WC_SUCCESS", i, wc, wc.Status.Err(), 10+i)
		}
		if string(dst.Bytes()) != string(src.Bytes()) {
			t.Fatalf("write %d after recovery: the destination does not hold the source's bytes", i)
		}
	}
	if n, err := p.CQ.Poll(make([]cq.WC, 4)); n != 0 || err != nil {
		t.Fatalf("after recovery the CQ still yields %d completions (%v)", n, err)
	}
}

// testErrorExplains: an error completion's Err names the work request
// (wr_id, QPN), the opcode it was posted with (the CQE says IBV_WC_SEND
// for every error, as libmlx5 reports it) and the syndrome with its
// meaning, and matches the status's errno.
func testErrorExplains(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	src, _ := MRPair(t, p.PD, 64)
	bad := noRemoteWrite(t, p.PD, 64)
	Write(t, p.A, 0x5eed, src, bad, 64)
	wc := PollOne(t, p.CQ)
	err := wc.Err()
	if err == nil {
		t.Fatalf("a write to an MR without remote write completed %v", wc.Status)
	}
	if wc.Opcode != mlx.IBV_WC_SEND || wc.PostedOpcode != uint8(mlx.MLX5_OPCODE_RDMA_WRITE) {
		t.Errorf("opcode %v, posted %#x: want IBV_WC_SEND (as libmlx5) and MLX5_OPCODE_RDMA_WRITE", wc.Opcode, wc.PostedOpcode)
	}
	msg := err.Error()
	for _, want := range []string{"wr_id 0x5eed", fmt.Sprintf("QPN %#x", p.A.QPN()), "RDMA_WRITE", "MLX5_CQE_SYNDROME_", wc.Status.String()} {
		if !strings.Contains(msg, want) {
			t.Errorf("error completion %q does not say %q", msg, want)
		}
	}
	if !strings.Contains(msg, "(") {
		t.Errorf("error completion %q gives no meaning for its syndrome", msg)
	}
	if !errors.Is(err, wc.Status.Errno()) {
		t.Errorf("errors.Is(%v, %v) is false", err, wc.Status.Errno())
	}
}

// testMessageSize: the send queue writers know the port's max_msg_sz and
// refuse a work request over it at post (rule ibv_wr.msg_size), and an
// SGE length with bit 31 set (ibv_wr.sge_length), writing nothing.
func testMessageSize(t *testing.T, c *device.Context) {
	port := Must[device.Port](t, "Port")(c.Port())
	p := RCPair(t, c, nil)
	src, dst := MRPair(t, p.PD, 64)
	s := p.A.SQ()
	try := func(n uint32) error {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		err := s.RDMAWriteSGE(dst.RKey, dst.Addr, src.LKey, src.Addr, n)
		if cerr := s.Complete(); err == nil {
			err = cerr
		}
		return err
	}
	var re *mlx.RuleError
	if err := try(0x8000000c); !errors.As(err, &re) || re.Rule != "ibv_wr.sge_length" {
		t.Errorf("an SGE of %#x bytes: %v, want rule ibv_wr.sge_length", uint32(0x8000000c), err)
	}
	if port.MaxMsgSize == 0 || port.MaxMsgSize >= 1<<31 {
		return // the port sets no limit below the SGE's
	}
	if err := try(port.MaxMsgSize + 1); !errors.As(err, &re) || re.Rule != "ibv_wr.msg_size" {
		t.Errorf("a message of max_msg_sz %d + 1 bytes: %v, want rule ibv_wr.msg_size", port.MaxMsgSize, err)
	}
	if s.Head() != 0 {
		t.Errorf("%d work requests posted by refused calls", s.Head())
	}
}
