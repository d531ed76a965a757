package replay

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// newRun sets up a case's queue and objects from setup s, to be compared
// with res; fix adjusts the QP's creation attributes.
func newRun(c *vectors.Case, s *vectors.Setup, res *vectors.Result, fix func(*sq.QP)) (*run, error) {
	r := &run{c: c, res: res, mkeys: map[string]*sq.Mkey{}, ahs: map[string]*sq.AH{}, deks: map[string]*sq.DEK{},
		mws: map[string]*sq.MW{}, mrs: map[string]uint32{}, dci: s.DCI()}
	if s.BF.InitialOffset != 0 {
		return nil, fmt.Errorf("setup: BlueFlame offset %d: replay starts at 0", s.BF.InitialOffset)
	}
	engines := s.Device.CryptoEngines.Value
	qp := sq.QP{
		Type: mlx.QPRC, SendOps: mlx.IBVQPCreateSendOpsFlags(s.Caps.SendOps.Value), MlxSendOps: mlx.QPCreateSendOpsFlags(s.Caps.Mlx5SendOps.Value),
		MaxInlineData: s.SQ.MaxInlineData, MaxSendSGE: s.SQ.MaxGS, MaxPost: s.SQ.MaxPost,
		MaxMemcpy: s.Device.DMAMMOMaxSize, MkeyTagSupported: s.Device.MkeyUpdateTagSupported,
		CryptoSingleBlock: engines&uint64(mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_SINGLE_BLOCK) != 0,
		CryptoMultiBlock:  engines&uint64(mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK) != 0,
	}
	if r.dci {
		qp.Type = mlx.QPDCI
	}
	fix(&qp)
	// Replayed rings are never a device's: they need not be locked.
	mem, err := qmem.New(qmem.Options{WQEBBs: s.SQ.WQEBBCount, BFSize: s.BF.BufSize, Lock: dma.LockBestEffort})
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	r.mem = mem
	// A recognisable fill, so that bytes the writer leaves alone stand out.
	for i := range mem.SQ {
		mem.SQ[i] = 0xee
	}
	r.q, err = sq.New(sq.Config{
		Mem: mem, QPN: s.QPNum, QP: qp, SigAll: s.SQ.SQSignalBits != 0,
		BF:      sq.BlueFlame{UUARN: s.BF.UUARN, Size: s.BF.BufSize, PreferBF: s.Device.PreferBF != 0, ShutUpBF: s.Device.ShutUpBF != 0},
		PD:      sq.PD{OpaqueLKey: s.PD.OpaqueMRLKey, OpaqueAddr: s.PD.OpaqueBufAddr},
		CurPost: s.SQ.InitialCurPost, Head: s.SQ.InitialHead, Tail: s.SQ.InitialTail, FmCache: s.SQ.InitialFmCache,
	})
	if err != nil {
		mem.Close()
		return nil, fmt.Errorf("setup: %w", err)
	}
	if err := r.objects(s); err != nil {
		mem.Close()
		return nil, fmt.Errorf("setup.%w", err)
	}
	return r, nil
}

// objects makes the setup's mkeys, address handles, DEKs, memory windows
// and memory regions.
func (r *run) objects(s *vectors.Setup) (err error) {
	for _, m := range s.Mkeys {
		flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
		if m.Signature != nil {
			flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
		}
		if m.Crypto != nil {
			flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
		}
		mk := sq.NewMkey(m.LKey, flags, m.MaxEntries)
		if mk.NumDesc != m.NumDesc {
			return fmt.Errorf("mkeys: %s: num_desc %d, libmlx5 would make %d", m.Name, m.NumDesc, mk.NumDesc)
		}
		if g := m.Signature; g != nil {
			mk.MemPSV, mk.WirePSV, mk.ErrCount, mk.ErrCountUpdated = g.MemPSV, g.WirePSV, g.ErrCount, g.ErrCountUpdated
			if mk.Sig, err = sigState(g.BlockState); err != nil {
				return fmt.Errorf("mkeys: %s: %w", m.Name, err)
			}
		}
		if m.Crypto != nil {
			if mk.Crypto, err = cryptoState(m.Crypto.State); err != nil {
				return fmt.Errorf("mkeys: %s: %w", m.Name, err)
			}
		}
		r.mkeys[m.Name] = mk
	}
	for _, a := range s.AHs {
		av, err := vectors.Bytes(a.AVHex)
		if err != nil || len(av) != mlx.WQEAVSize {
			return fmt.Errorf("ahs: %s: not a %d-byte address vector", a.Name, mlx.WQEAVSize)
		}
		ah := &sq.AH{}
		copy(ah.AV[:], av)
		r.ahs[a.Name] = ah
	}
	for _, d := range s.DEKs {
		r.deks[d.Name] = &sq.DEK{ObjectID: d.DevxObjectID}
	}
	// A window's current rkey goes into the bind's ctrl segment; a
	// region's lkey into its KLM.
	for i, o := range s.MWs {
		name, _ := o.String("name") // checked by vectors
		rkey, err := o.Uint("rkey")
		if err != nil || rkey > 0xffffffff {
			return fmt.Errorf("mws[%d].rkey: not a 32-bit number (%v)", i, err)
		}
		r.mws[name] = &sq.MW{RKey: uint32(rkey)}
	}
	for i, o := range s.MRs {
		name, _ := o.String("name")
		lkey, err := o.Uint("lkey")
		if err != nil || lkey > 0xffffffff {
			return fmt.Errorf("mrs[%d].lkey: not a 32-bit number (%v)", i, err)
		}
		r.mrs[name] = uint32(lkey)
	}
	return nil
}

func sigState(s string) (sq.SigState, error) {
	switch s {
	case "INIT":
		return sq.SigInit, nil
	case "RESET":
		return sq.SigReset, nil
	case "SET":
		return sq.SigSet, nil
	case "UPDATED":
		return sq.SigUpdated, nil
	}
	return 0, fmt.Errorf("unknown signature state %q", s)
}

func cryptoState(s string) (sq.CryptoState, error) {
	switch s {
	case "INIT":
		return sq.CryptoInit, nil
	case "SET":
		return sq.CryptoSet, nil
	case "UPDATED":
		return sq.CryptoUpdated, nil
	}
	return 0, fmt.Errorf("unknown crypto state %q", s)
}
