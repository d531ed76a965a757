package device

import (
	"fmt"
	"syscall"
)

// DevxStatus is the status a device command's output starts with (PRM
// "command status"); 0 is success. The values and names are the Linux
// kernel's (include/linux/mlx5/device.h, enum MLX5_CMD_STAT_*).
type DevxStatus uint8

// The PRM command statuses.
const (
	DevxStatusOK               DevxStatus = 0x00
	DevxStatusInternal         DevxStatus = 0x01 // INT_ERR
	DevxStatusBadOp            DevxStatus = 0x02 // BAD_OP_ERR: an opcode (or op_mod) the device does not know
	DevxStatusBadParam         DevxStatus = 0x03 // BAD_PARAM_ERR: a field out of range, a reserved field not 0
	DevxStatusBadSysState      DevxStatus = 0x04 // BAD_SYS_STATE_ERR
	DevxStatusBadResource      DevxStatus = 0x05 // BAD_RES_ERR: the command names no such object
	DevxStatusResourceBusy     DevxStatus = 0x06 // RES_BUSY
	DevxStatusNotReady         DevxStatus = 0x07 // NOT_READY
	DevxStatusLimit            DevxStatus = 0x08 // LIM_ERR: a limit of the device exceeded
	DevxStatusBadResourceState DevxStatus = 0x09 // BAD_RES_STATE_ERR
	DevxStatusBadIndex         DevxStatus = 0x0a // IX_ERR
	DevxStatusNoResources      DevxStatus = 0x0f // NO_RES_ERR: out of objects of the kind
	DevxStatusBadQPState       DevxStatus = 0x10 // BAD_QP_STATE_ERR
	DevxStatusBadPacket        DevxStatus = 0x30 // BAD_PKT_ERR
	DevxStatusBadSizeOutsCQEs  DevxStatus = 0x40 // BAD_SIZE_OUTS_CQES_ERR
	DevxStatusBadInputLen      DevxStatus = 0x50 // BAD_INP_LEN_ERR: the input is shorter than the command's layout
	DevxStatusBadOutputLen     DevxStatus = 0x51 // BAD_OUTP_LEN_ERR: the output is shorter than the command's layout
)

var devxStatusNames = map[DevxStatus]string{
	DevxStatusOK:               "OK",
	DevxStatusInternal:         "INT_ERR (internal error)",
	DevxStatusBadOp:            "BAD_OP_ERR (bad operation)",
	DevxStatusBadParam:         "BAD_PARAM_ERR (bad parameter)",
	DevxStatusBadSysState:      "BAD_SYS_STATE_ERR (bad system state)",
	DevxStatusBadResource:      "BAD_RES_ERR (bad resource)",
	DevxStatusResourceBusy:     "RES_BUSY (resource busy)",
	DevxStatusNotReady:         "NOT_READY (not ready)",
	DevxStatusLimit:            "LIM_ERR (limits exceeded)",
	DevxStatusBadResourceState: "BAD_RES_STATE_ERR (bad resource state)",
	DevxStatusBadIndex:         "IX_ERR (bad index)",
	DevxStatusNoResources:      "NO_RES_ERR (no resources)",
	DevxStatusBadQPState:       "BAD_QP_STATE_ERR (bad QP state)",
	DevxStatusBadPacket:        "BAD_PKT_ERR (bad packet)",
	DevxStatusBadSizeOutsCQEs:  "BAD_SIZE_OUTS_CQES_ERR (too many outstanding CQEs)",
	DevxStatusBadInputLen:      "BAD_INP_LEN_ERR (bad input length)",
	DevxStatusBadOutputLen:     "BAD_OUTP_LEN_ERR (bad output length)",
}

// String returns the status's PRM name and meaning, or its value.
func (s DevxStatus) String() string {
	if n, ok := devxStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status %#02x", uint8(s))
}

// DevxError is a device command the device failed: the status and
// syndrome it wrote into the command's output (mlx5dv_devx_obj_create(3):
// the call fails with EREMOTEIO, and outbox.status and outbox.syndrome
// say why). errors.Is(err, syscall.EREMOTEIO) holds. Its text names the
// opcode, the status and the syndrome; the error wrapping it names Op.
type DevxError struct {
	Op       string // the API call: "DevxGeneralCmd", "DevxObjCreate" (also the commands of CreateMkey and CreateDEK), "DevxObj.Query", "DevxObj.Modify", "HCACaps"
	Opcode   uint16 // the command's opcode
	Status   DevxStatus
	Syndrome uint32 // the device's detail of the failure (firmware-specific)
	Err      error  // the backend's error, wrapping syscall.EREMOTEIO (nil: the output alone said so)
}

func (e *DevxError) Error() string {
	return fmt.Sprintf("opcode %#x: the device failed the command: %v, syndrome %#08x", e.Opcode, e.Status, e.Syndrome)
}

// Unwrap returns the backend's error, or syscall.EREMOTEIO when the
// backend reported success with a failed status.
func (e *DevxError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return syscall.EREMOTEIO
}
