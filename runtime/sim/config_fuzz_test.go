package sim_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// FuzzConfigs feeds the device API's configurations, on the simulator,
// values of every sign and size: no call panics, and every refusal is a
// *device.ConfigError or a *mlx5dv.RuleError naming a field, wrapping an
// errno. `go test` runs the seeds; `go test -fuzz FuzzConfigs` explores.
func FuzzConfigs(f *testing.F) {
	f.Add(uint8(1), 4, 4, 1, 1, 0, 0, 0, uint32(0), 16, 64)
	f.Add(uint8(2), 4, 0, 1, 0, 0, -1, 0, uint32(0), 16, 64)            // DCI, LogNumErrored -1 (the panic)
	f.Add(uint8(2), 4, 0, 1, 0, 0, 0, -1, uint32(0), 16, 64)            // DCI, LogNumConcurent -1
	f.Add(uint8(2), 4, 0, 1, 0, 0, 100, 0, uint32(0), 16, 64)           // LogNumErrored 100 without streams
	f.Add(uint8(2), 4, 0, 1, 0, 0, 3, 1, uint32(0), 16, 64)             // more errored than streams
	f.Add(uint8(2), 4, 0, 1, 0, 0, 1, 2, uint32(0), 16, 64)             // streams within the caps
	f.Add(uint8(1), 4, 4, 1000, 0, 0, 0, 0, uint32(0), 16, 64)          // MaxSendSGE above the caps
	f.Add(uint8(1), -1, -5, -1, -1, -1, 0, 0, uint32(0x100), -1, -64)   // negatives
	big := int(^uint(0) >> 1)                                           // the largest int: oversized on 32 and 64 bits
	f.Add(uint8(1), big, big, big, big, big, 0, 0, uint32(0), big, big) // oversized
	f.Add(uint8(3), 0, 0, 0, 0, 0, 0, 0, uint32(0x20), 4, 96)           // DCT, bad CQE size
	f.Add(uint8(0), 4, 4, 1, 1, 0, 0, 0, uint32(0), 16, 128)
	f.Add(uint8(3), 0, 0, 0, 76, 0, 0, 0, uint32(0), 56, 64) // an SRQ above the caps
	// bits also gives the send operations: bits>>8&0xff the mlx5dv ones,
	// bits>>16 the verbs ones.
	f.Add(uint8(2), 4, 0, 1, 0, 0, 0, 0, uint32(0x400), 16, 64)      // a DCI with MKEY_CONFIGURE (EOPNOTSUPP)
	f.Add(uint8(1), 4, 4, 1, 1, 0, 0, 0, uint32(0x04000000), 16, 64) // an RC QP with TSO (EOPNOTSUPP)
	f.Add(uint8(1), 4, 4, 1, 1, 0, 0, 0, uint32(0x03ff1f00), 16, 64) // every send operation an RC QP carries
	c, err := device.Open("sim:fuzzconfigs")
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	pd, err := c.AllocPD()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kind uint8, sendWR, recvWR, sendSGE, recvSGE, inline, logErr, logConc int, bits uint32, n, size int) {
		q, err := c.CreateCQ(device.CQConfig{CQEs: n, CQESize: size})
		checkErr(t, "CreateCQ", err)
		if err != nil {
			q, err = c.CreateCQ(device.CQConfig{CQEs: 16})
			if err != nil {
				t.Fatal(err)
			}
		}
		defer q.Close()
		cfg := device.QPConfig{Kind: device.QPKind(kind), SendCQ: q, MaxSendWR: sendWR, MaxRecvWR: recvWR,
			MaxSendSGE: sendSGE, MaxRecvSGE: recvSGE, MaxInlineData: inline, LogNumErrored: logErr, LogNumConcurent: logConc,
			CreateFlags: mlx.QPCreateFlags(bits), MlxSendOps: mlx.QPCreateSendOpsFlags(bits >> 8 & 0xff),
			SendOps: mlx.IBVQPCreateSendOpsFlags(bits >> 16)}
		if cfg.Kind == device.DCT {
			srq, err := pd.CreateSRQ(device.SRQConfig{MaxWR: n, MaxSGE: recvSGE})
			checkErr(t, "CreateSRQ", err)
			if err == nil {
				defer srq.Close()
				cfg.SRQ = srq
			}
		}
		qp, err := pd.CreateQP(cfg)
		checkErr(t, "CreateQP", err)
		if err == nil {
			checkErr(t, "Modify", qp.Modify(mlx.IBV_QPS_INIT, device.QPAttr{Access: mlx.AccessFlags(bits), PKeyIdx: uint16(n)}))
			qp.Close()
		}
		mk, err := pd.CreateMkey(mlx.MkeyInitAttrFlags(bits), n)
		checkErr(t, "CreateMkey", err)
		if err == nil {
			mk.Close()
		}
	})
}

// checkErr fails t unless err is nil or a refusal naming a field and
// wrapping its errno (a ConfigError's Errno, EINVAL when 0).
func checkErr(t *testing.T, call string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ce *device.ConfigError
	var re *mlx.RuleError
	switch {
	case errors.As(err, &ce):
		errno := ce.Errno
		if errno == 0 {
			errno = syscall.EINVAL
		}
		if ce.Field == "" || !errors.Is(err, errno) || !strings.Contains(err.Error(), ce.Field) {
			t.Errorf("%s: %v: a ConfigError without its field or errno", call, err)
		}
	case errors.As(err, &re):
		if re.Field == "" || re.Errno == 0 || !errors.Is(err, re.Errno) {
			t.Errorf("%s: %v: a RuleError without its field or errno", call, err)
		}
	default:
		t.Errorf("%s: %v: neither a ConfigError nor a RuleError naming a field", call, err)
	}
}
