package sq

import (
	"testing"
	"unsafe"
)

// TestSlotTail: setSlot with slotTail's word writes the Slot the
// composite literal writes, for values that fill every field's bits, so
// that the word's layout matches the struct on this machine's byte order.
func TestSlotTail(t *testing.T) {
	for _, c := range []Slot{
		{WRID: 0x0102030405060708, WQEHead: 0x11223344, WRData: 0x5566, Opcode: 0x77},
		{WRID: ^uint64(0), WQEHead: ^uint32(0), WRData: ^uint16(0), Opcode: 0xff},
		{WQEHead: 1, Opcode: 8},
	} {
		var got Slot
		*(*[16]byte)(unsafe.Pointer(&got)) = [16]byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0xaa} // the pad byte is written too
		setSlot(&got, c.WRID, slotTail(c.WQEHead, c.WRData, c.Opcode))
		if got != c {
			t.Errorf("setSlot wrote %+v, want %+v", got, c)
		}
	}
}
