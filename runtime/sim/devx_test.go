package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/internal/prmcmd"
)

// Opcodes the tests add to the command table: no PRM command has them.
const (
	opTestCreate     uint16 = 0x7f01 // in: header, 16 more bytes; out: header, object id at 8
	opTestQuery      uint16 = 0x7f02 // in: header, object id at 8; out: header, value at 8, 24 bytes
	opTestModify     uint16 = 0x7f03 // in: header, object id at 8, value at 12
	opTestFailCreate uint16 = 0x7f04 // makes an object, then fails with LIM_ERR
)

// testObjs counts what the test commands did.
type testObjs struct {
	next, destroyed int
}

// addTestCommands adds the test commands to the table until the test ends.
func addTestCommands(t *testing.T) *testObjs {
	t.Helper()
	n := &testObjs{}
	create := func(fail bool) func(x *devxCall) (*devxObj, devxReply) {
		return func(x *devxCall) (*devxObj, devxReply) {
			if r, ok := x.needLen(32, 16); !ok {
				return nil, r
			}
			n.next++
			id := uint32(n.next)
			binary.BigEndian.PutUint32(x.out[8:], id)
			o := &devxObj{state: &[2]uint32{id, 0}, destroy: func() devxReply { n.destroyed++; return devxReply{} }}
			if fail {
				return o, devxReply{device.DevxStatusLimit, 0x1234}
			}
			return o, devxReply{}
		}
	}
	// obj checks that the command names the handle's object.
	obj := func(x *devxCall) (*[2]uint32, devxReply) {
		if r, ok := x.needLen(16, 16); !ok {
			return nil, r
		}
		s := x.obj.state.(*[2]uint32)
		if binary.BigEndian.Uint32(x.in[8:]) != s[0] {
			return nil, devxReply{device.DevxStatusBadResource, 0x77}
		}
		return s, devxReply{}
	}
	cmds := map[uint16]devxCommand{
		opTestCreate:     {name: "TEST_CREATE", kind: devxCreate, run: create(false)},
		opTestFailCreate: {name: "TEST_FAIL_CREATE", kind: devxCreate, run: create(true)},
		opTestQuery: {name: "TEST_QUERY", kind: devxQuery, run: func(x *devxCall) (*devxObj, devxReply) {
			if r, ok := x.needLen(16, 24); !ok {
				return nil, r
			}
			s, r := obj(x)
			if s != nil {
				binary.BigEndian.PutUint32(x.out[8:], s[1])
			}
			return nil, r
		}},
		opTestModify: {name: "TEST_MODIFY", kind: devxModify, run: func(x *devxCall) (*devxObj, devxReply) {
			s, r := obj(x)
			if s != nil {
				s[1] = binary.BigEndian.Uint32(x.in[12:])
			}
			return nil, r
		}},
	}
	for op, c := range cmds {
		if _, dup := devxCommands[op]; dup {
			t.Fatalf("opcode %#x is in the table already", op)
		}
		devxCommands[op] = c
	}
	t.Cleanup(func() {
		for op := range cmds {
			delete(devxCommands, op)
		}
	})
	return n
}

// cmd returns a command of n bytes with opcode and the words after the
// header.
func cmd(n int, opcode uint16, words ...uint32) []byte {
	b := make([]byte, n)
	prmcmd.PutOpcode(b, opcode, 0)
	for i, w := range words {
		binary.BigEndian.PutUint32(b[8+4*i:], w)
	}
	return b
}

// filled returns n bytes of 0xee: what a command must overwrite, or leave.
func filled(n int) []byte { return bytes.Repeat([]byte{0xee}, n) }

