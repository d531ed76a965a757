package model

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Camel("mlx5_wqe_ctrl_seg"), "Mlx5WqeCtrlSeg"},
		{Camel("key.dc_key"), "KeyDcKey"},
		{FuncName("WRMkeyConfigure"), "FnWRMkeyConfigure"},
		{RuleVarName("sig.crc.seed"), "errSigCrcSeed"},
		{ParamName("type"), "type_"},
		{ParamName("qp_ex"), "qpEx"},
		{ParamName("lkey"), "lkey"},
		{ParamName("invalidate_rkey"), "invalidateRKey"},
		{ParamName("dest_lkey"), "destLKey"},
		{GoCase("lkey"), "LKey"},
		{GoCase("byte_count_lkey"), "ByteCountLKey"},
		{GoCase("bind_mw.rkey"), "BindMWRKey"},
		{UnionName(24), "union24"},
		{(&Func{Name: "mlx5dv_wr_set_dc_addr", GoName: "FnWRSetDCAddr"}).Validator(), "ValidateArgsWRSetDCAddr"},
		{(&Segment{GoName: "WQECtrlSeg"}).SizeName(), "WQECtrlSegSize"},
		{(&Enum{GoName: "AccessFlags"}).NamesVar(), "accessFlagsNames"},
		{GoCase("dci_stream_channel_id"), "DCIStreamChannelID"},
		{GoCase("qpn_ds"), "QPNDS"},
		{GoCase("key.dc_key"), "KeyDCKey"},
		{GoCase("mlx5_cqe64"), "MLX5CQE64"},
		{GoCase("l3_ok"), "L3Ok"},
		{MemberName("sig.t10dif.bg_type"), "SigT10DIFBGType"},
		{Setter(WireName("QpnDs")), "SetQpnDsBE"},
		{ChainName("in_batch"), "ChainInBatch"},
		{ChainName("dc_stream_id"), "ChainDCStreamID"},
		{GroupName("dc_addr"), "GroupDCAddr"},
		{QPTypeName("XRC_SEND"), "QPXRCSend"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	n := NewNamer([]string{"mlx5dv_qp_create_send_ops_flags", "ibv_qp_create_send_ops_flags", "ibv_sge",
		"mlx5_wqe_ctrl_seg", "mlx5dv_qp_init_attr", "ibv_qp_init_attr", "mlx5_wc_x", "ibv_wc_x", "ibv_qp_type"})
	for c, want := range map[string]string{
		"mlx5_wqe_ctrl_seg":               "WQECtrlSeg",
		"mlx5dv_qp_init_attr":             "QPInitAttr",
		"ibv_qp_init_attr":                "IBVQPInitAttr",
		"mlx5dv_qp_create_send_ops_flags": "QPCreateSendOpsFlags",
		"ibv_qp_create_send_ops_flags":    "IBVQPCreateSendOpsFlags",
		"ibv_sge":                         "SGE",
		"ibv_mw_bind_info":                "MWBindInfo",
		"ibv_wc_x":                        "IBVWCX", // mlx5_ is stronger than ibv_
		"mlx5_wc_x":                       "WCX",
		"ibv_qp_type":                     "IBVQPType", // an override
		"mlx5_cqe64":                      "CQE64",
		"ib_uverbs_x":                     "IBUverbsX", // no prefix to drop
	} {
		if got := n.Name(c); got != want {
			t.Errorf("Name(%s) = %s, want %s", c, got, want)
		}
	}
	// Functions are named the same way (FuncName adds Fn).
	fns := NewNamer([]string{"ibv_wr_set_sge", "mlx5dv_create_qp", "ibv_create_qp", "mlx5dv_qp_ex_from_ibv_qp_ex"})
	for c, want := range map[string]string{
		"ibv_wr_set_sge":              "WRSetSGE",
		"mlx5dv_create_qp":            "CreateQP",
		"ibv_create_qp":               "IBVCreateQP",
		"mlx5dv_qp_ex_from_ibv_qp_ex": "QPExFromIBVQPEx",
	} {
		if got := fns.Name(c); got != want {
			t.Errorf("Name(%s) = %s, want %s", c, got, want)
		}
	}
	if r := Reserved(); !slices.Contains(r, "QPRC") || !slices.Contains(r, "RuleError") || slices.Contains(r, "Rules") {
		t.Errorf("Reserved lacks the QP types or the rule error, or has a table of the tables package: %v", r)
	}
}
