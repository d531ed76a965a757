package sim

import (
	"encoding/binary"
	"errors"
	"sync"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestDevxObjLife: a create command's object is queried and modified
// through its handle with the bytes of each command, is destroyed once by
// Close (idempotent) or by the context's Close, and refuses commands once
// closed; a command of another kind through the handle is the kernel's
// EINVAL; a create the device fails returns no object and destroys what
// the command made.
func TestDevxObjLife(t *testing.T) {
	n := addTestCommands(t)
	c := openDevx(t, "devx-life")
	out := filled(16)
	o, err := c.DevxObjCreate(cmd(32, opTestCreate), out)
	if err != nil {
		t.Fatal(err)
	}
	id := binary.BigEndian.Uint32(out[8:])
	if statusOf(out) != device.DevxStatusOK || id != 1 || o.Opcode() != opTestCreate {
		t.Fatalf("create: out % x, opcode %#x", out, o.Opcode())
	}
	if err := o.Modify(cmd(16, opTestModify, id, 0xc0ffee), filled(16)); err != nil {
		t.Fatal(err)
	}
	out = filled(24)
	if err := o.Query(cmd(16, opTestQuery, id), out); err != nil || binary.BigEndian.Uint32(out[8:]) != 0xc0ffee {
		t.Fatalf("query after modify: %v, out % x", err, out)
	}
	out = filled(24)
	err = o.Query(cmd(16, opTestQuery, id+1), out)
	wantDevxErr(t, err, out, opTestQuery, device.DevxStatusBadResource, 0x77)
	if err := o.Query(cmd(16, opTestModify, id, 1), filled(16)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("a modify command through Query: %v, want EINVAL", err)
	}
	out = filled(16)
	err = o.Modify(cmd(16, 0x7fff), out)
	wantDevxErr(t, err, out, 0x7fff, device.DevxStatusBadOp, SyndromeUnknownOpcode)

	if err := o.Close(); err != nil || n.destroyed != 1 {
		t.Fatalf("Close: %v, %d destroyed", err, n.destroyed)
	}
	if err := o.Close(); err != nil || n.destroyed != 1 {
		t.Fatalf("second Close: %v, %d destroyed", err, n.destroyed)
	}
	for name, err := range map[string]error{
		"Query":  o.Query(cmd(16, opTestQuery, id), filled(24)),
		"Modify": o.Modify(cmd(16, opTestModify, id, 1), filled(16)),
	} {
		if !errors.Is(err, device.ErrClosed) {
			t.Errorf("%s of a closed object: %v, want ErrClosed", name, err)
		}
	}

	out = filled(16)
	f, err := c.DevxObjCreate(cmd(32, opTestFailCreate), out)
	wantDevxErr(t, err, out, opTestFailCreate, device.DevxStatusLimit, 0x1234)
	if f != nil || n.destroyed != 2 {
		t.Fatalf("failed create: object %v, %d destroyed (want the command's object destroyed)", f, n.destroyed)
	}

	if _, err := c.DevxObjCreate(cmd(32, opTestCreate), filled(16)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil || n.destroyed != 3 {
		t.Fatalf("context Close: %v, %d destroyed, want the open object destroyed", err, n.destroyed)
	}
}

// TestDevxClosed: a closed context refuses DEVX commands and PD numbers
// with ErrClosed, and a closed PD its number.
func TestDevxClosed(t *testing.T) {
	addTestCommands(t)
	c := openDevx(t, "devx-closed")
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	pd2, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	pd2.Close()
	if _, err := pd2.PDN(); !errors.Is(err, device.ErrClosed) {
		t.Errorf("PDN of a closed PD: %v, want ErrClosed", err)
	}
	c.Close()
	out := filled(16)
	if err := c.DevxGeneralCmd(cmd(16, opNOP), out); !errors.Is(err, device.ErrClosed) {
		t.Errorf("DevxGeneralCmd on a closed context: %v", err)
	}
	if _, err := c.DevxObjCreate(cmd(32, opTestCreate), out); !errors.Is(err, device.ErrClosed) {
		t.Errorf("DevxObjCreate on a closed context: %v", err)
	}
	if _, err := pd.PDN(); !errors.Is(err, device.ErrClosed) {
		t.Errorf("PDN on a closed context: %v", err)
	}
	if statusOf(out) != 0xee {
		t.Errorf("a refused command wrote out: % x", out)
	}
}

// TestPDN: a PD's number is the engine's: the engine registers memory on
// it while the PD is open, and knows it no more once it is closed; two
// PDs have two numbers.
func TestPDN(t *testing.T) {
	c := openDevx(t, "devx-pdn")
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	pd2, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	defer pd2.Close()
	n, err := pd.PDN()
	n2, err2 := pd2.PDN()
	if err != nil || err2 != nil || n == n2 {
		t.Fatalf("PDN %d (%v), %d (%v)", n, err, n2, err2)
	}
	d := Fabric().Device("devx-pdn")
	buf := make([]byte, 64)
	key, err := d.RegMR(n, buf, 0x1000, mlx.IBV_ACCESS_LOCAL_WRITE)
	if err != nil {
		t.Fatalf("the engine does not know PD %d: %v", n, err)
	}
	d.DeregMR(key)
	pd.Close()
	if _, err := d.RegMR(n, buf, 0x1000, mlx.IBV_ACCESS_LOCAL_WRITE); err == nil {
		t.Fatalf("the engine still knows PD %d after its Close", n)
	}
}

// TestDevxConcurrent (run with -race): general commands, queries and
// modifies run from several goroutines at once, and a Close of the
// context in their midst makes the late ones fail with ErrClosed, never
// with a race or a panic.
func TestDevxConcurrent(t *testing.T) {
	n := addTestCommands(t)
	c := openDevx(t, "devx-race")
	out := filled(16)
	o, err := c.DevxObjCreate(cmd(32, opTestCreate), out)
	if err != nil {
		t.Fatal(err)
	}
	id := binary.BigEndian.Uint32(out[8:])
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				var err error
				switch (g + i) % 3 {
				case 0:
					err = c.DevxGeneralCmd(cmd(16, opNOP), filled(16))
				case 1:
					err = o.Query(cmd(16, opTestQuery, id), filled(24))
				default:
					err = o.Modify(cmd(16, opTestModify, id, uint32(i)), filled(16))
				}
				if err != nil && !errors.Is(err, device.ErrClosed) {
					errs <- err
					return
				}
			}
		}()
	}
	c.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n.destroyed != 1 {
		t.Errorf("%d destroyed, want 1", n.destroyed)
	}
}
