package mlx5dv_test

import (
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

func TestFlagsString(t *testing.T) {
	for _, c := range []struct {
		v    mlx5dv.AccessFlags
		want string
	}{
		{0, "0"},
		{mlx5dv.IBV_ACCESS_LOCAL_WRITE, "IBV_ACCESS_LOCAL_WRITE"},
		{mlx5dv.IBV_ACCESS_LOCAL_WRITE | mlx5dv.IBV_ACCESS_REMOTE_READ, "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_READ"},
		{mlx5dv.IBV_ACCESS_REMOTE_WRITE | 0x40000000, "IBV_ACCESS_REMOTE_WRITE|0x40000000"},
		{0x40000000, "0x40000000"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#x: got %q, want %q", uint32(c.v), got, c.want)
		}
	}
	// Masks that overlap and alias: an exact match wins, else members in
	// declaration order.
	if got := mlx5dv.MLX5DV_SIG_MASK_CRC32C.String(); got != "MLX5DV_SIG_MASK_T10DIF_GUARD|MLX5DV_SIG_MASK_T10DIF_APPTAG" && got != "MLX5DV_SIG_MASK_CRC32" {
		t.Errorf("sig mask 0xf0: %q", got)
	}
	if got := mlx5dv.MLX5DV_SIG_MASK_CRC64_XP10.String(); got != "MLX5DV_SIG_MASK_CRC64_XP10" {
		t.Errorf("sig mask 0xff: %q", got)
	}
}

func TestValueString(t *testing.T) {
	if got := mlx5dv.MLX5_OPCODE_RDMA_WRITE.String(); got != "MLX5_OPCODE_RDMA_WRITE" {
		t.Errorf("got %q", got)
	}
	if got := mlx5dv.Opcode(0x77).String(); got != "Opcode(119)" {
		t.Errorf("got %q", got)
	}
	if got := mlx5dv.IBV_QPT_RC.String(); got != "IBV_QPT_RC" {
		t.Errorf("got %q", got)
	}
}

func TestSegmentString(t *testing.T) {
	var c mlx5dv.WQECtrlSeg
	c.SetOpcode(mlx5dv.MLX5_OPCODE_RDMA_WRITE)
	c.SetWQEIndex(0x1234)
	c.SetQPN(0xabcdef)
	c.SetDS(3)
	c.SetFmCeSe(mlx5dv.MLX5_WQE_CTRL_CQ_UPDATE | mlx5dv.MLX5_WQE_CTRL_SOLICITED)
	want := "mlx5_wqe_ctrl_seg{opmod_idx_opcode: 0x123408 (opcode: MLX5_OPCODE_RDMA_WRITE, wqe_index: 0x1234, opmod: 0x0), " +
		"qpn_ds: 0xabcdef03 (ds: 0x3, qpn: 0xabcdef), signature: 0x0, dci_stream_channel_id: 0x0, " +
		"fm_ce_se: MLX5_WQE_CTRL_CQ_UPDATE|MLX5_WQE_CTRL_SOLICITED (se: 0x1, ce: 0x2, fence: 0x0), imm: 0x0}"
	if got := c.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var av mlx5dv.WQEAV
	av.SetRgid([16]byte{0xfe, 0x80})
	if !strings.Contains(av.String(), "rgid: fe800000000000000000000000000000") {
		t.Errorf("bytes field: %s", av.String())
	}
	var bsf mlx5dv.BSF
	bsf.Basic().SetRawDataSize(0xffffffff)
	if !strings.Contains(bsf.String(), "basic: mlx5_bsf_basic{") || !strings.Contains(bsf.String(), "raw_data_size: 0xffffffff") {
		t.Errorf("nested: %s", bsf.String())
	}
}

// Parts and their fields stay consistent: setting a part changes only its
// bits.
func TestParts(t *testing.T) {
	var c mlx5dv.WQECtrlSeg
	c.SetOpmodIdxOpcode(0xffffffff)
	c.SetWQEIndex(0)
	if got := c.OpmodIdxOpcode(); got != 0xff0000ff {
		t.Errorf("after SetWqeIndex(0): %#x", got)
	}
	c.SetOpcode(0x1ff) // bits above the part are dropped
	if got := c.OpmodIdxOpcode(); got != 0xff0000ff {
		t.Errorf("after SetOpcode(0x1ff): %#x", got)
	}
	var m mlx5dv.WQEMkeyContextSeg
	m.SetReserved3(3, 0x01020304)
	if got := m.Reserved3(3); got != 0x01020304 || m[48] != 1 || m[51] != 4 {
		t.Errorf("array element: %#x % x", got, m[36:52])
	}
	defer func() {
		if recover() == nil {
			t.Error("element 4 of a 4-element array did not panic")
		}
	}()
	m.Reserved3(4)
}

func TestWireOrder(t *testing.T) {
	var d mlx5dv.WQEDataSeg
	d.SetLKeyBE(mlx5dv.ToBE32(0x11223344))
	if d[4] != 0x11 || d[7] != 0x44 || d.LKey() != 0x11223344 || d.LKeyBE().Value() != 0x11223344 {
		t.Errorf("lkey: % x", d[:])
	}
	if mlx5dv.ToBE64(0x0102030405060708).Value() != 0x0102030405060708 || mlx5dv.ToBE16(0x0102).Value() != 0x0102 {
		t.Error("BE round trip")
	}
}

func TestSplitErrors(t *testing.T) {
	ctrl := func(opcode mlx5dv.Opcode, ds uint8, n int) []byte {
		b := make([]byte, n)
		c := (*mlx5dv.WQECtrlSeg)(b[:16])
		c.SetOpcode(opcode)
		c.SetDS(ds)
		return b
	}
	for _, c := range []struct {
		name string
		wqe  []byte
		want string
	}{
		{"short", make([]byte, 8), "shorter than a control segment"},
		{"ds zero", ctrl(mlx5dv.MLX5_OPCODE_SEND, 0, 64), "ds 0"},
		{"ds too big", ctrl(mlx5dv.MLX5_OPCODE_SEND, 5, 64), "ds 5 (80 bytes) does not fit the 64-byte WQE"},
		{"raddr missing", ctrl(mlx5dv.MLX5_OPCODE_RDMA_WRITE, 1, 64), "mlx5_wqe_raddr_seg (16 bytes) at byte 16 runs past the 16 bytes ds gives"},
		{"nop", ctrl(mlx5dv.MLX5_OPCODE_NOP, 1, 64), ""},
		{"umr cut", ctrl(mlx5dv.MLX5_OPCODE_UMR, 2, 64), "mlx5_wqe_umr_ctrl_seg (48 bytes) at byte 16 runs past"},
	} {
		_, err := mlx5dv.Split(c.wqe, mlx5dv.SplitOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
	// An inline segment whose length runs past ds.
	b := ctrl(mlx5dv.MLX5_OPCODE_SEND, 2, 64)
	(*mlx5dv.WQEInlDataSeg)(b[16:20]).SetByteCount(mlx5dv.MLX5_INLINE_SEG | 40)
	if _, err := mlx5dv.Split(b, mlx5dv.SplitOptions{}); err == nil || !strings.Contains(err.Error(), "inline data of 40 bytes") {
		t.Errorf("inline overrun: %v", err)
	}
}

// FuzzSplit: any bytes give segments or an error, never a panic, and the
// segments always tile the WQE from its start.
func FuzzSplit(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.bytes, v.dci)
	}
	f.Fuzz(func(t *testing.T, wqe []byte, dci bool) {
		segs, err := mlx5dv.Split(wqe, mlx5dv.SplitOptions{DCI: dci})
		off := 0
		for _, s := range segs {
			if s.Offset != off || s.View == nil {
				t.Fatalf("segment %s at %d (want %d), view %v", s.Name, s.Offset, off, s.View)
			}
			_ = s.View.String()
			off += len(s.Raw)
		}
		if err == nil && len(segs) > 0 && off != 16*int((*mlx5dv.WQECtrlSeg)(wqe[:16]).DS()) {
			t.Fatalf("segments cover %d bytes of %d", off, 16*int((*mlx5dv.WQECtrlSeg)(wqe[:16]).DS()))
		}
	})
}
