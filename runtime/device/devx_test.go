package device_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// devxFake is the fake backend with DEVX: every command runs run.
type devxFake struct{}

type devxFakeCtx struct {
	device.BackendContext
	run func(in, out []byte) error
}

var devxRun func(in, out []byte) error // what the next opened devxfake context runs

func init() { device.Register("devxfake:", devxFake{}) }

func (devxFake) Open(name string) (device.BackendContext, error) {
	c, err := fake{}.Open(name)
	if err != nil {
		return nil, err
	}
	return &devxFakeCtx{BackendContext: c, run: devxRun}, nil
}
func (devxFake) List() ([]device.Info, error) { return nil, device.ErrNoDevice }

func (c *devxFakeCtx) DevxGeneralCmd(in, out []byte) error { return c.run(in, out) }
func (c *devxFakeCtx) DevxObjCreate(in, out []byte) (device.BackendDevxObj, error) {
	return nil, c.run(in, out)
}

func devxIn(opcode uint16) []byte {
	return append([]byte{byte(opcode >> 8), byte(opcode)}, make([]byte, 14)...)
}

// TestDevxResults: how a backend's answer becomes the API's: EREMOTEIO
// with the output's status and syndrome, or a failed status with no
// error, is a *DevxError; another error passes through naming the
// opcode; a create that returns neither object nor error is an error.
func TestDevxResults(t *testing.T) {
	remote := fmt.Errorf("backend: %w", syscall.EREMOTEIO)
	for _, tc := range []struct {
		name    string
		status  byte
		err     error
		devx    bool
		wantErr error
	}{
		{"ok", 0, nil, false, nil},
		{"status only", 0x03, nil, true, syscall.EREMOTEIO},
		{"eremoteio", 0x0f, remote, true, remote},
		{"other errno", 0, syscall.EPERM, false, syscall.EPERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devxRun = func(in, out []byte) error {
				out[0] = tc.status
				copy(out[4:8], []byte{0xde, 0xad, 0xbe, 0xef})
				return tc.err
			}
			c, err := device.Open("devxfake:" + tc.name)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.DevxGeneralCmd(devxIn(0x123), make([]byte, 16))
			var de *device.DevxError
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			case tc.devx != errors.As(err, &de):
				t.Fatalf("%v: DevxError %v, want %v", err, de != nil, tc.devx)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("%v does not match %v", err, tc.wantErr)
			case err != nil && !strings.Contains(err.Error(), "opcode 0x123"):
				t.Fatalf("%v does not name the opcode", err)
			}
			if tc.devx && (de.Opcode != 0x123 || de.Status != device.DevxStatus(tc.status) || de.Syndrome != 0xdeadbeef || de.Err != tc.err ||
				!errors.Is(err, syscall.EREMOTEIO) || !strings.Contains(err.Error(), "DevxGeneralCmd") || !strings.Contains(err.Error(), de.Status.String())) {
				t.Fatalf("%v: %+v", err, de)
			}
		})
	}
	devxRun = func(in, out []byte) error { return nil }
	c, err := device.Open("devxfake:noobj")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if o, err := c.DevxObjCreate(devxIn(0xa00), make([]byte, 16)); o != nil || err == nil || !strings.Contains(err.Error(), "no object") {
		t.Fatalf("a create without object: %v, %v", o, err)
	}
}

// TestNoDevx: a backend without DEVX refuses the commands with
// ErrNoDevx (an errors.ErrUnsupported), and PD numbers with
// errors.ErrUnsupported; bad buffers are refused first, naming them.
func TestNoDevx(t *testing.T) {
	c, err := device.Open("fake:nodevx")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.DevxGeneralCmd(devxIn(0x80d), make([]byte, 16)); !errors.Is(err, device.ErrNoDevx) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("DevxGeneralCmd: %v, want ErrNoDevx", err)
	}
	if _, err := c.DevxObjCreate(devxIn(0xa00), make([]byte, 16)); !errors.Is(err, device.ErrNoDevx) {
		t.Errorf("DevxObjCreate: %v, want ErrNoDevx", err)
	}
	var ce *device.ConfigError
	if err := c.DevxGeneralCmd(devxIn(0x80d), make([]byte, 8)); !errors.As(err, &ce) || ce.Field != "out" {
		t.Errorf("an 8-byte out: %v, want a ConfigError of out", err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pd.PDN(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("PDN: %v, want errors.ErrUnsupported", err)
	}
}

// TestDevxStatusNames: statuses print their PRM names; others their value.
func TestDevxStatusNames(t *testing.T) {
	for s, want := range map[device.DevxStatus]string{
		device.DevxStatusOK:          "OK",
		device.DevxStatusBadOp:       "BAD_OP_ERR (bad operation)",
		device.DevxStatusBadParam:    "BAD_PARAM_ERR (bad parameter)",
		device.DevxStatusBadInputLen: "BAD_INP_LEN_ERR (bad input length)",
		0x42:                         "status 0x42",
	} {
		if got := s.String(); got != want {
			t.Errorf("%#x prints %q, want %q", uint8(s), got, want)
		}
	}
}
