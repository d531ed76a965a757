//go:build !(armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64)

package sq

// The shifts of a Slot's WQEHead, WRData and Opcode in the word of its
// bytes 8..15 (the pad byte 0), on a little-endian machine: setSlot stores a
// Slot as two words.
const (
	slotHeadShift = 0
	slotDataShift = 32
	slotOpShift   = 48
)

// slotTail is that word.
func slotTail(head uint32, wrData uint16, opcode uint8) uint64 {
	return uint64(head)<<slotHeadShift | uint64(wrData)<<slotDataShift | uint64(opcode)<<slotOpShift
}
