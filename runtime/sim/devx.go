package sim

import (
	"fmt"
	"sync"
	"syscall"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/internal/prmcmd"
)

// The simulated device runs DEVX commands (device.DevxBackend) from a
// table keyed by opcode (devxCommands): each entry says which DEVX call
// carries it and runs it on the command's bytes. The commands the engine
// needs (CREATE_MKEY, CREATE_PSV, the DEK general object) plug in there,
// with the generated PRM decoders; until then the table holds NOP.
//
// What a call goes through, in the order hardware does it:
//   - the kernel's checks: buffers shorter than the 16-byte headers, or
//     longer than an ioctl attribute holds, fail with EINVAL; so does an
//     opcode of the table sent through the wrong call (a create command
//     through mlx5dv_devx_general_cmd), as the kernel refuses opcodes
//     outside its list for each call (drivers/infiniband/hw/mlx5/devx.c:
//     devx_is_general_cmd, devx_is_obj_create_cmd, ...). Then out is left
//     as it was [ledger: devx-kernel-checks].
//   - the device: out is cleared (the kernel gives the device a zeroed
//     output, uverbs_zalloc, and copies all of it back), the command
//     runs, and its status and syndrome are written to out's header. A
//     status other than OK fails the call with EREMOTEIO
//     [ledger: devx-out-cleared].

// devxKind is the DEVX call that carries a command.
type devxKind uint8

const (
	devxGeneral devxKind = iota + 1 // mlx5dv_devx_general_cmd
	devxCreate                      // mlx5dv_devx_obj_create
	devxQuery                       // mlx5dv_devx_obj_query
	devxModify                      // mlx5dv_devx_obj_modify
)

func (k devxKind) String() string {
	return [...]string{"?", "mlx5dv_devx_general_cmd", "mlx5dv_devx_obj_create", "mlx5dv_devx_obj_query", "mlx5dv_devx_obj_modify"}[k]
}

// The simulator's syndromes. A device's syndromes are firmware-internal
// values no public source lists, so these only mark the simulator's
// reason, in a range of their own (0x5e00000x) [ledger: devx-syndromes].
const (
	SyndromeUnknownOpcode uint32 = 0x5e000001 // BAD_OP_ERR: the table has no such opcode
	SyndromeShortInput    uint32 = 0x5e000002 // BAD_INP_LEN_ERR: in is shorter than the command's layout
	SyndromeShortOutput   uint32 = 0x5e000003 // BAD_OUTP_LEN_ERR: out is shorter than the command's layout
)

// devxReply is a command's outcome: its status (OK: success) and syndrome.
type devxReply struct {
	status   device.DevxStatus
	syndrome uint32
}

// devxCall is one command the device runs.
type devxCall struct {
	c       *simCtx
	in, out []byte
	obj     *devxObj // query and modify: the handle's object
}

// needLen fails a command whose buffers are shorter than its layout
// (inLen and outLen bytes) with the PRM's length statuses
// [ledger: devx-short-layout].
func (x *devxCall) needLen(inLen, outLen int) (devxReply, bool) {
	switch {
	case len(x.in) < inLen:
		return devxReply{device.DevxStatusBadInputLen, SyndromeShortInput}, false
	case len(x.out) < outLen:
		return devxReply{device.DevxStatusBadOutputLen, SyndromeShortOutput}, false
	}
	return devxReply{}, true
}

// devxObj is an object a create command made.
type devxObj struct {
	opcode uint16 // of its create command
	// destroy runs the destroy command the kernel derives from the create
	// command (mlx5dv_devx_obj_destroy takes no bytes).
	destroy func() devxReply
	// state is for the commands that keep what an object is in it.
	state any
}

// devxCommand is an entry of the command table.
type devxCommand struct {
	name string
	kind devxKind
	// run executes the command; a create command returns its object
	// when the reply is OK.
	run func(x *devxCall) (*devxObj, devxReply)
}

// Opcodes of the table (the Linux kernel's include/linux/mlx5/mlx5_ifc.h,
// MLX5_CMD_OP_*).
const opNOP uint16 = 0x80d

