package device

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mlx5gen/mlx5gen/runtime/internal/prmcmd"
)

// DEVX (mlx5dv_devx_obj_create(3)) passes device commands, laid out as
// the device's programming reference (PRM) says, from the program to the
// device: the API checks the buffers' sizes, the backend runs the bytes
// (libmlx5 on hardware, the simulator's command table on "sim:"), and a
// command the device failed comes back as a *DevxError with the status
// and syndrome of its output.
//
// Goroutines: DevxGeneralCmd, DevxObj.Query and DevxObj.Modify may run
// concurrently with each other and with any other call, from any
// goroutine (the kernel serialises commands as the device needs);
// DevxObjCreate and DevxObj.Close take the context's lock like every
// Create and Close. A Close of the object or of the context waits for a
// command in progress on it to return.

// ErrNoDevx: the backend, or the device as it was opened, offers no DEVX
// (the verbs backend when the kernel refused MLX5DV_CONTEXT_FLAGS_DEVX).
// It matches errors.ErrUnsupported.
var ErrNoDevx = fmt.Errorf("no DEVX: %w", errors.ErrUnsupported)

// DevxBackend is an optional interface of a BackendContext: a device
// that runs DEVX commands. in and out are the caller's buffers, checked
// by the API (at least the 16-byte headers, at most 65535 bytes); the
// backend writes the device's output into out. A command the device
// failed returns an error wrapping syscall.EREMOTEIO with the status and
// syndrome in out; any other error leaves out as it was (the kernel
// copies the output back only then). The calls may come from several
// goroutines at once.
type DevxBackend interface {
	DevxGeneralCmd(in, out []byte) error
	DevxObjCreate(in, out []byte) (BackendDevxObj, error)
}

// BackendDevxObj is an object a DEVX create command made.
type BackendDevxObj interface {
	Query(in, out []byte) error
	Modify(in, out []byte) error
	// Close destroys the object with the destroy command matching its
	// create command (mlx5dv_devx_obj_destroy).
	Close() error
}

// PDNumberer is an optional interface of a BackendPD: the PD's number
// (mlx5dv_init_obj's mlx5dv_pd.pdn), which DEVX commands name.
type PDNumberer interface {
	PDN() (uint32, error)
}

// checkDevxBufs refuses buffers the kernel or libibverbs would refuse:
// shorter than the command and status headers, or longer than an ioctl
// attribute holds.
func checkDevxBufs(in, out []byte) error {
	for _, b := range []struct {
		name string
		buf  []byte
		min  int
		what string
	}{
		{"in", in, prmcmd.InHeaderLen, "the command header (opcode, uid, op_mod)"},
		{"out", out, prmcmd.OutHeaderLen, "the status header (status, syndrome)"},
	} {
		switch n := len(b.buf); {
		case n < b.min:
			return cfgErr(b.name, fmt.Sprintf("of %d bytes", n), "holds at least the %d bytes of %s (the kernel's minimum)", b.min, b.what)
		case n > prmcmd.MaxLen:
			return cfgErr(b.name, fmt.Sprintf("of %d bytes", n), "holds at most %d bytes: libibverbs passes it as an ioctl attribute, whose length is 16 bits", prmcmd.MaxLen)
		}
	}
	return nil
}

// devxResult is the outcome of command op: a *DevxError when the device
// failed it (the backend says EREMOTEIO, or out's status is not OK), the
// backend's error otherwise.
func devxResult(op string, in, out []byte, err error) error {
	st := DevxStatus(prmcmd.Status(out))
	if errors.Is(err, syscall.EREMOTEIO) || (err == nil && st != DevxStatusOK) {
		return &DevxError{Op: op, Opcode: prmcmd.Opcode(in), Status: st, Syndrome: prmcmd.Syndrome(out), Err: err}
	}
	if err != nil {
		return fmt.Errorf("opcode %#x: %w", prmcmd.Opcode(in), err)
	}
	return nil
}

// devx returns the context's DEVX backend, or ErrNoDevx.
func (c *Context) devx(op string) (DevxBackend, error) {
	if d, ok := c.b.(DevxBackend); ok {
		return d, nil
	}
	return nil, fmt.Errorf("device: %s: %q: %w", op, c.name, ErrNoDevx)
}

