package wqedecode

import (
	"encoding/binary"
	"fmt"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// umr adds the body of a UMR WQE after its control segment u (whose bytes
// are ub): the mkey context, the translation (KLMs, or a repeat block and
// its entries) and the BSFs.
func (s *splitter) umr(u *model.Segment, ub []byte) error {
	if s.off == len(s.wqe) {
		return nil
	}
	if err := s.fixed("mlx5_wqe_mkey_context_seg"); err != nil {
		return err
	}
	klm, err := need(u, ub, "klm_octowords")
	if err != nil {
		return err
	}
	end := s.off + 16*int(klm)
	if end > len(s.wqe) {
		return fmt.Errorf("split: %d KLM octowords at byte %d run past the %d bytes ds gives", klm, s.off, len(s.wqe))
	}
	if end-s.off >= 16 && binary.BigEndian.Uint32(s.wqe[s.off+4:]) == model.RepeatBlockOp {
		if err := s.fixed("mlx5_wqe_umr_repeat_block_seg"); err != nil {
			return err
		}
		last := s.segs[len(s.segs)-1]
		n, err := need(s.d.segs[last.Name], last.Raw, "num_ent")
		if err != nil {
			return err
		}
		for i := 0; i < int(n) && s.off < end; i++ {
			if err := s.fixed("mlx5_wqe_umr_repeat_ent_seg"); err != nil {
				return err
			}
		}
	} else {
		k := s.d.segs["mlx5_wqe_umr_klm_seg"]
		if k == nil {
			return fmt.Errorf("split: at byte %d: the model has no segment mlx5_wqe_umr_klm_seg", s.off)
		}
		for s.off+k.Size <= end {
			if err := s.fixed(k.CName); err != nil {
				return err
			}
		}
	}
	s.rest("padding", end)
	return s.bsfs(u, ub)
}

// bsfs adds the BSFs a UMR control segment announces.
func (s *splitter) bsfs(u *model.Segment, ub []byte) error {
	flags, err := need(u, ub, "flags")
	if err != nil {
		return err
	}
	c := s.d.consts["MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET"]
	if c == nil {
		return fmt.Errorf("split: the model has no constant MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET")
	}
	if flags&c.Value.Bits != 0 {
		return nil // the union holds translation_offset, not bsf_octowords
	}
	octo, err := need(u, ub, "bsf_octowords")
	if err != nil {
		return err
	}
	bsf := 16 * int(octo)
	if bsf%64 != 0 {
		return fmt.Errorf("split: %d BSF octowords is not a whole number of 64-byte BSFs", octo)
	}
	for i := 0; i < bsf; i += 64 {
		name := "mlx5_bsf"
		if s.off < len(s.wqe) && s.wqe[s.off]&0x3f == 1 {
			name = "mlx5_crypto_bsf" // BSF type 1
		}
		if err := s.fixed(name); err != nil {
			return err
		}
	}
	return nil
}

// need reads the field or part name of segment sg from b, or says the
// model lacks it.
func need(sg *model.Segment, b []byte, name string) (uint64, error) {
	v, ok := intAt(sg, b, name)
	if !ok {
		return 0, fmt.Errorf("split: segment %s has no field or part %s", sg.CName, name)
	}
	return v, nil
}