func openDevx(t *testing.T, name string) *device.Context {
	t.Helper()
	c, err := device.Open("sim:" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantDevxErr checks a device failure: a *DevxError of op with the
// status and syndrome, matching EREMOTEIO, and out's header saying the
// same.
func wantDevxErr(t *testing.T, err error, out []byte, opcode uint16, st device.DevxStatus, syn uint32) {
	t.Helper()
	var de *device.DevxError
	if !errors.As(err, &de) || de.Opcode != opcode || de.Status != st || de.Syndrome != syn || !errors.Is(err, syscall.EREMOTEIO) {
		t.Fatalf("error %v, want a DevxError of opcode %#x, %v, syndrome %#x, matching EREMOTEIO", err, opcode, st, syn)
	}
	if statusOf(out) != st || prmcmd.Syndrome(out) != syn {
		t.Fatalf("out's header % x, want status %#x syndrome %#x", out[:8], uint8(st), syn)
	}
}

// statusOf reads out's status.
func statusOf(out []byte) device.DevxStatus { return device.DevxStatus(prmcmd.Status(out)) }

// TestDevxGeneralCmd: NOP succeeds and clears out; an opcode the device
// does not know fails with BAD_OP_ERR and its syndrome, in out and in the
// error; a create command through the general call is the kernel's
// EINVAL, with out untouched.
func TestDevxGeneralCmd(t *testing.T) {
	c := openDevx(t, "devx-general")
	out := filled(32)
	if err := c.DevxGeneralCmd(cmd(16, opNOP), out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, make([]byte, 32)) {
		t.Fatalf("NOP's out % x, want zeros (status OK, the rest cleared)", out)
	}
	out = filled(16)
	err := c.DevxGeneralCmd(cmd(16, 0x7abc), out)
	wantDevxErr(t, err, out, 0x7abc, device.DevxStatusBadOp, SyndromeUnknownOpcode)
	want := []byte{0x02, 0, 0, 0, 0x5e, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(out, want) {
		t.Fatalf("out % x, want % x", out, want)
	}

	addTestCommands(t)
	out = filled(16)
	err = c.DevxGeneralCmd(cmd(32, opTestCreate), out)
	var de *device.DevxError
	if !errors.Is(err, syscall.EINVAL) || errors.As(err, &de) || !bytes.Equal(out, filled(16)) {
		t.Fatalf("a create command through DevxGeneralCmd: %v, out % x; want EINVAL and out untouched", err, out)
	}
}

// TestDevxBuffers: buffers shorter than the headers or longer than 65535
// bytes are refused by the API with a ConfigError naming them, before the
// device sees them (out untouched); the backend refuses them on its own
// with EINVAL, never a panic. A command's own layout is the device's
// check: BAD_INP_LEN_ERR and BAD_OUTP_LEN_ERR.
func TestDevxBuffers(t *testing.T) {
	c := openDevx(t, "devx-buffers")
	for _, tc := range []struct {
		in, out []byte
		field   string
	}{
		{nil, filled(16), "in"},
		{[]byte{}, filled(16), "in"},
		{cmd(15, opNOP), filled(16), "in"},
		{cmd(1<<16, opNOP), filled(16), "in"},
		{cmd(16, opNOP), nil, "out"},
		{cmd(16, opNOP), filled(15), "out"},
		{cmd(16, opNOP), filled(1 << 16), "out"},
	} {
		before := bytes.Clone(tc.out)
		for name, call := range map[string]func() error{
			"DevxGeneralCmd": func() error { return c.DevxGeneralCmd(tc.in, tc.out) },
			"DevxObjCreate":  func() error { _, err := c.DevxObjCreate(tc.in, tc.out); return err },
		} {
			err := call()
			var ce *device.ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, syscall.EINVAL) {
				t.Errorf("%s(in %d bytes, out %d): %v, want a ConfigError of %s", name, len(tc.in), len(tc.out), err, tc.field)
			}
			if !bytes.Equal(tc.out, before) {
				t.Errorf("%s(in %d bytes, out %d) wrote out", name, len(tc.in), len(tc.out))
			}
		}
		b, _ := backend{}.Open("sim:devx-buffers")
		if err := b.(*simCtx).DevxGeneralCmd(tc.in, tc.out); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("backend DevxGeneralCmd(in %d bytes, out %d): %v, want EINVAL", len(tc.in), len(tc.out), err)
		}
	}
	addTestCommands(t)
	out := filled(16)
	_, err := c.DevxObjCreate(cmd(16, opTestCreate), out)
	wantDevxErr(t, err, out, opTestCreate, device.DevxStatusBadInputLen, SyndromeShortInput)
	out = filled(16)
	o, err := c.DevxObjCreate(cmd(32, opTestCreate), out)
	if err != nil {
		t.Fatalf("a create command with its whole layout: %v", err)
	}
	out = filled(16)
	err = o.Query(cmd(16, opTestQuery, 1), out)
	wantDevxErr(t, err, out, opTestQuery, device.DevxStatusBadOutputLen, SyndromeShortOutput)
}
