// Package prmcmd reads and writes the headers every mlx5 device command
// (PRM "mailbox") starts with, which DEVX passes through unchanged: the
// input's opcode and op_mod, the output's status and syndrome. It is a
// small hand-written stand-in for the generated PRM layouts (issue 25,
// spec/hw): when those land, these functions become calls of the
// generated general_obj_in_cmd_hdr / general_obj_out_cmd_hdr decoders and
// their callers (runtime/device, runtime/sim) do not change.
//
// Layouts (bit offsets as PRM numbers them, big-endian; facts from the
// Linux kernel's include/linux/mlx5/mlx5_ifc.h, struct
// mlx5_ifc_general_obj_in_cmd_hdr_bits and _out_cmd_hdr_bits):
//
//	in:  opcode [0x00, 16 bits]  uid [0x10, 16]  op_mod [0x30, 16] ... (16 bytes)
//	out: status [0x00, 8 bits]   syndrome [0x20, 32] ...               (16 bytes)
package prmcmd

import "encoding/binary"

// InHeaderLen and OutHeaderLen are the sizes of the command header and
// of the status header: the least a command's input and output hold (the
// kernel refuses shorter DEVX buffers: drivers/infiniband/hw/mlx5/devx.c,
// UVERBS_ATTR_MIN_SIZE).
const (
	InHeaderLen  = 16
	OutHeaderLen = 16
)

// MaxLen is the largest buffer libibverbs passes to the kernel: an ioctl
// attribute's length is 16 bits (rdma-core libibverbs/cmd_ioctl.h,
// fill_attr_in; a longer one fails the call with EINVAL).
const MaxLen = 1<<16 - 1

// Opcode returns the command's opcode; in holds at least InHeaderLen bytes.
func Opcode(in []byte) uint16 { return binary.BigEndian.Uint16(in[0:2]) }

// OpMod returns the command's op_mod.
func OpMod(in []byte) uint16 { return binary.BigEndian.Uint16(in[6:8]) }

// Status returns the status byte of a command's output; out holds at
// least OutHeaderLen bytes.
func Status(out []byte) uint8 { return out[0] }

// Syndrome returns the syndrome of a command's output: the device's
// detail of a failure.
func Syndrome(out []byte) uint32 { return binary.BigEndian.Uint32(out[4:8]) }

// SetStatus writes status and syndrome into out's header.
func SetStatus(out []byte, status uint8, syndrome uint32) {
	out[0] = status
	binary.BigEndian.PutUint32(out[4:8], syndrome)
}

// PutOpcode writes a command header with opcode and opMod into in.
func PutOpcode(in []byte, opcode, opMod uint16) {
	binary.BigEndian.PutUint16(in[0:2], opcode)
	binary.BigEndian.PutUint16(in[6:8], opMod)
}
