package benchlibmlx5

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// MkeyConf is the configuration of the mkey paths: access flags, a
// MkeyEntries-entry list layout and a T10-DIF signature in the wire domain,
// so the UMR carries a BSF and a SET_PSV follows it (gen/verify's
// BenchmarkMkeyConfigure). The C harness gets the same values.
type MkeyConf struct {
	Mk   *sq.Mkey
	Conf mlx.MkeyConfAttr
	SGEs [MkeyEntries]mlx.SGE
	DIF  mlx.SigT10DIF
	Wire mlx.SigBlockDomain
	Sig  mlx.SigBlockAttr
	Tmpl *sq.MkeyTemplate
}

// T10-DIF values of the wire domain.
const (
	DIFBG        = 0xffff
	DIFAppTag    = 0x1234
	DIFRefTag    = 0x5678
	SigCheckMask = 0xff
)

// NewMkeyConf makes a fresh signature mkey and its configuration.
func NewMkeyConf() (*MkeyConf, error) {
	m := &MkeyConf{Mk: sq.NewMkey(MkeyLKey, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, MkeyEntries)}
	m.Mk.MemPSV, m.Mk.WirePSV = MemPSV, WirePSV
	for i := range m.SGEs {
		m.SGEs[i] = mlx.SGE{Addr: Addr + uint64(i)*Len, Length: Len, LKey: LKey}
	}
	m.DIF = mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: DIFBG, AppTag: DIFAppTag, RefTag: DIFRefTag,
		Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)}
	m.Wire = mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	m.Wire.SetSigDif(&m.DIF)
	m.Sig = mlx.SigBlockAttr{Wire: &m.Wire, CheckMask: SigCheckMask}
	t, err := sq.NewMkeyTemplate(MkeyAccess, &m.Sig)
	if err != nil {
		return nil, err
	}
	m.Tmpl = t
	return m, nil
}

// Configure posts batches of per configurations with the four calls,
// inline and signaled.
func (m *MkeyConf) Configure(q *sq.SQ, batches, per int) error {
	if err := q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED); err != nil {
		return err
	}
	for range batches {
		if err := q.Start(); err != nil {
			return err
		}
		for range per {
			q.MkeyConfigure(m.Mk, 3, &m.Conf)
			q.SetMkeyAccessFlags(MkeyAccess)
			q.SetMkeyLayoutList(m.SGEs[:])
			q.SetMkeySigBlock(&m.Sig)
		}
		if err := q.Complete(); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
	}
	return nil
}

// ConfigureTemplate posts the same configurations through the template
// (the mkey's first configuration must have gone the long way).
func (m *MkeyConf) ConfigureTemplate(q *sq.SQ, batches, per int) error {
	if err := q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED); err != nil {
		return err
	}
	for range batches {
		if err := q.Start(); err != nil {
			return err
		}
		for range per {
			q.ConfigureMkey(m.Mk, m.Tmpl, m.SGEs[:])
		}
		if err := q.Complete(); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
	}
	return nil
}

// ConfigurePost posts the same configurations through the template, each
// with PostConfigureMkey (Start, ConfigureMkey and Complete in one call),
// completing each (the mkey's first configuration must have gone the long
// way).
func (m *MkeyConf) ConfigurePost(q *sq.SQ, n int) error {
	if err := q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED); err != nil {
		return err
	}
	for range n {
		if err := q.PostConfigureMkey(m.Mk, m.Tmpl, m.SGEs[:]); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
	}
	return nil
}