// devxCommands is the device's command table. It is read without a lock:
// entries are added only before any command runs (at init, or by a test
// before it opens its device).
var devxCommands = map[uint16]devxCommand{
	// NOP is one of the general commands the kernel passes; the device
	// answers it with an OK status and nothing else (nop_in and nop_out
	// are the bare headers).
	opNOP: {name: "NOP", kind: devxGeneral, run: func(x *devxCall) (*devxObj, devxReply) {
		r, _ := x.needLen(prmcmd.InHeaderLen, prmcmd.OutHeaderLen)
		return nil, r
	}},
}

// devxMu runs the commands of every simulated device one at a time, so
// that a command's handler needs no lock of its own for the state it
// keeps (a handler that touches the engine still takes the fabric's lock).
var devxMu sync.Mutex

// devxRun runs the command in on behalf of call kind.
func (c *simCtx) devxRun(kind devxKind, in, out []byte, obj *devxObj) (*devxObj, error) {
	if len(in) < prmcmd.InHeaderLen || len(out) < prmcmd.OutHeaderLen || len(in) > prmcmd.MaxLen || len(out) > prmcmd.MaxLen {
		return nil, fmt.Errorf("sim: %v: in of %d bytes, out of %d: the kernel takes %d to %d and %d to %d: %w",
			kind, len(in), len(out), prmcmd.InHeaderLen, prmcmd.MaxLen, prmcmd.OutHeaderLen, prmcmd.MaxLen, syscall.EINVAL)
	}
	op := prmcmd.Opcode(in)
	cmd, known := devxCommands[op]
	if known && cmd.kind != kind {
		return nil, fmt.Errorf("sim: %v: opcode %#x (%s) goes through %v; the kernel refuses it here: %w",
			kind, op, cmd.name, cmd.kind, syscall.EINVAL)
	}
	devxMu.Lock()
	defer devxMu.Unlock()
	clear(out)
	var made *devxObj
	// An opcode the table lacks fails as the device fails one it does not
	// know; on hardware the kernel would refuse one outside its lists
	// with EINVAL first [ledger: devx-unknown-opcode].
	r := devxReply{device.DevxStatusBadOp, SyndromeUnknownOpcode}
	if known {
		made, r = cmd.run(&devxCall{c: c, in: in, out: out, obj: obj})
	}
	prmcmd.SetStatus(out, uint8(r.status), r.syndrome)
	if r.status != device.DevxStatusOK {
		if made != nil && made.destroy != nil {
			made.destroy()
		}
		return nil, fmt.Errorf("sim: %v: opcode %#x: %v: %w", kind, op, r.status, syscall.EREMOTEIO)
	}
	if kind == devxCreate && made == nil {
		return nil, fmt.Errorf("sim: %v: opcode %#x (%s) made no object", kind, op, cmd.name)
	}
	return made, nil
}

// DevxGeneralCmd implements device.DevxBackend.
func (c *simCtx) DevxGeneralCmd(in, out []byte) error {
	_, err := c.devxRun(devxGeneral, in, out, nil)
	return err
}

// DevxObjCreate implements device.DevxBackend.
func (c *simCtx) DevxObjCreate(in, out []byte) (device.BackendDevxObj, error) {
	o, err := c.devxRun(devxCreate, in, out, nil)
	if err != nil {
		return nil, err
	}
	o.opcode = prmcmd.Opcode(in)
	return &simDevxObj{c: c, o: o}, nil
}

// simDevxObj is the handle of an object a create command made.
type simDevxObj struct {
	c *simCtx
	o *devxObj
}

func (h *simDevxObj) Query(in, out []byte) error {
	_, err := h.c.devxRun(devxQuery, in, out, h.o)
	return err
}

func (h *simDevxObj) Modify(in, out []byte) error {
	_, err := h.c.devxRun(devxModify, in, out, h.o)
	return err
}

// Close runs the object's destroy command. A failed destroy reports the
// status; the kernel turns it into an errno, which EIO stands for here
// [ledger: devx-destroy-errno].
func (h *simDevxObj) Close() error {
	if h.o.destroy == nil {
		return nil
	}
	devxMu.Lock()
	defer devxMu.Unlock()
	if r := h.o.destroy(); r.status != device.DevxStatusOK {
		return fmt.Errorf("sim: mlx5dv_devx_obj_destroy: object of opcode %#x: %v, syndrome %#08x: %w", h.o.opcode, r.status, r.syndrome, syscall.EIO)
	}
	return nil
}

// PDN implements device.PDNumberer: the engine's number of the PD, which
// the engine's commands name.
func (p *simPD) PDN() (uint32, error) { return p.pdn, nil }
