package engine

import (
	"errors"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/cqe"
	"github.com/mlx5gen/mlx5gen/runtime/sim/keys"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
)

// isMkey reports whether key is an indirect mkey's (runtime/sim/mkey
// gives them bit 31; MR and MW keys stay below).
func isMkey(key uint32) bool { return key&0x80000000 != 0 }

// mkeyMemory is the device's registered memory as the mkey table reads
// it: the MRs its layouts name, checked for bounds and local write (the
// mkey checked its own PD and access flags).
type mkeyMemory struct{ d *Device }

func (m mkeyMemory) Bytes(key uint32, addr, n uint64, write, remote bool) ([]byte, error) {
	need := mlx.AccessFlags(0)
	if write {
		need = mlx.IBV_ACCESS_LOCAL_WRITE
	}
	var f keys.Fault
	b, bad := m.d.keys.Bytes(key, keys.AnyPD, addr, n, need, false, &f)
	if bad != nil {
		kind := mkey.FaultKey
		if f.Why == "the key lacks the access rights" {
			kind = mkey.FaultAccess
		} else if f.Why == "outside the region" {
			kind = mkey.FaultBounds
		}
		return nil, &mkey.Fault{Kind: kind, Remote: remote, Key: key, Addr: addr, N: n, Why: f.Why}
	}
	return b, nil
}

// mkeyFault maps an error of the mkey table to a syndrome, as runtime/sim/
// mkey documents: a remote fault is a remote access error; a local bounds
// fault a local length error, other local faults local protection
// errors; an error that is not a fault (a configuration the device cannot
// run) a local QP operation error. [ledger: syndrome-mkey]
func mkeyFault(err error) status {
	var f *mkey.Fault
	if !errors.As(err, &f) {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, err.Error())
	}
	switch {
	case f.Remote:
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, err.Error())
	case f.Kind == mkey.FaultBounds:
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, err.Error())
	}
	return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, err.Error())
}

// sigCQE converts a signature error to the CQE that reports it.
func sigCQE(e *mkey.SigErr) cqe.Sig {
	return cqe.Sig{Syndrome: e.Syndrome, ExpectedSig: e.ExpectedTransSig, ActualSig: e.ActualTransSig,
		ExpectedRef: e.ExpectedRefTag, ActualRef: e.ActualRefTag, SigType: e.SigType, Domain: e.Domain,
		Mkey: e.Key, Offset: e.Offset}
}

// Mkeys returns the device's indirect mkeys and DEKs. Calls on it must
// hold the fabric's lock (Fabric.Lock), as the engine uses it.
func (d *Device) Mkeys() *mkey.Table { return d.mkeys }
