package prmcmd

import (
	"bytes"
	"testing"
)

// TestHeaders: the fields sit where mlx5_ifc.h puts them (opcode at bit
// 0x00, op_mod at 0x30; status at 0x00, syndrome at 0x20), big-endian.
func TestHeaders(t *testing.T) {
	in := make([]byte, InHeaderLen)
	PutOpcode(in, 0x0a01, 0x0203)
	if want := []byte{0x0a, 0x01, 0, 0, 0, 0, 0x02, 0x03, 0, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(in, want) {
		t.Fatalf("in % x, want % x", in, want)
	}
	if Opcode(in) != 0x0a01 || OpMod(in) != 0x0203 {
		t.Fatalf("opcode %#x op_mod %#x", Opcode(in), OpMod(in))
	}
	out := make([]byte, OutHeaderLen)
	SetStatus(out, 0x03, 0x11223344)
	if want := []byte{0x03, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(out, want) {
		t.Fatalf("out % x, want % x", out, want)
	}
	if Status(out) != 0x03 || Syndrome(out) != 0x11223344 {
		t.Fatalf("status %#x syndrome %#x", Status(out), Syndrome(out))
	}
}