// DevxGeneralCmd runs a device command tied to no object
// (mlx5dv_devx_general_cmd): a capability query, say. in holds the
// command in the device's layout (its opcode in the first two bytes, big
// endian), out receives the device's output. A command the device failed
// returns a *DevxError with the status and syndrome of out.
func (c *Context) DevxGeneralCmd(in, out []byte) error {
	const op = "DevxGeneralCmd"
	if err := checkDevxBufs(in, out); err != nil {
		return fmt.Errorf("device: %s: %w", op, err)
	}
	d, err := c.devx(op)
	if err != nil {
		return err
	}
	if err := c.root.enter(op); err != nil {
		return err
	}
	defer c.root.leave()
	if err := devxResult(op, in, out, d.DevxGeneralCmd(in, out)); err != nil {
		return fmt.Errorf("device: %s: %w", op, err)
	}
	return nil
}

// DevxObj is a device object a DEVX create command made.
type DevxObj struct {
	b      BackendDevxObj
	n      *node
	c      *Context
	opcode uint16 // of the create command
}

// DevxObjCreate runs a command that creates a device object
// (mlx5dv_devx_obj_create) and returns it; out receives the device's
// output, which holds the new object's id in the layout the command's
// PRM section gives. The object lives until DevxObj.Close or the
// context's Close, which destroy it (newest object first). The API does
// not know which objects a command names (a PD's number, a umem's id):
// close a DEVX object before the objects it uses.
func (c *Context) DevxObjCreate(in, out []byte) (*DevxObj, error) {
	const op = "DevxObjCreate"
	if err := checkDevxBufs(in, out); err != nil {
		return nil, fmt.Errorf("device: %s: %w", op, err)
	}
	d, err := c.devx(op)
	if err != nil {
		return nil, err
	}
	o := &DevxObj{c: c, opcode: prmcmd.Opcode(in)}
	n, err := c.create(op, []*node{c.root}, func() (string, func() error, error) {
		b, err := d.DevxObjCreate(in, out)
		if err = devxResult(op, in, out, err); err != nil {
			if b != nil {
				b.Close()
			}
			return "", nil, err
		}
		if b == nil {
			return "", nil, fmt.Errorf("opcode %#x: the backend returned no object and no error", o.opcode)
		}
		o.b = b
		return fmt.Sprintf("DEVX object (opcode %#x)", o.opcode), b.Close, nil
	})
	if err != nil {
		return nil, err
	}
	o.n = n
	return o, nil
}

// Opcode returns the opcode of the command that created the object.
func (o *DevxObj) Opcode() uint16 { return o.opcode }

// Query runs a query command of the object (mlx5dv_devx_obj_query).
func (o *DevxObj) Query(in, out []byte) error { return o.run("DevxObj.Query", in, out, o.b.Query) }

// Modify runs a modify command of the object (mlx5dv_devx_obj_modify).
func (o *DevxObj) Modify(in, out []byte) error { return o.run("DevxObj.Modify", in, out, o.b.Modify) }

func (o *DevxObj) run(op string, in, out []byte, call func(in, out []byte) error) error {
	if err := checkDevxBufs(in, out); err != nil {
		return fmt.Errorf("device: %s: %w", op, err)
	}
	if err := o.n.enter(op); err != nil {
		return err
	}
	defer o.n.leave()
	if err := devxResult(op, in, out, call(in, out)); err != nil {
		return fmt.Errorf("device: %s: %s: %w", o.n.what, op, err)
	}
	return nil
}

// Close destroys the object (mlx5dv_devx_obj_destroy). It is idempotent.
func (o *DevxObj) Close() error {
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	return closeNode(o.n)
}

// PDN returns the PD's number as the device knows it (mlx5dv_init_obj's
// mlx5dv_pd.pdn): the pd field of the DEVX commands that create objects
// on it (an mkey, say).
func (pd *PD) PDN() (uint32, error) {
	if err := pd.n.enter("PDN"); err != nil {
		return 0, err
	}
	defer pd.n.leave()
	p, ok := pd.b.(PDNumberer)
	if !ok {
		return 0, fmt.Errorf("device: PD: PDN: the backend of %q does not report PD numbers: %w", pd.c.name, errors.ErrUnsupported)
	}
	n, err := p.PDN()
	if err != nil {
		return 0, fmt.Errorf("device: PD: PDN: %w", err)
	}
	return n, nil
}
