package model

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Camel("mlx5_wqe_ctrl_seg"), "Mlx5WqeCtrlSeg"},
		{Camel("key.dc_key"), "KeyDcKey"},
		{FuncName("mlx5dv_wr_mkey_configure"), "FnMlx5dvWrMkeyConfigure"},
		{RuleVarName("sig.crc.seed"), "errSigCrcSeed"},
		{ParamName("type"), "type_"},
		{ParamName("qp_ex"), "qpEx"},
		{UnionName(24), "union24"},
		{(&Func{Name: "mlx5dv_wr_set_dc_addr"}).Validator(), "ValidateArgsMlx5dvWrSetDcAddr"},
		{(&Segment{GoName: "Mlx5WqeCtrlSeg"}).SizeName(), "Mlx5WqeCtrlSegSize"},
		{(&Enum{GoName: "IbvAccessFlags"}).NamesVar(), "ibvAccessFlagsNames"},
		{Setter(WireName("QpnDs")), "SetQpnDsBE"},
		{ChainName("in_batch"), "ChainInBatch"},
		{GroupName("dc_addr"), "GroupDcAddr"},
		{QPTypeName("XRC_SEND"), "QPXRCSend"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	if r := Reserved(); !slices.Contains(r, "KindBuilder") || !slices.Contains(r, "RuleError") {
		t.Errorf("Reserved lacks the kinds or the rule error: %v", r)
	}
}
